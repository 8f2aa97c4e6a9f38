/* Internal to the device lowering (dev_*.c): the per-probe state, the
 * instruction buffer with labels, and the calls between the files. */
#ifndef GPUX_DEV_PRIV_H
#define GPUX_DEV_PRIV_H

#include "dev_lower.h"

/* Registers: r6..r8 hold expression values (they survive calls), r9 the
 * context, r0..r5 are scratch between calls. */
#define DR_CTX 9
#define DR_NLEVELS 3

struct dvar {
	const char *name;
	int off; /* the slot is r10 - off */
};

struct dfix {
	int insn, label;
};

struct lw {
	struct program *prog;
	struct dev_module *mod;
	struct diags *diags;
	struct node *probe;
	int probe_no; /* index into mod->probes */
	/* output */
	struct bpf_insn *insns;
	struct span *spans;
	int n, cap;
	int *labels; /* insn index, -1 until placed */
	int nlabels, caplabels;
	struct dfix *fixes;
	int nfix, capfix;
	struct span cur; /* span of the node being lowered */
	/* stack: variables on top, then temporaries */
	struct dvar *vars;
	int nvars;
	int sp; /* bytes in use below r10 */
	bool stack_full;
	int exit_label;
	int guard; /* inside a lane-varying if: slot of the 0/1 guard, else 0 */
	/* lowering a counted form (dev_lower.h): count() adds the context's
	 * addr word, the thread's count of sites */
	bool counted;
	/* module-wide tables grow as probes are lowered */
	int capmaps, capfmts;
};

/* dev_emit.c: instructions and labels */
void dl_emit(struct lw *L, struct bpf_insn in);
void dl_emit_alu_k(struct lw *L, int op, int dst, int32_t imm);
void dl_emit_alu_x(struct lw *L, int op, int dst, int src);
void dl_emit_mov_k(struct lw *L, int dst, int64_t v); /* lddw when needed */
void dl_emit_ldx(struct lw *L, int size, int dst, int src, int off);
void dl_emit_stx(struct lw *L, int size, int base, int off, int src);
void dl_emit_st_k(struct lw *L, int size, int base, int off, int32_t imm);
void dl_emit_call(struct lw *L, int helper);
void dl_emit_map_ref(struct lw *L, int dst, int map);
/* r2 = r10 - off (a stack pointer argument) */
void dl_emit_stack_ptr(struct lw *L, int dst, int off);
int dl_new_label(struct lw *L);
void dl_place_label(struct lw *L, int label);
void dl_emit_jmp_k(struct lw *L, int op, int reg, int32_t imm, int label);
void dl_emit_jmp_x(struct lw *L, int op, int a, int b, int label);
void dl_emit_ja(struct lw *L, int label);
int dl_resolve_labels(struct lw *L);
/* A stack area of bytes (multiple of 8); returns off (area at r10 - off). */
int dl_tmp_alloc(struct lw *L, int bytes);
bool dl_fits_imm(int64_t v);
int dl_unsupported(struct lw *L, const struct node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* dev_expr.c: expressions; the value goes to dl_reg_of(lvl) */
int dl_reg_of(int lvl);
int dl_eval(struct lw *L, struct node *n, int lvl);
/* Jump to label when n's truth equals when (uniform conditions). */
int dl_cond_jump(struct lw *L, struct node *n, bool when, int label, int lvl);
/* A lane-varying truth value: target = n != 0, without branching over
 * anything but register moves. */
int dl_eval_bool(struct lw *L, struct node *n, int lvl, int target);
struct dvar *dl_var_slot(struct lw *L, const char *name);
/* A string-typed value the device can hold: only `kernel` (its id). */
bool dl_is_kernel_ident(const struct node *n);
bool dl_has_side_effect(const struct node *n);

/* dev_maps.c: the module's map and printf tables, map operations */
int dl_map_index(struct lw *L, struct node *m);
/* Evaluate m's keys into a fresh key area; returns its off or -1. */
int dl_build_key(struct lw *L, struct node *m, int lvl);
int dl_map_read(struct lw *L, struct node *m, int lvl);
int dl_lower_map_assign(struct lw *L, struct node *s);
int dl_lower_map_incdec(struct lw *L, struct node *target, int delta_sign,
		     struct node *delta);
int dl_lower_delete(struct lw *L, struct node *call);
int dl_lower_printf(struct lw *L, struct node *call);
/* x op= v as x = x op v, typed as the front end types a binary op. */
struct node *dl_synth_binop(struct lw *L, struct node *target, int op,
			 struct node *v);

/* dev_stmt.c */
int dl_lower_block(struct lw *L, struct node *b);
int dl_lower_stmt(struct lw *L, struct node *s);

#endif
