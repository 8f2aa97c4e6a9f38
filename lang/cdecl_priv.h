/* Private to the C-definitions parser (cdefs*.c, cdecl_*.c). */
#ifndef GPUX_CDECL_PRIV_H
#define GPUX_CDECL_PRIV_H

#include "arena.h"
#include "cdefs.h"

enum ctok_kind { CT_EOF, CT_IDENT, CT_NUM, CT_STR, CT_PUNCT };

struct ctok {
	enum ctok_kind kind;
	const char *text;
	size_t len;
	struct span span;
};

/* Text being read: the part itself, or a macro's body inside it. */
struct cp_source {
	const char *pos, *end;
	const struct macro *macro;
};
#define CP_MAX_NEST 32

struct cparser {
	struct arena *arena;
	struct diags *diags;
	struct cdefs *cdefs;
	struct cp_source src[CP_MAX_NEST];
	int nsrc;
	struct ctok tok;
	int line, col, base_line;
	bool bol;            /* at the start of a line: '#' is a directive */
	bool in_header;      /* in cpp output from a header: lenient */
	bool bad;            /* the declaration at hand failed */
	struct span use_span; /* where the macro being expanded was named */
};

/* A name of the C definitions: a typedef, a record (by "struct tag"),
 * or an enumerator. */
enum cname_kind { CN_TYPEDEF, CN_RECORD, CN_ENUM_CONST };
struct ctype_name {
	struct ctype_name *next;
	enum cname_kind kind;
	const char *name;
	struct type type;   /* CN_TYPEDEF */
	struct record *rec; /* CN_RECORD */
	int64_t value;      /* CN_ENUM_CONST */
};

void cp_next(struct cparser *p);
bool cp_is(const struct cparser *p, const char *s);
bool cp_accept(struct cparser *p, const char *s);
const char *cp_text(struct cparser *p);
void cp_error(struct cparser *p, const char *fmt, const char *arg);
void cp_skip_group(struct cparser *p);
int64_t cp_const_expr(struct cparser *p);

/* The script's C parts through the C preprocessor (cdefs_cpp.c): its
 * output, malloc'd, *outlen bytes; NULL with diagnostics. */
char *cdefs_run_cpp(struct program *prog, struct diags *d, size_t *outlen);

/* Read declarations until the text ends. */
void cdecl_parse_all(struct cparser *p);

struct ctype_name *cdefs_name_add(struct cdefs *c, struct arena *a,
				  enum cname_kind kind, const char *name);
struct ctype_name *cdefs_name_find(const struct cdefs *c, enum cname_kind kind,
				   const char *name);

#endif
