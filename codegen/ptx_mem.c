/* Loads, stores and 64-bit immediates. Accesses through r10 go straight
 * to the .local stack array (r10 is read-only, so its offset is known);
 * every other pointer (context, map value, a copy of r10) is generic. */
#include <inttypes.h>

#include "gpux_dev.h"
#include "ptx_emit.h"

static const char *width(uint8_t code)
{
	switch (BPF_SIZE(code)) {
	case BPF_B: return "u8";
	case BPF_H: return "u16";
	case BPF_W: return "u32";
	default: return "u64";
	}
}

/* "[%r1+8]" or, for the frame pointer, ".local" and "[gpux_stack+504]". */
static int address(struct ptx_fn *f, int i, int base, char *space,
		   char *addr, size_t len)
{
	const struct bpf_insn *in = &f->prog->insns[i];
	if (base != BPF_REG_FP) {
		space[0] = '\0';
		snprintf(addr, len, "[%%r%d+%d]", base, in->off);
		return 0;
	}
	int at = BPF_STACK_SIZE + in->off;
	if (at < 0 || at + bpf_size_bytes(in->code) > BPF_STACK_SIZE)
		return ptx_fail(f, i, "stack access at r10%+d is outside the "
				"%d-byte stack", in->off, BPF_STACK_SIZE);
	snprintf(space, 8, ".local");
	snprintf(addr, len, "[gpux_stack+%d]", at);
	return 0;
}

/* A load through the context register: bytes of one of %c0..%c2. */
static int ctx_field(struct ptx_fn *f, int i)
{
	const struct bpf_insn *in = &f->prog->insns[i];
	int size = bpf_size_bytes(in->code), off = in->off;
	if (off < 0 || off + size > 24 || off % size)
		return ptx_fail(f, i, "context access at %+d (%d bytes) is outside "
				"its 24 bytes or misaligned", off, size);
	int w = off / 8, shift = (off % 8) * 8;
	if (size == 8) {
		ptx_line(f, "mov.b64 %%r%d, %%c%d;", in->dst, w);
		return 0;
	}
	ptx_line(f, "shr.b64 %%r%d, %%c%d, %d;", in->dst, w, shift);
	ptx_line(f, "and.b64 %%r%d, %%r%d, 0x%" PRIx64 ";", in->dst, in->dst,
		 (UINT64_C(1) << (8 * size)) - 1);
	return 0;
}

static int lddw(struct ptx_fn *f, int i)
{
	const struct dev_prog *p = f->prog;
	const struct bpf_insn *in = &p->insns[i];
	if (i + 1 >= p->ninsns)
		return ptx_fail(f, i, "64-bit immediate load without its second half");
	if (in->dst == BPF_REG_FP)
		return ptx_fail(f, i, "r10 is read-only");
	if (in->src == BPF_PSEUDO_MAP_IDX) {
		if (in->imm < 0 || in->imm >= p->nmaps)
			return ptx_fail(f, i, "map index %d out of range", in->imm);
		/* The descriptor's generic address (see ptx/README.md). */
		ptx_line(f, "cvta.global.u64 %%r%d, " GPUX_SYM_MAP "%d;", in->dst, in->imm);
		return 0;
	}
	if (in->src != 0)
		return ptx_fail(f, i, "64-bit immediate load with source %d "
				"is not supported", in->src);
	uint64_t v = (uint64_t)(uint32_t)in->imm |
		     (uint64_t)(uint32_t)p->insns[i + 1].imm << 32;
	ptx_line(f, "mov.b64 %%r%d, 0x%016" PRIX64 ";", in->dst, v);
	return 0;
}

int ptx_emit_mem(struct ptx_fn *f, int i)
{
	const struct bpf_insn *in = &f->prog->insns[i];
	uint8_t cls = BPF_CLASS(in->code);
	char space[8], addr[48];
	if (cls == BPF_LD) {
		if (bpf_is_lddw(in))
			return lddw(f, i);
		return ptx_fail(f, i, "legacy packet load 0x%02x is not supported",
				in->code);
	}
	if (BPF_MODE(in->code) == BPF_ATOMIC)
		return ptx_fail(f, i, "atomic memory operations are not allowed "
				"in device probes");
	if (BPF_MODE(in->code) != BPF_MEM)
		return ptx_fail(f, i, "memory mode 0x%02x is not supported",
				BPF_MODE(in->code));
	if (cls == BPF_LDX) {
		if (in->dst == BPF_REG_FP)
			return ptx_fail(f, i, "r10 is read-only");
		if (in->src == f->ctx_reg)
			return ctx_field(f, i);
		if (in->src == BPF_REG_FP && f->stack_regs)
			return ptx_stack_access(f, i);
		if (in->src < BPF_NREGS && f->lk_at[in->src] >= 0 && in->off == 0 &&
		    BPF_SIZE(in->code) == BPF_DW) {
			/* a looked-up value's first word, loaded with its slot */
			ptx_line(f, "mov.b64 %%r%d, %%lv%d;", in->dst, f->lk_at[in->src]);
			return 0;
		}
		if (address(f, i, in->src, space, addr, sizeof(addr)))
			return -1;
		ptx_line(f, "ld%s.%s %%r%d, %s;", space, width(in->code), in->dst,
			 addr);
		return 0;
	}
	if (in->dst == BPF_REG_FP && f->stack_regs)
		return ptx_stack_access(f, i);
	if (address(f, i, in->dst, space, addr, sizeof(addr)))
		return -1;
	if (cls == BPF_ST) {
		/* st takes no immediate source. */
		ptx_line(f, "mov.b64 %%t0, %" PRId32 ";", in->imm);
		ptx_line(f, "st%s.%s %s, %%t0;", space, width(in->code), addr);
	} else {
		ptx_line(f, "st%s.%s %s, %%r%d;", space, width(in->code), addr,
			 in->src);
	}
	return 0;
}
