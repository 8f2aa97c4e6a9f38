/* The probe's stack in registers. eBPF addresses its 512-byte stack
 * through r10; PTX local memory costs every thread a store and a load
 * that ptxas keeps even when nothing reads them back. When each access
 * is a whole 8-byte word at a constant offset from r10 and the only
 * pointers into the stack are keys handed to inline map code (which
 * takes the key words by value), slot k becomes the virtual register
 * %s<k> and the probe touches no local memory at all. Otherwise the
 * stack stays a .local array (ptx_mem.c). */
#include "ptx_emit.h"

/* Whether r10 + off is a whole aligned 8-byte slot of the stack. */
static bool slot_at(int off)
{
	int at = BPF_STACK_SIZE + off;
	return at >= 0 && at + 8 <= BPF_STACK_SIZE && at % 8 == 0;
}

static bool whole_slot(const struct bpf_insn *in)
{
	return BPF_SIZE(in->code) == BPF_DW && BPF_MODE(in->code) == BPF_MEM && slot_at(in->off);
}

/* Walks the program as the emitter will: r1's map per basic block, and
 * r2 = r10 + K only as the key of the next call. */
void ptx_stack_plan(struct ptx_fn *f)
{
	const struct dev_prog *p = f->prog;
	int r1_map = -1;
	bool r2_key = false;
	f->stack_regs = false;
	for (int i = 0; i < p->ninsns; i++) {
		const struct bpf_insn *in = &p->insns[i];
		uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
		bool x = (in->code & BPF_X) != 0;
		if (f->is_target[i])
			r1_map = -1;
		if (r2_key && f->is_target[i])
			return; /* the key's pointer would cross a jump */
		switch (cls) {
		case BPF_LDX:
			if (in->src == BPF_REG_FP && !whole_slot(in))
				return;
			break;
		case BPF_ST: case BPF_STX:
			if (in->dst == BPF_REG_FP && !whole_slot(in))
				return;
			if (cls == BPF_STX && in->src == BPF_REG_FP)
				return; /* the stack's address stored */
			break;
		case BPF_ALU: case BPF_ALU64:
			if (x && in->src == BPF_REG_FP) {
				/* only `r2 = r10` then `r2 += K` */
				if (cls != BPF_ALU64 || op != BPF_MOV || in->dst != 2 || in->off)
					return;
				r2_key = true;
				break;
			}
			if (in->dst == 2 && r2_key && !(cls == BPF_ALU64 && op == BPF_ADD && !x))
				return;
			break;
		case BPF_JMP: case BPF_JMP32:
			if (op == BPF_CALL) {
				if (r2_key && !ptx_call_by_value(f, i, r1_map))
					return;
				r2_key = false;
				r1_map = -1;
			} else if (r2_key || (x && in->src == BPF_REG_FP) ||
				   (op != BPF_JA && op != BPF_EXIT && in->dst == BPF_REG_FP)) {
				return;
			}
			break;
		default:
			break;
		}
		r1_map = ptx_r1_map_after(in, r1_map);
		if (in->dst == 2 && r2_key && (cls == BPF_LDX || cls == BPF_LD))
			return;
		if (bpf_is_lddw(in))
			i++;
	}
	f->stack_regs = !r2_key;
}

int ptx_stack_access(struct ptx_fn *f, int i)
{
	const struct bpf_insn *in = &f->prog->insns[i];
	uint8_t cls = BPF_CLASS(in->code);
	int slot = (BPF_STACK_SIZE + in->off) / 8;
	if (cls == BPF_LDX)
		ptx_line(f, "mov.b64 %%r%d, %%s%d;", in->dst, slot);
	else if (cls == BPF_ST)
		ptx_line(f, "mov.b64 %%s%d, %d;", slot, in->imm);
	else
		ptx_line(f, "mov.b64 %%s%d, %%r%d;", slot, in->src);
	return 0;
}

void ptx_stack_key_word(struct ptx_fn *f, int w, const char *dst)
{
	int at = BPF_STACK_SIZE + f->r2_fp + 8 * w;
	bool slot = f->r2_fp_known && slot_at(f->r2_fp + 8 * w);
	if (f->stack_regs && slot)
		ptx_line(f, "mov.b64 %s, %%s%d;", dst, at / 8);
	else if (slot)
		ptx_line(f, "ld.local.u64 %s, [gpux_stack+%d];", dst, at);
	else
		ptx_line(f, "ld.u64 %s, [%%r2+%d];", dst, 8 * w);
}

void ptx_stack_key(struct ptx_fn *f)
{
	ptx_stack_key_word(f, 0, "%t0");
}
