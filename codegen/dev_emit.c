/* The instruction buffer of one device probe: each instruction takes the
 * span of the AST node being lowered (L->cur), jumps go to labels that
 * are resolved to relative offsets at the end. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dev_priv.h"

/* Arrays double in the arena; the old copies are simply left behind
 * (a one-liner's program is a few hundred bytes). */
static void *grow(struct lw *L, void *old, int n, int *cap, size_t elem)
{
	if (n < *cap)
		return old;
	int ncap = *cap ? *cap * 2 : 64;
	void *p = arena_alloc(&L->prog->arena, elem * (size_t)ncap);
	if (old)
		memcpy(p, old, elem * (size_t)n);
	*cap = ncap;
	return p;
}

void dl_emit(struct lw *L, struct bpf_insn in)
{
	int cap = L->cap;
	L->insns = grow(L, L->insns, L->n, &cap, sizeof(*L->insns));
	cap = L->cap;
	L->spans = grow(L, L->spans, L->n, &cap, sizeof(*L->spans));
	L->cap = cap;
	L->insns[L->n] = in;
	L->spans[L->n] = L->cur;
	L->n++;
}

void dl_emit_alu_k(struct lw *L, int op, int dst, int32_t imm)
{
	dl_emit(L, (struct bpf_insn){ .code = BPF_ALU64 | op | BPF_K, .dst = dst, .imm = imm });
}

void dl_emit_alu_x(struct lw *L, int op, int dst, int src)
{
	dl_emit(L, (struct bpf_insn){ .code = BPF_ALU64 | op | BPF_X, .dst = dst, .src = src });
}

bool dl_fits_imm(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

void dl_emit_mov_k(struct lw *L, int dst, int64_t v)
{
	if (dl_fits_imm(v)) {
		dl_emit_alu_k(L, BPF_MOV, dst, (int32_t)v);
		return;
	}
	uint64_t u = (uint64_t)v;
	dl_emit(L, (struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst = dst,
				   .imm = (int32_t)(uint32_t)u });
	dl_emit(L, (struct bpf_insn){ .imm = (int32_t)(uint32_t)(u >> 32) });
}

static int size_code(int size)
{
	switch (size) {
	case 1: return BPF_B;
	case 2: return BPF_H;
	case 4: return BPF_W;
	default: return BPF_DW;
	}
}

void dl_emit_ldx(struct lw *L, int size, int dst, int src, int off)
{
	dl_emit(L, (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | size_code(size),
				   .dst = dst, .src = src, .off = (int16_t)off });
}

void dl_emit_stx(struct lw *L, int size, int base, int off, int src)
{
	dl_emit(L, (struct bpf_insn){ .code = BPF_STX | BPF_MEM | size_code(size),
				   .dst = base, .src = src, .off = (int16_t)off });
}

void dl_emit_st_k(struct lw *L, int size, int base, int off, int32_t imm)
{
	dl_emit(L, (struct bpf_insn){ .code = BPF_ST | BPF_MEM | size_code(size),
				   .dst = base, .off = (int16_t)off, .imm = imm });
}

void dl_emit_call(struct lw *L, int helper)
{
	dl_emit(L, (struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = helper });
}

void dl_emit_map_ref(struct lw *L, int dst, int map)
{
	dl_emit(L, (struct bpf_insn){ .code = BPF_LD | BPF_DW | BPF_IMM, .dst = dst,
				   .src = BPF_PSEUDO_MAP_IDX, .imm = map });
	dl_emit(L, (struct bpf_insn){ 0 });
}

void dl_emit_stack_ptr(struct lw *L, int dst, int off)
{
	dl_emit_alu_x(L, BPF_MOV, dst, BPF_REG_FP);
	dl_emit_alu_k(L, BPF_ADD, dst, -off);
}

int dl_new_label(struct lw *L)
{
	int cap = L->caplabels;
	L->labels = grow(L, L->labels, L->nlabels, &cap, sizeof(*L->labels));
	L->caplabels = cap;
	L->labels[L->nlabels] = -1;
	return L->nlabels++;
}

void dl_place_label(struct lw *L, int label)
{
	L->labels[label] = L->n;
}

static void fixup(struct lw *L, int label)
{
	int cap = L->capfix;
	L->fixes = grow(L, L->fixes, L->nfix, &cap, sizeof(*L->fixes));
	L->capfix = cap;
	L->fixes[L->nfix++] = (struct dfix){ L->n, label };
}

void dl_emit_jmp_k(struct lw *L, int op, int reg, int32_t imm, int label)
{
	fixup(L, label);
	dl_emit(L, (struct bpf_insn){ .code = BPF_JMP | op | BPF_K, .dst = reg, .imm = imm });
}

void dl_emit_jmp_x(struct lw *L, int op, int a, int b, int label)
{
	fixup(L, label);
	dl_emit(L, (struct bpf_insn){ .code = BPF_JMP | op | BPF_X, .dst = a, .src = b });
}

void dl_emit_ja(struct lw *L, int label)
{
	fixup(L, label);
	dl_emit(L, (struct bpf_insn){ .code = BPF_JMP | BPF_JA });
}

int dl_resolve_labels(struct lw *L)
{
	for (int k = 0; k < L->nfix; k++) {
		int at = L->fixes[k].insn, to = L->labels[L->fixes[k].label];
		int off = to - at - 1;
		if (to < 0 || off < INT16_MIN || off > INT16_MAX) {
			diag_error(L->diags, L->probe->span,
				   "the device program is too large to encode its jumps");
			return -1;
		}
		L->insns[at].off = (int16_t)off;
	}
	return 0;
}

int dl_tmp_alloc(struct lw *L, int bytes)
{
	if (L->sp + bytes > BPF_STACK_SIZE) {
		if (!L->stack_full) {
			struct diag *dg = diag_error(L->diags, L->cur,
				"the probe needs more than %d bytes of stack on the device",
				BPF_STACK_SIZE);
			diag_hint(dg, "use fewer $variables, map keys or printf arguments in one probe");
		}
		L->stack_full = true;
		return -1;
	}
	L->sp += bytes;
	return L->sp;
}

int dl_unsupported(struct lw *L, const struct node *n, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!diags_has_error_at(L->diags, n->span))
		diag_error(L->diags, n->span, "%s is not supported on the device yet", buf);
	return -1;
}
