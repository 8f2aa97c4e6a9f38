/* Kernel tracepoints, read from tracefs at compile time: their record
 * layout (fields) and the list of those that exist; and the kernel
 * functions that kprobes may attach to.
 *
 * Field types as the language sees them:
 *   integers of size 1, 2, 4, 8   -> int/uint of that width, per "signed:"
 *   pointers                       -> uint64
 *   char NAME[N], char NAME[]      -> string (bytes inside the record)
 *   __data_loc / __rel_loc char[]  -> string (dynamic; see tp_field)
 *   any other array, fixed or dynamic, and odd sizes
 *                                  -> uint64: only offset/size are exact,
 *                                     codegen decides what it can read
 * Fields named common_* (the record header) are skipped. */
#ifndef GPUX_TRACEPOINT_H
#define GPUX_TRACEPOINT_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "catalog.h"

/* One field with its place in the record, for codegen. */
struct tp_field {
	struct field f;  /* doc: the C declaration, "char prev_comm[16]" */
	unsigned offset; /* bytes from the start of the record */
	unsigned size;   /* bytes in the record (4 for __data_loc) */
	bool array;      /* declared with [] or [N] */
	bool dynamic;    /* __data_loc/__rel_loc: a u32 (len << 16 | off) */
	bool rel;        /* __rel_loc: off counts from the end of this field */
};

/* All functions return 0 or a negative errno:
 *   -EINVAL  category/name empty, or containing '/' or "..", or too long
 *   -ENOENT  tracefs is there but has no such tracepoint (or category)
 *   -ENODEV  no tracefs found (not mounted at /sys/kernel/tracing nor
 *            /sys/kernel/debug/tracing)
 *   -EACCES  tracefs is there but not readable (needs root)
 *   -EPROTO  a format file gpux cannot parse
 * Results live in the arena. */

/* Fields of CATEGORY:NAME, in record order; *out has a { NULL } entry
 * after the last, like catalog fields. */
int tracepoint_fields(struct arena *a, const char *category, const char *name,
		      struct field **out, size_t *n);
/* The same with offsets and sizes; *out[n].f.name is NULL. */
int tracepoint_layout(struct arena *a, const char *category, const char *name,
		      struct tp_field **out, size_t *n);

/* Sorted "category:name" of every tracepoint, or of one category when
 * category is not NULL; *names is NULL-terminated. The ftrace category
 * is left out: its events cannot be attached to. */
int tracepoint_list(struct arena *a, const char *category, char ***names,
		    size_t *n);

/* A kernel function kprobes may attach to, and its module (NULL: the
 * kernel's own). */
struct kfunc {
	const char *name;
	const char *module;
};
/* The functions of tracefs's available_filter_functions whose name
 * matches glob (NULL: any) and, when module is not NULL, whose module
 * matches it: each once, the kernel's own first, then by module, by
 * name; *out ends with a { NULL } entry.
 * -ENODEV without tracefs, -EACCES or -EPERM where it cannot be read. */
int tracefs_functions(struct arena *a, const char *glob, const char *module,
		      struct kfunc **out, size_t *n);

/* Whether a kretprobe on kernel function fn may lock the system up (the
 * spinlock functions a return probe's own bookkeeping takes), as bpftrace
 * refuses them. */
bool kretprobe_banned(const char *fn);

/* Whether s may name a category or tracepoint (no path tricks). */
bool tracepoint_name_ok(const char *s);

/* Read tracefs from dir instead of the system's (tests use a fake tree);
 * NULL goes back to the defaults. dir is used as given, not copied. */
void tracepoint_set_root(const char *dir);

#endif
