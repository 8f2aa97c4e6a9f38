/* The abstract syntax tree. Every node carries its source span; semantic
 * passes fill in type, uniformity and resolution fields in place. */
#ifndef GPUX_AST_H
#define GPUX_AST_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "catalog.h"
#include "source.h"
#include "types.h"

enum node_kind {
	/* top level */
	N_PROBE,
	N_ATTACH,
	/* statements */
	N_EXPR_STMT,
	N_ASSIGN,
	N_IF,
	N_UNROLL,
	N_FOR,
	N_WHILE,
	N_RETURN,
	N_BLOCK,
	/* expressions */
	N_INT,
	N_STR,
	N_VAR,        /* $name */
	N_POSITIONAL, /* $1, $2 ... and $# (index 0 means $#) */
	N_MAP,        /* @name[keys], name "" for the anonymous @ */
	N_IDENT,      /* builtin, context field or decision constant */
	N_FIELD,      /* expr.name */
	N_BINOP,
	N_UNOP,
	N_TERNARY,
	N_CAST,
	N_CALL,
	N_INCDEC, /* ++x, x++, --x, x-- */
	N_TUPLE,  /* (a, b, ...) */
	N_SIZEOF, /* sizeof(type) or sizeof(expr): an N_INT after sema */
};

/* Operators use their token spelling's first character where it is
 * unique, and named values for the two-character ones. */
enum op {
	OP_ADD = '+', OP_SUB = '-', OP_MUL = '*', OP_DIV = '/', OP_MOD = '%',
	OP_BAND = '&', OP_BOR = '|', OP_BXOR = '^', OP_LT = '<', OP_GT = '>',
	OP_NOT = '!', OP_BNOT = '~', OP_ASSIGN = '=',
	OP_EQ = 256, OP_NE, OP_LE, OP_GE, OP_LAND, OP_LOR, OP_SHL, OP_SHR,
	OP_NEG, OP_PLUS, OP_INC, OP_DEC,
	OP_DEREF, /* *p */
	OP_INDEX, /* a[i], a binop */
};

/* What an N_IDENT turned out to be. */
enum ident_kind { ID_UNRESOLVED, ID_FIELD, ID_BUILTIN, ID_DECISION, ID_HINT };

struct node;

struct attach {
	const char *text;     /* as written: "gdev:kernel_entry:*gemm*" */
	const char *provider; /* "gdev" */
	const char *event;    /* second part or NULL */
	const char *filter;   /* third part or NULL */
	int nparts;           /* how many ':'-separated parts were written */
	/* resolution */
	const struct provider *prov;
	const struct event **events; /* events matched (globs expand) */
	int nevents;
	uint64_t interval_ns; /* interval:, profile: period */
	uint64_t interval_hz; /* the same given as a rate (unit hz), else 0 */
	uint64_t perf_count;  /* software:, hardware:: every N events */
	/* args.NAME: a tracepoint's fields from tracefs, or a uprobe's
	 * function's parameters from DWARF with the argument register each
	 * arrives in (arg_regs, -1: not in one); args_why says why a uprobe
	 * has none */
	const struct field *args;
	int nargs;
	const int *arg_regs;
	const char *args_why;
	bool args_dwarf; /* args come from DWARF, read once a probe uses them */
	/* uprobe, kprobe: the function of "FUNC+OFFSET" (NULL for an
	 * address), the offset into it or the address, and the symbol as
	 * bpftrace names the probe ("readline+8", "4660": decimal); a
	 * kprobe's kernel module, or NULL */
	const char *func;
	uint64_t offset;
	bool addr;
	const char *sym;
	const char *module;
	/* func and probe name a function found only when attaching (a
	 * glob, an address, a library's name): read from the attachment's
	 * cookie (codegen/host_syms.c) */
	bool by_cookie;
	/* usdt: the provider and probe globs ("*" for a provider not
	 * written); the target is event */
	const char *usdt_provider;
	const char *usdt_probe;
	/* watchpoint: ADDRESS (wp_func NULL) or FUNC+argN of the -p/-c
	 * program, watched wp_len bytes for wp_mode ("w", "rw" or "x", in
	 * that letter order) */
	const char *wp_func;
	int wp_arg;
	uint64_t wp_addr;
	unsigned wp_len;
	const char *wp_mode;
	bool wp_async; /* set once FUNC is called, the process running on */
};

struct probe {
	struct node *attach; /* list of N_ATTACH */
	struct node *pred;   /* may be NULL */
	struct node *body;   /* N_BLOCK */
	/* resolution */
	enum place place;
	bool policy; /* a driver hook that may return a decision */
	int index;   /* order in the program */
	/* A live session's detached probe: its maps are laid out as before
	 * (so the session carries them on), its code is not made. */
	bool maps_only;
	/* Made by gpux for -f perfetto (cli/timeline_probes.c): its printf
	 * records feed the timeline and print nothing; 'kernel' in them is
	 * the kernel's name-table id. */
	bool timeline;
};

struct node {
	enum node_kind kind;
	struct span span;
	struct node *next; /* next sibling in a list */
	int depth;         /* expression nesting, bounded by the parser */
	/* filled by semantic passes */
	struct type type;
	enum unif unif;
	union {
		struct probe probe;
		struct attach attach;
		struct { struct node *expr; } expr_stmt;
		struct { int op; struct node *target, *value;
			 struct span op_span; /* the '=' (or '+=', ...) */ } assign;
		struct { struct node *cond, *then, *els; } if_;
		struct { struct node *count, *body; } unroll;
		struct { struct node *var, *lo, *hi, *body; } for_;
		struct { struct node *cond, *body; } while_;
		struct { struct node *value; } ret;
		struct { struct node *stmts; } block;
		struct { uint64_t value; } num;
		struct {
			const char *s;
			size_t len;
			bool of_str; /* str($N) made it: a str() buffer to sizeof */
		} str;
		struct { const char *name; } var;
		struct { int index; } positional;
		struct { const char *name; struct node *keys; int nkeys;
			 struct map_info *info; } map;
		struct { const char *name; enum ident_kind kind;
			 const struct field *field;
			 const struct builtin *builtin;
			 enum decision decision;
			 unsigned hint; /* ID_HINT: catalog hint_info.value */ } ident;
		struct { struct node *base; const char *name;
			 bool arrow; /* written base->name */
			 int index;  /* base.N of a tuple: N, else -1 */ } field;
		struct { struct node *elems; int n; } tuple;
		struct { int op; struct node *lhs, *rhs; } binop;
		struct { int op; struct node *operand; } unop;
		struct { struct node *cond, *then, *els; } ternary;
		struct { const char *name; struct type to;
			 struct node *operand;
			 int stars; /* to a pointer: name is its base type */
			 struct span type_span; } cast;
		struct { struct node *expr; /* or a type: */
			 const char *tname; int stars;
			 struct span type_span; } size_of;
		struct { const char *name; struct node *args; int nargs;
			 const void *fn; } call;
		struct { int op; bool prefix; struct node *target; } incdec;
	} u;
};

/* One map of the program, shared by every use of its name. */
struct map_info {
	struct map_info *next;
	const char *name; /* "" for @ */
	struct node *first_use;
	int nkeys;          /* -1 until known */
	struct type *keys;  /* nkeys entries */
	struct type value;  /* TY_NONE until known */
	unsigned places;    /* PLACE_* bits of the probes using it */
	bool written;       /* assigned somewhere (else: read of undefined) */
	bool warned;        /* 'never assigned' reported once */
};

/* What struct program's dwarf_args gives: fields typed as args.NAME
 * reads them, the argument register of each (-1: not in one), and for
 * a pointer to a record, the record ("struct rec") and how many
 * pointers deep (records[i] NULL: none); the records' C definitions
 * and each one's size in DWARF, which the layout must match. */
struct dwarf_args {
	struct field *fields;
	int *regs;
	const char **records;
	int *stars;
	size_t n;
	const char *defs;
	const char **def_names;
	unsigned *def_sizes;
	int ndefs;
};

struct program;
/* The running kernel's types (its BTF), for the records a script names
 * without defining them, as bpftrace takes them. Set by the driver,
 * which reads files (cli/kernel_types.c); its state is the program's
 * kernel_state, released by release when the program is freed. */
struct kernel_types {
	/* whether the kernel's types can be read: bpftrace's
	 * BPFTRACE_HAVE_BTF, for the script's #ifdefs */
	bool (*available)(struct program *prog);
	/* define r (named, not yet defined) as the kernel defines the
	 * record of that name; false where it has none */
	bool (*complete)(struct program *prog, struct record *r);
	/* an enumerator of the kernel's enums (TCP_FIN_WAIT1) */
	bool (*enum_value)(struct program *prog, const char *name, int64_t *out);
	/* why the types could not be read, once tried; else NULL */
	const char *(*why)(struct program *prog);
	void (*release)(struct program *prog);
};

struct program {
	struct arena arena;
	struct source src;
	struct node *probes; /* list of N_PROBE */
	struct map_info *maps;
	char **positional; /* script arguments, $1.. */
	int npositional;
	/* how the command line gives them, for a hint (NULL: after the
	 * script, gpux script.gpx ARG...) */
	const char *positional_how;
	/* -I DIR and --include FILE: where #include looks, what is
	 * included before the script (the C preprocessor's -I, -include) */
	char **include_dirs, **include_files;
	int ninclude_dirs, ninclude_files;
	bool unsafe;        /* --unsafe: system() is allowed */
	struct cdefs *cdefs; /* the C definitions before the probes, or NULL */
	bool text_only;      /* no headers read, no preprocessor run (fuzzing) */
	/* A uprobe's function's parameters, from the DWARF of target (a
	 * path or library name, found as an attach point's is, with
	 * target_pid's libraries), into the arena. 0, or -1 with why (the
	 * file has no DWARF for it). Set by the driver, which reads files
	 * (cli/uprobe_args.c); NULL: none. */
	int (*dwarf_args)(struct arena *a, const char *target, int target_pid, const char *func,
			  struct dwarf_args *out, const char **why);
	/* The C definition of record rec ("struct foo") from the DWARF of
	 * target (found as above), into the arena: NULL where it has none.
	 * For a uprobe's casts to records the script does not define. */
	const char *(*dwarf_record)(struct arena *a, const char *target, int target_pid,
				    const char *rec);
	/* The size of data object sym of target (found as above), for
	 * uaddr()'s type: 0, or -1 where it cannot be read. NULL: none. */
	int (*object_size)(const char *target, int target_pid, const char *sym, uint64_t *size);
	int target_pid;
	const struct kernel_types *kernel_types; /* NULL: none */
	void *kernel_state;
};

struct node *ast_new(struct arena *a, enum node_kind kind, struct span sp);
/* Append b to list a (either may be NULL); returns the head. */
struct node *ast_append(struct node *a, struct node *b);
int ast_count(const struct node *list);
/* The bytes string expression e is written out in when the expression
 * alone says it: a literal's length and its NUL, comm's 16; else 0. */
unsigned ast_str_size(const struct node *e);
const char *op_str(int op);

/* Call fn on each direct child of n, in source order (list members one by
 * one). Passes that only need to reach every node recurse through it
 * instead of spelling out every node kind again. */
typedef void (*ast_visit_fn)(struct node *child, void *arg);
void ast_visit_children(struct node *n, ast_visit_fn fn, void *arg);

#endif
