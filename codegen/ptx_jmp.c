/* Jumps and exit. A conditional jump is a setp and a predicated bra to
 * the target's label; JMP32 compares the low halves. */
#include <inttypes.h>

#include "ptx_emit.h"

struct cmp {
	const char *op; /* setp comparison */
	char type;      /* 's' or 'u'; JSET tests bits */
};

static bool cmp_of(uint8_t op, struct cmp *c)
{
	switch (op) {
	case BPF_JEQ: *c = (struct cmp){ "eq", 'u' }; return true;
	case BPF_JNE: *c = (struct cmp){ "ne", 'u' }; return true;
	case BPF_JGT: *c = (struct cmp){ "gt", 'u' }; return true;
	case BPF_JGE: *c = (struct cmp){ "ge", 'u' }; return true;
	case BPF_JLT: *c = (struct cmp){ "lt", 'u' }; return true;
	case BPF_JLE: *c = (struct cmp){ "le", 'u' }; return true;
	case BPF_JSGT: *c = (struct cmp){ "gt", 's' }; return true;
	case BPF_JSGE: *c = (struct cmp){ "ge", 's' }; return true;
	case BPF_JSLT: *c = (struct cmp){ "lt", 's' }; return true;
	case BPF_JSLE: *c = (struct cmp){ "le", 's' }; return true;
	case BPF_JSET: *c = (struct cmp){ "ne", 'b' }; return true;
	default: return false;
	}
}

/* The right operand: a register name, or imm (sign-extended to 64 bits
 * for JMP) printed for the comparison's signedness. */
static void operand(char *buf, size_t len, const struct bpf_insn *in,
		    bool is32, char type)
{
	if (BPF_SRC(in->code) == BPF_X)
		snprintf(buf, len, is32 ? "%%w1" : "%%r%d", in->src);
	else if (type == 's' || in->imm >= 0)
		snprintf(buf, len, "%" PRId32, in->imm);
	else if (is32)
		snprintf(buf, len, "0x%08" PRIX32, (uint32_t)in->imm);
	else
		snprintf(buf, len, "0x%016" PRIX64, (uint64_t)(int64_t)in->imm);
}

int ptx_emit_jmp(struct ptx_fn *f, int i)
{
	const struct bpf_insn *in = &f->prog->insns[i];
	bool is32 = BPF_CLASS(in->code) == BPF_JMP32;
	uint8_t op = BPF_OP(in->code);
	int target = i + 1 + in->off;
	struct cmp c;
	char rhs[32];
	if (op == BPF_EXIT && !is32) {
		ptx_line(f, "st.param.b64 [gpux_ret], %%r0;");
		ptx_line(f, "ret;");
		return 0;
	}
	if (op == BPF_JA && !is32) {
		ptx_line(f, "bra $L%d;", target);
		return 0;
	}
	if (!cmp_of(op, &c))
		return ptx_fail(f, i, "jump opcode 0x%02x is not supported", in->code);
	operand(rhs, sizeof(rhs), in, is32, c.type);
	if (is32) {
		ptx_line(f, "cvt.u32.u64 %%w0, %%r%d;", in->dst);
		if (BPF_SRC(in->code) == BPF_X)
			ptx_line(f, "cvt.u32.u64 %%w1, %%r%d;", in->src);
	}
	int bits = is32 ? 32 : 64;
	if (c.type == 'b') {
		if (is32)
			ptx_line(f, "and.b32 %%w0, %%w0, %s;", rhs);
		else
			ptx_line(f, "and.b64 %%t0, %%r%d, %s;", in->dst, rhs);
		ptx_line(f, "setp.ne.b%d %%p, %s, 0;", bits, is32 ? "%w0" : "%t0");
	} else if (is32) {
		ptx_line(f, "setp.%s.%c32 %%p, %%w0, %s;", c.op, c.type, rhs);
	} else {
		ptx_line(f, "setp.%s.%c64 %%p, %%r%d, %s;", c.op, c.type, in->dst,
			 rhs);
	}
	ptx_line(f, "@%%p bra $L%d;", target);
	return 0;
}
