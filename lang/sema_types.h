/* Internal to the types pass (sema_types.c, sema_exprs.c, sema_calls.c,
 * sema_printf.c): the walk's state and the calls between its files. */
#ifndef GPUX_SEMA_TYPES_H
#define GPUX_SEMA_TYPES_H

#include "sema.h"

struct var {
	struct var *next;
	const char *name;
	struct type type;
};

struct tctx {
	struct program *prog;
	struct diags *diags;
	/* Map types are learned in a first, silent walk so a read in an
	 * early probe may refer to a map assigned in a later one; the
	 * second walk reports. */
	bool final;
	struct node *probe;
	struct var *vars;
	struct diag *last; /* the diagnostic just recorded, for hints */
	/* prog->maps by name (open addressing), and its list's end */
	struct map_info **map_tab, **map_tail;
	unsigned map_cap, nmaps;
	/* "TARGET\nstruct x" asked of a target's DWARF in vain: asked once */
	struct dwarf_miss *dwarf_misses;
};

struct dwarf_miss {
	const char *key;
	struct dwarf_miss *next;
};

/* Record an error only on the reporting walk; NULL otherwise. */
struct diag *terr(struct tctx *c, struct span sp, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void check_expr(struct tctx *c, struct node *n);
/* Whether a is a string literal where a function needs one; str($N) of
 * a positional parameter is one, its text (bpftrace's kaddr(str($1))):
 * the reporting walk makes the call that literal. */
bool sema_str_literal(struct tctx *c, struct node *a);
/* Whether the script's C definitions (not the kernel's) define "struct rec". */
bool sema_script_record(struct tctx *c, const char *rec);
/* "struct rec"'s size in the C definitions (the script's, else the
 * kernel's), or -1 where it has none. */
long sema_record_size(struct tctx *c, const char *rec);
/* A pointer (stars deep) to record rec ("struct rec") into out; false,
 * out untouched, where it is not defined. */
bool sema_record_pointer(struct tctx *c, const char *rec, int stars, struct type *out);
/* A pointer to struct pt_regs (the kernel's, the script's, else gpux's
 * own x86-64 layout) into out; false where none can be laid out. */
bool sema_pt_regs(struct tctx *c, struct type *out);
/* Whether n reads args.NAME (args->NAME): a tracepoint's field, or a
 * uprobe's parameter (DWARF). */
bool sema_is_args_field(const struct tctx *c, const struct node *n);
/* A warning at $N where the program got fewer arguments. */
void positional_unset(struct tctx *c, const struct node *n);
/* An assignment's right side may be an aggregation call. */
struct type check_call(struct tctx *c, struct node *n, bool map_value);
void check_printf(struct tctx *c, struct node *call);
struct map_info *map_lookup(struct tctx *c, struct node *m);
/* The probe's first event, for messages ("gdev:kernel_exit"). */
const char *probe_name(const struct tctx *c, char *buf, size_t len);
/* Whether the probe is run by the kernel, which name (a builtin or
 * function at n) needs; a located error if not (sema_stacks.c). */
bool sema_kernel_only(struct tctx *c, struct node *n, const char *name);
/* A builtin only probes run in the traced program have (target_only):
 * false, with a located error, in any other host probe. */
bool sema_target_only(struct tctx *c, struct node *n, const char *name);

/* Variables and maps, shared by the expression and statement walks. */
struct var *var_find(struct tctx *c, const char *name);
void var_assign(struct tctx *c, struct node *target, struct type t,
		struct span value_span);
void check_map_keys(struct tctx *c, struct node *m);
void map_store(struct tctx *c, struct node *m, struct type t);
void map_read(struct tctx *c, struct node *m);
/* A dim3, aggregation or void used where a number is wanted: reported. */
bool reject_non_scalar(struct tctx *c, struct node *n);
const char *tname(struct type t, char *buf);

/* Memory through pointers (sema_memory.c). */
void sema_cast_to_type(struct tctx *c, struct node *n);
void sema_deref(struct tctx *c, struct node *n);
void sema_index(struct tctx *c, struct node *n);
bool sema_record_field(struct tctx *c, struct node *n);
bool sema_pointer_binop(struct tctx *c, struct node *n);
void sema_sizeof(struct tctx *c, struct node *n);
/* A string's size as bpftrace's sizeof counts it: of type t, written
 * out as e (NULL: not known). */
unsigned sema_str_size(struct type t, const struct node *e);

#endif
