/* The C side of a script, as bpftrace reads it: struct, union and enum
 * definitions before the probes, #define macros, and #include'd headers.
 * The lexer collects the pieces; cdefs_build() lays out the types that
 * casts, '->', '*', '[]' and sizeof() then use. */
#ifndef GPUX_CDEFS_H
#define GPUX_CDEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"
#include "source.h"
#include "types.h"

struct program;

/* #define NAME BODY. Object-like macros expand in probes token by token;
 * a function-like one is kept so that its name is not expanded. */
struct macro {
	struct macro *next;
	const char *name;
	const char *body;
	bool function_like;
};

/* One piece of C text before the probes: a directive line or a
 * struct/union/enum definition, with where it starts in the script. */
struct cpart {
	struct cpart *next;
	const char *text;
	size_t len;
	struct span span;
	bool directive;
};

struct ctype_name; /* typedefs, records and enum constants by name */

struct cdefs {
	struct program *prog;     /* whose definitions these are */
	struct macro *macros;
	struct cpart *parts, *parts_tail;
	bool includes;            /* an #include or a conditional: needs cpp */
	struct ctype_name *names; /* filled by cdefs_build() */
	struct macro *header_macros; /* #defines of included headers */
	int eval_depth;           /* header macros evaluating header macros */
};

/* The program's C definitions, created on first use. */
struct cdefs *cdefs_of(struct program *prog);
const struct macro *cdefs_macro(const struct cdefs *c, const char *name);

/* "#define NAME BODY" (len bytes, continuation lines joined): its
 * macro, or NULL when it names none. *is_define tells a #define from
 * the other directives. */
struct macro *cdefs_parse_define(struct arena *a, const char *line, size_t len,
				 bool *is_define);

/* Parse and lay out prog's C parts; 0, or -1 with diagnostics. */
int cdefs_build(struct program *prog, struct diags *d);
/* More definitions (C text gpux made: a uprobe's records from DWARF),
 * after the script's; what they get wrong goes to d. */
void cdefs_add(struct program *prog, struct diags *d, const char *text);

/* The record "struct TAG" / "union TAG" of prog's definitions: the one
 * defined or named so far, else a new one, named and not yet defined. */
struct record *cdefs_record_ref(struct program *prog, bool is_union, const char *tag);
/* Whether r is defined, defining it first as the running kernel's
 * record of its name where the script does not (struct program's
 * kernel_types); r belongs to prog's definitions. */
bool cdefs_complete(struct program *prog, const struct record *r);

/* "struct NAME" / "union NAME" (kw: "struct" or "union"), or NULL. */
const struct record *cdefs_record(const struct cdefs *c, const char *kw,
				  const char *tag);
/* A typedef's type (script, header or the built-in integer names). */
bool cdefs_typedef(const struct cdefs *c, const char *name, struct type *out);
/* An enumerator's value, or a header macro's that is an integer
 * constant expression. */
bool cdefs_enum_value(const struct cdefs *c, const char *name, int64_t *out);

#endif
