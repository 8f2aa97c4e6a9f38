/* Internals of the PTX JIT shared by its translation units: the state of
 * one function being emitted and the per-class translators.
 *
 * Registers of the emitted function:
 *   %r0..%r10  the eBPF registers (.b64)
 *   %c0..%c2   the context's three words as passed in
 *   %ctx       a pointer to a copy of them, when the program needs one
 *   %t0..%t1   64-bit scratch, %w0..%w3 32-bit scratch, %p a predicate
 * Scratch never lives across eBPF instructions. */
#ifndef GPUX_PTX_EMIT_H
#define GPUX_PTX_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "device_abi.h"
#include "diag.h"
#include "gpux_dev.h"

/* A field's byte offset in struct gpux_map_desc, for loads and
 * reductions on a descriptor's symbol (gpux_map_N+OFF). */
#define PTX_DESC(field) ((int)offsetof(struct gpux_map_desc, field))

struct ptx_fn {
	const struct dev_prog *prog;
	FILE *out;
	struct diags *diags;
	bool *is_target;  /* per instruction: some jump lands here */
	bool r1_known;    /* r1 holds a known constant (builtin ids) */
	int64_t r1_value;
	int r1_map;       /* the map whose descriptor r1 holds, or -1 */
	bool r2_fp_known; /* r2 = r10 + r2_fp (a key on the stack) */
	int r2_fp;
	bool needs_leave; /* lane_filter branches to $Lgpux_leave */
	/* The context arrives as three words (%c0..%c2). ctx_reg >= 0: the
	 * program copies r1 there first and only ever loads through it, so
	 * each load is a register extract and no copy lives in memory. */
	int ctx_reg;
	bool ctx_mem;     /* r1 may be read as a pointer to the context: it
			   * gets one to a copy in local memory */
	/* Every stack access is a whole aligned word at a constant slot and
	 * no pointer to the stack leaves the function (a key's address only
	 * reaches an array helper, which takes the word itself): slot k is
	 * register %s<k> and nothing is in local memory (ptx_stack.c). */
	bool stack_regs;
	/* Descriptor words in registers (ptx_desc.c): where the first inline
	 * map operation is, when nothing branches before it (-1: each
	 * operation loads its own), and per map the words loaded there. */
	int desc_at;
	unsigned *desc_words;
	/* Read-only lookups load the value's first word with their slot
	 * (ptx_lookup.c): lk_at[r] is the lookup whose value's address r
	 * holds, its word in %lv<lk_at[r]> (-1: none). value_regs: the
	 * program stores through no pointer but the stack, so nothing can
	 * change a value it looked up. lk_done: the call just emitted. */
	bool value_regs;
	int lk_at[BPF_NREGS];
	int lk_done;
};

/* Whether in is a jump (conditional or not; not a call or exit). */
bool ptx_is_jump(const struct bpf_insn *in);

/* The map r1 points at after in, given r1_map before it (-1: none or
 * unknown); calls and jump targets are the caller's to handle. */
int ptx_r1_map_after(const struct bpf_insn *in, int r1_map);

/* Whether the helper call at i takes its key by value (an array map's
 * update, ptx_call.c), given the map r1 points at there. */
bool ptx_call_by_value(const struct ptx_fn *f, int i, int r1_map);

/* ptx_array.c: whether helper id on map is an array map's update, and
 * its inline code (the key through r2, the value in r3). */
bool ptx_array_update_at(const struct ptx_fn *f, int id, int map);
int ptx_array_update(struct ptx_fn *f, int i, int map);

/* ptx_lookup.c: whether a lookup in map is written inline, and its code
 * (the key through r2; r0 = the value's address or 0). */
bool ptx_lookup_at(const struct ptx_fn *f, int id, int map);
int ptx_lookup(struct ptx_fn *f, int i, int map);

/* ptx_desc.c: the words of struct gpux_map_desc an inline operation
 * reads. ptx_desc_plan (before the prologue) finds where they can all be
 * loaded at once; ptx_desc_decls declares their registers in the
 * prologue; ptx_desc_hoist loads them at instruction i if that is the
 * place; ptx_desc_word sets dst (a register of the word's width) to
 * map's word, from its register or with a load. */
enum ptx_desc_word {
	PTX_DW_STATE, PTX_DW_KEYS, PTX_DW_VALUES, PTX_DW_MAX_ENTRIES, PTX_DW_KIND,
	PTX_DW_COUNT
};
int ptx_desc_plan(struct ptx_fn *f);
void ptx_desc_decls(struct ptx_fn *f);
void ptx_desc_hoist(struct ptx_fn *f, int i);
void ptx_desc_word(struct ptx_fn *f, int map, enum ptx_desc_word w, const char *dst);
/* The words an inline operation (helper id on map) reads, a mask of
 * 1 << enum ptx_desc_word; 0 for one not written inline. */
unsigned ptx_desc_needs(const struct ptx_fn *f, int id, int map);

/* ptx_lookup.c: after instruction i (at index at), keep lk_at. */
void ptx_lookup_track(struct ptx_fn *f, const struct bpf_insn *in, int at);

/* ptx_stack.c: decide f->stack_regs (before the prologue); a load or
 * store through r10 in that mode. */
void ptx_stack_plan(struct ptx_fn *f);
int ptx_stack_access(struct ptx_fn *f, int i);
/* The key word for a by-value helper whose key r2 points at, into %t0;
 * its word w into the .b64 register dst. */
void ptx_stack_key(struct ptx_fn *f);
void ptx_stack_key_word(struct ptx_fn *f, int w, const char *dst);

/* Each returns 0, or -1 after a diagnostic at instruction i. */
int ptx_emit_alu(struct ptx_fn *f, int i);
int ptx_emit_mem(struct ptx_fn *f, int i);
int ptx_emit_jmp(struct ptx_fn *f, int i);
int ptx_emit_call(struct ptx_fn *f, int i);

/* The n-th helper of the library (NULL past the end), for prototypes. */
const char *ptx_helper_nth(int n, int *nargs);

/* dst = src / d (rem: src % d), unsigned 64-bit, d a constant, with
 * eBPF's meaning for d = 0: a shift or mask for powers of two, else a
 * multiply by ptx_udiv_magic's m (ptxas calls a subroutine for div.u64
 * and rem.u64, even by a constant). dst may be src. */
void ptx_udiv_imm(struct ptx_fn *f, const char *dst, const char *src, uint64_t d, bool rem);
/* For d >= 2 not a power of two: n / d ==
 * (mulhi(m, n) + ((n - mulhi(m, n)) >> 1)) >> (l - 1) for every 64-bit
 * n, with l = ceil(log2 d) and m = floor(2^64 (2^l - d) / d) + 1
 * (Granlund and Montgomery). */
void ptx_udiv_magic(uint64_t d, uint64_t *m, int *l);

/* A diagnostic at instruction i's source span. */
int ptx_fail(struct ptx_fn *f, int i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Print one line of the body, indented by a tab. */
void ptx_line(struct ptx_fn *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
