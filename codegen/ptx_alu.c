/* ALU64 and ALU32 with eBPF semantics: 32-bit results are zero-extended,
 * shift counts are masked to the operand width, unsigned division by zero
 * gives 0 and modulo by zero leaves the dividend (as the kernel does). */
#include <inttypes.h>
#include <string.h>

#include "ptx_emit.h"

struct alu_op {
	const char *name; /* PTX opcode without the width: "add", "shr" */
	char type;        /* 's', 'u' or 'b': how an immediate is printed */
};

static const struct alu_op *alu_op(uint8_t op)
{
	static const struct alu_op add = { "add", 's' }, sub = { "sub", 's' },
		mul = { "mul.lo", 's' }, div = { "div", 'u' }, or = { "or", 'b' },
		and = { "and", 'b' }, lsh = { "shl", 'b' }, rsh = { "shr", 'u' },
		mod = { "rem", 'u' }, xor = { "xor", 'b' }, arsh = { "shr", 's' };
	switch (op) {
	case BPF_ADD: return &add;
	case BPF_SUB: return &sub;
	case BPF_MUL: return &mul;
	case BPF_DIV: return &div;
	case BPF_OR: return &or;
	case BPF_AND: return &and;
	case BPF_LSH: return &lsh;
	case BPF_RSH: return &rsh;
	case BPF_MOD: return &mod;
	case BPF_XOR: return &xor;
	case BPF_ARSH: return &arsh;
	default: return NULL;
	}
}

/* An immediate as PTX reads it for an operation of the given type and
 * width: eBPF sign-extends imm to 64 bits; negative unsigned ones print
 * as hex. */
static void imm_str(char *buf, size_t len, int32_t imm, char type, int bits)
{
	if (type == 's' || type == 'b' || imm >= 0)
		snprintf(buf, len, "%" PRId32, imm);
	else if (bits == 64)
		snprintf(buf, len, "0x%016" PRIX64, (uint64_t)(int64_t)imm);
	else
		snprintf(buf, len, "0x%08" PRIX32, (uint32_t)imm);
}

/* q = floor(2^64 * hi / d) for hi < d: the quotient of a 128-bit
 * dividend whose low half is zero, bit by bit. */
static uint64_t div_high(uint64_t hi, uint64_t d)
{
	uint64_t q = 0;
	for (int i = 0; i < 64; i++) {
		bool carry = hi >> 63;
		hi <<= 1;
		q <<= 1;
		if (carry || hi >= d) {
			hi -= d;
			q |= 1;
		}
	}
	return q;
}

void ptx_udiv_magic(uint64_t d, uint64_t *m, int *l)
{
	*l = 0;
	while (*l < 64 && (UINT64_C(1) << *l) < d)
		(*l)++;
	/* 2^64 wraps to 0 for l = 64; 2^l - d is still right modulo 2^64 */
	uint64_t two_l = *l == 64 ? 0 : UINT64_C(1) << *l;
	*m = div_high(two_l - d, d) + 1;
}

void ptx_udiv_imm(struct ptx_fn *f, const char *dst, const char *src, uint64_t d, bool rem)
{
	if (d == 0) { /* eBPF: x / 0 is 0, x % 0 is x */
		if (!rem)
			ptx_line(f, "mov.b64 %s, 0;", dst);
		else if (strcmp(dst, src))
			ptx_line(f, "mov.b64 %s, %s;", dst, src);
		return;
	}
	if (!(d & (d - 1))) {
		int k = 0;
		while ((d >> k) != 1)
			k++;
		if (rem)
			ptx_line(f, "and.b64 %s, %s, 0x%" PRIX64 ";", dst, src, d - 1);
		else
			ptx_line(f, "shr.u64 %s, %s, %d;", dst, src, k);
		return;
	}
	uint64_t m;
	int l;
	ptx_udiv_magic(d, &m, &l);
	ptx_line(f, "{ .reg .b64 %%dq<2>;");
	ptx_line(f, "mul.hi.u64 %%dq0, %s, 0x%" PRIX64 ";", src, m);
	ptx_line(f, "sub.u64 %%dq1, %s, %%dq0;", src);
	ptx_line(f, "shr.u64 %%dq1, %%dq1, 1;");
	ptx_line(f, "add.u64 %%dq1, %%dq1, %%dq0;");
	ptx_line(f, "shr.u64 %%dq1, %%dq1, %d;", l - 1);
	if (rem) {
		ptx_line(f, "mul.lo.u64 %%dq1, %%dq1, 0x%" PRIX64 ";", d);
		ptx_line(f, "sub.u64 %s, %s, %%dq1; }", dst, src);
	} else {
		ptx_line(f, "mov.b64 %s, %%dq1; }", dst);
	}
}

static bool is_shift(uint8_t op)
{
	return op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH;
}

static void alu64(struct ptx_fn *f, const struct bpf_insn *in,
		  const struct alu_op *a)
{
	uint8_t op = BPF_OP(in->code);
	int d = in->dst, s = in->src;
	const char *sfx = a->type == 'b' ? "b64" : a->type == 's' ? "s64" : "u64";
	char imm[32];
	if (BPF_SRC(in->code) == BPF_K) {
		if (is_shift(op)) {
			ptx_line(f, "%s.%s %%r%d, %%r%d, %d;", a->name, sfx, d, d,
				 in->imm & 63);
		} else if (op == BPF_DIV || op == BPF_MOD) {
			/* ptxas calls a subroutine for div.u64 and rem.u64,
			 * even by a constant: multiply instead */
			char r[8];
			snprintf(r, sizeof(r), "%%r%d", d);
			ptx_udiv_imm(f, r, r, (uint64_t)(int64_t)in->imm, op == BPF_MOD);
		} else {
			imm_str(imm, sizeof(imm), in->imm, a->type, 64);
			ptx_line(f, "%s.%s %%r%d, %%r%d, %s;", a->name, sfx, d, d, imm);
		}
		return;
	}
	if (is_shift(op)) {
		ptx_line(f, "cvt.u32.u64 %%w0, %%r%d;", s);
		ptx_line(f, "and.b32 %%w0, %%w0, 63;");
		ptx_line(f, "%s.%s %%r%d, %%r%d, %%w0;", a->name, sfx, d, d);
	} else if (op == BPF_DIV || op == BPF_MOD) {
		ptx_line(f, "setp.eq.u64 %%p, %%r%d, 0;", s);
		ptx_line(f, "%s.u64 %%t0, %%r%d, %%r%d;", a->name, d, s);
		if (op == BPF_DIV)
			ptx_line(f, "selp.b64 %%r%d, 0, %%t0, %%p;", d);
		else
			ptx_line(f, "selp.b64 %%r%d, %%r%d, %%t0, %%p;", d, d);
	} else {
		ptx_line(f, "%s.%s %%r%d, %%r%d, %%r%d;", a->name, sfx, d, d, s);
	}
}

/* 32-bit ops work on %w0 (dst) and %w1 (src), then zero-extend. */
static void alu32(struct ptx_fn *f, const struct bpf_insn *in,
		  const struct alu_op *a)
{
	uint8_t op = BPF_OP(in->code);
	int d = in->dst;
	const char *sfx = a->type == 'b' ? "b32" : a->type == 's' ? "s32" : "u32";
	char imm[32];
	ptx_line(f, "cvt.u32.u64 %%w0, %%r%d;", d);
	if (BPF_SRC(in->code) == BPF_K) {
		if (is_shift(op)) {
			ptx_line(f, "%s.%s %%w0, %%w0, %d;", a->name, sfx, in->imm & 31);
		} else if ((op == BPF_DIV || op == BPF_MOD) && in->imm == 0) {
			if (op == BPF_DIV)
				ptx_line(f, "mov.b32 %%w0, 0;");
		} else {
			imm_str(imm, sizeof(imm), in->imm, a->type, 32);
			ptx_line(f, "%s.%s %%w0, %%w0, %s;", a->name, sfx, imm);
		}
	} else {
		ptx_line(f, "cvt.u32.u64 %%w1, %%r%d;", in->src);
		if (is_shift(op)) {
			ptx_line(f, "and.b32 %%w1, %%w1, 31;");
			ptx_line(f, "%s.%s %%w0, %%w0, %%w1;", a->name, sfx);
		} else if (op == BPF_DIV || op == BPF_MOD) {
			ptx_line(f, "setp.eq.u32 %%p, %%w1, 0;");
			ptx_line(f, "%s.u32 %%w2, %%w0, %%w1;", a->name);
			if (op == BPF_DIV)
				ptx_line(f, "selp.b32 %%w0, 0, %%w2, %%p;");
			else
				ptx_line(f, "selp.b32 %%w0, %%w0, %%w2, %%p;");
		} else {
			ptx_line(f, "%s.%s %%w0, %%w0, %%w1;", a->name, sfx);
		}
	}
	ptx_line(f, "cvt.u64.u32 %%r%d, %%w0;", d);
}

/* Byte order: the GPU is little-endian, so "le" only truncates and "be"
 * (and ALU64's unconditional bswap) swaps with prmt. */
static int endian(struct ptx_fn *f, int i)
{
	const struct bpf_insn *in = &f->prog->insns[i];
	int d = in->dst;
	bool swap = BPF_CLASS(in->code) == BPF_ALU64 || BPF_SRC(in->code) == BPF_X;
	if (in->imm != 16 && in->imm != 32 && in->imm != 64)
		return ptx_fail(f, i, "byte swap of %d bits", in->imm);
	if (!swap) {
		if (in->imm == 16)
			ptx_line(f, "and.b64 %%r%d, %%r%d, 0xFFFF;", d, d);
		else if (in->imm == 32)
			ptx_line(f, "and.b64 %%r%d, %%r%d, 0xFFFFFFFF;", d, d);
		return 0;
	}
	if (in->imm == 64) {
		ptx_line(f, "mov.b64 {%%w0, %%w1}, %%r%d;", d);
		ptx_line(f, "prmt.b32 %%w2, %%w1, 0, 0x0123;");
		ptx_line(f, "prmt.b32 %%w3, %%w0, 0, 0x0123;");
		ptx_line(f, "mov.b64 %%r%d, {%%w2, %%w3};", d);
		return 0;
	}
	ptx_line(f, "cvt.u32.u64 %%w0, %%r%d;", d);
	ptx_line(f, "prmt.b32 %%w0, %%w0, 0, %s;", in->imm == 16 ? "0x4401" : "0x0123");
	ptx_line(f, "cvt.u64.u32 %%r%d, %%w0;", d);
	return 0;
}

int ptx_emit_alu(struct ptx_fn *f, int i)
{
	const struct bpf_insn *in = &f->prog->insns[i];
	bool is64 = BPF_CLASS(in->code) == BPF_ALU64;
	uint8_t op = BPF_OP(in->code);
	int d = in->dst;
	/* A nonzero offset selects the cpu=v4 variants (signed division,
	 * sign-extending moves); the compiler does not emit them. */
	if (in->off != 0)
		return ptx_fail(f, i, "ALU instruction 0x%02x with offset %d "
				"(signed division or movsx) is not supported",
				in->code, in->off);
	if (d == BPF_REG_FP)
		return ptx_fail(f, i, "r10 is read-only");
	switch (op) {
	case BPF_END:
		return endian(f, i);
	case BPF_NEG:
		if (is64) {
			ptx_line(f, "neg.s64 %%r%d, %%r%d;", d, d);
		} else {
			ptx_line(f, "cvt.u32.u64 %%w0, %%r%d;", d);
			ptx_line(f, "neg.s32 %%w0, %%w0;");
			ptx_line(f, "cvt.u64.u32 %%r%d, %%w0;", d);
		}
		return 0;
	case BPF_MOV:
		if (BPF_SRC(in->code) == BPF_K && is64) {
			ptx_line(f, "mov.b64 %%r%d, %" PRId32 ";", d, in->imm);
		} else if (BPF_SRC(in->code) == BPF_K) {
			char imm[32];
			imm_str(imm, sizeof(imm), in->imm, 'u', 32);
			ptx_line(f, "mov.b64 %%r%d, %s;", d, imm);
		} else if (is64) {
			ptx_line(f, "mov.b64 %%r%d, %%r%d;", d, in->src);
		} else {
			ptx_line(f, "cvt.u32.u64 %%w0, %%r%d;", in->src);
			ptx_line(f, "cvt.u64.u32 %%r%d, %%w0;", d);
		}
		return 0;
	}
	const struct alu_op *a = alu_op(op);
	if (!a)
		return ptx_fail(f, i, "unknown ALU operation 0x%02x", in->code);
	if (is64)
		alu64(f, in, a);
	else
		alu32(f, in, a);
	return 0;
}
