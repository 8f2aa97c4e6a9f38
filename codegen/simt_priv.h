/* The SIMT verifier's internals: the abstract domain, the control-flow
 * facts computed before the search, and the per-instruction transfer.
 *
 * Strategy: path exploration (depth first) with state pruning, as the
 * Linux verifier does, rather than a worklist with joins. Paths keep
 * constants exact, so a loop with a constant bound is simply unrolled
 * until its exit test is decided, and the instruction budget on a path
 * bounds the unrolling. A path ends early when it reaches a jump target
 * with a state that an explored one subsumes and no smaller counters
 * (what that state could reach, this one could too, in no more steps).
 * A varying branch is followed both ways like any undecided one; each
 * path is what one lane sees, and uniformity is a flag on each value. */
#ifndef GPUX_SIMT_PRIV_H
#define GPUX_SIMT_PRIV_H

#include <stdarg.h>

#include "simt_verifier.h"

enum vkind {
	VK_UNINIT,
	VK_SCALAR,
	VK_CTX,        /* the context + off */
	VK_STACK,      /* r10 + off */
	VK_MAP,        /* a map reference (lddw, src = MAP_IDX) */
	VK_MAPVAL_NULL, /* map_lookup's result before the null check */
	VK_MAPVAL,     /* a map value + off, known non-null */
};

/* Where a lane-varying value came from, for messages. */
enum vorigin { VO_NONE, VO_CTX, VO_BUILTIN, VO_LOOKUP, VO_BRANCH };

struct aval {
	uint8_t kind;
	uint8_t varying;
	uint8_t origin;  /* enum vorigin, meaningful when varying */
	int32_t oidx;    /* ctx field, builtin id or branch insn */
	int32_t map;     /* VK_MAP, VK_MAPVAL*: map index */
	int32_t id;      /* VK_MAPVAL*: the lookup, so copies share a null check */
	int64_t off;     /* pointers */
	uint64_t umin, umax; /* scalars: unsigned range, a constant if equal */
};

#define SIMT_SLOTS (BPF_STACK_SIZE / 8)

/* One 8-byte stack slot. A full aligned register store keeps the value
 * (spills of pointers and constants survive); smaller stores only mark
 * bytes written and whether any of them vary. */
struct slot {
	uint8_t init;    /* bit i: byte i written */
	uint8_t spilled; /* val is a whole spilled register */
	struct aval val; /* else a scalar carrying varying/origin */
};

struct vstate {
	int pc;
	int insns, calls, map_ops; /* on this path so far */
	int next_id;
	int join;        /* a varying diamond rejoins here; -1 when none */
	int join_branch; /* the branch that opened it */
	uint16_t taint;  /* registers written inside it */
	struct aval r[BPF_NREGS];
	struct slot stack[SIMT_SLOTS];
};

/* Per-instruction facts from the control-flow pass. */
enum {
	IF_TARGET = 1 << 0,    /* a jump lands here: a pruning point */
	IF_LOOP_EXIT = 1 << 1, /* a conditional branch that leaves a loop */
	IF_IN_LOOP = 1 << 2,
	IF_LDDW_HI = 1 << 3,   /* second slot of a lddw */
};

struct seen;

struct simt_env {
	const struct dev_prog *prog;
	struct diags *diags;
	FILE *log;
	uint8_t *flags;       /* IF_* per instruction */
	int *jump_preds;      /* jumps landing on each instruction */
	struct seen **seen;   /* explored states per pruning point */
	int *nseen;
	struct vstate **work; /* paths waiting: a stack */
	int nwork, capwork;
	struct simt_stats st;
	int failed;
};

/* simt_cfg.c */
int simt_cfg(struct simt_env *e);
int simt_succ(const struct bpf_insn *insns, int i, int out[2]);
/* 0 if the lane-varying branch at b is an if-conversion diamond (sets
 * *join and *taint); else -1 with why (and *at, the offending insn, or
 * -1) describing what breaks it. */
int simt_diamond(const struct simt_env *e, int b, int *join, uint16_t *taint,
		 const char **why, int *at);
#define SIMT_DIAMOND_MAX 32

/* simt_value.c: the domain */
extern const char *const simt_kind_name[];
struct aval aval_scalar(uint64_t umin, uint64_t umax);
struct aval aval_const(uint64_t v);
bool aval_is_const(const struct aval *v);
bool aval_is_ptr(const struct aval *v);
void aval_vary_from(struct aval *dst, const struct aval *a,
		    const struct aval *b);
/* "r3 (from ctx field 'addr')" into buf. */
const char *aval_describe(const struct simt_env *e, int reg,
			  const struct aval *v, char *buf, size_t len);
void aval_print(FILE *out, const struct aval *v);
bool state_subsumes(const struct vstate *old, const struct vstate *cur);
int simt_alu(struct simt_env *e, struct vstate *s, const struct bpf_insn *in);
/* Outcome of a conditional branch: 1 taken, 0 not, -1 unknown. */
int simt_decide(const struct bpf_insn *in, const struct aval *a,
		const struct aval *b);
/* Narrow a and b to the side taken (taken = 1) or not (unsigned tests
 * against a constant only; the others leave the ranges alone). */
void simt_refine(const struct bpf_insn *in, struct aval *a, struct aval *b,
		 bool taken);

/* simt_insn.c: memory and branches; simt_call.c: calls */
int simt_mem(struct simt_env *e, struct vstate *s, const struct bpf_insn *in);
int simt_call(struct simt_env *e, struct vstate *s, const struct bpf_insn *in);
int simt_branch(struct simt_env *e, struct vstate *s,
		const struct bpf_insn *in, struct vstate **fork);
int simt_check_read(struct simt_env *e, const struct vstate *s, int reg);

/* simt_verifier.c */
struct diag *simt_err(struct simt_env *e, int insn, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int simt_line(const struct simt_env *e, int insn);
struct vstate *simt_push(struct simt_env *e, const struct vstate *s);

#endif
