/* Checks a VM program before it may run (bpf_vm.h): a simple safety
 * pass, not the kernel's verifier. What it cannot decide (memory bounds,
 * loop termination, helper arguments) vm_run checks as it goes, so the
 * interpreter may trust what is checked here: opcodes it knows,
 * registers it has, jump targets it can reach. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "bpf_vm_priv.h"
#include "driver_kfuncs.h"
#include "cuda_actions.h"

#define BPF_FETCH 0x01
#define BPF_XCHG (0xe0 | BPF_FETCH)
#define BPF_CMPXCHG (0xf0 | BPF_FETCH)

static int refuse(const struct vm_prog *p, int pc, char *err, size_t errlen,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int refuse(const struct vm_prog *p, int pc, char *err, size_t errlen,
		  const char *fmt, ...)
{
	char msg[192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s (%s) insn %d: %s", p->section, p->name, pc, msg);
	return -1;
}

bool vm_helper_known(const struct vm *vm, int32_t id)
{
	switch (id) {
	case BPF_H_MAP_LOOKUP: case BPF_H_MAP_UPDATE: case BPF_H_MAP_DELETE:
	case BPF_H_KTIME_GET_NS: case BPF_H_GET_SMP_PROCESSOR_ID:
	case BPF_H_GET_CURRENT_PID_TGID: case BPF_H_GET_CURRENT_UID_GID:
	case BPF_H_GET_CURRENT_COMM: case BPF_H_PROBE_READ_USER: case BPF_H_PROBE_READ:
	case BPF_H_PROBE_READ_USER_STR: case BPF_H_KTIME_GET_BOOT_NS:
	case BPF_H_RINGBUF_OUTPUT: case BPF_H_GET_PRANDOM_U32:
	case BPF_H_GET_NUMA_NODE_ID: case BPF_H_GET_CURRENT_CGROUP_ID:
	case BPF_H_TRACE_PRINTK:
		return true;
	case BPF_H_PROBE_READ_KERNEL: /* the driver's structures: the simulator's */
		return vm->driver;
	default:
		return (id >= GPUX_H_FIRST && id < GPUX_H_END) ||
		       (vm->driver && id >= GPUX_K_FIRST && id < GPUX_K_END);
	}
}

static bool alu_op_known(uint8_t op)
{
	return op <= BPF_END; /* 0x00..0xd0 are all ALU ops */
}

static bool atomic_known(int32_t imm)
{
	switch (imm) {
	case BPF_ADD: case BPF_OR: case BPF_AND: case BPF_XOR:
	case BPF_ADD | BPF_FETCH: case BPF_OR | BPF_FETCH:
	case BPF_AND | BPF_FETCH: case BPF_XOR | BPF_FETCH:
	case BPF_XCHG: case BPF_CMPXCHG:
		return true;
	default:
		return false;
	}
}

/* One instruction; *jump gets its target or -1. */
static const char *check_insn(const struct vm *vm, const struct bpf_insn *in, int pc, int n,
			      int *jump)
{
	uint8_t c = in->code, cls = BPF_CLASS(c), op = BPF_OP(c);
	*jump = -1;
	if (in->dst > BPF_REG_FP || in->src > BPF_REG_FP)
		return in->dst > BPF_REG_FP ? "bad destination register" : "bad source register";
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		if (!alu_op_known(op) || in->off)
			return "unknown ALU instruction";
		if (op == BPF_END && (cls == BPF_ALU64 || (in->imm != 16 && in->imm != 32 && in->imm != 64)))
			return "unknown byte swap";
		if (op == BPF_NEG && BPF_SRC(c) == BPF_X)
			return "unknown ALU instruction";
		if (in->dst == BPF_REG_FP)
			return "r10 is read-only";
		return NULL;
	case BPF_JMP:
	case BPF_JMP32:
		if (op == BPF_EXIT || op == BPF_CALL) {
			if (cls == BPF_JMP32 || BPF_SRC(c) == BPF_X)
				return "unknown jump instruction";
			if (op == BPF_EXIT)
				return NULL;
			if (in->src == 1)
				return "bpf-to-bpf calls are not supported by the VM";
			if (in->src == 2)
				return "kfunc calls are for the driver, not the VM";
			if (in->src || !vm_helper_known(vm, in->imm))
				return "call to a helper the VM does not implement";
			return NULL;
		}
		if (op > BPF_JSLE || (op == BPF_JA && (cls == BPF_JMP32 || BPF_SRC(c) == BPF_X)))
			return "unknown jump instruction";
		*jump = pc + 1 + in->off;
		if (*jump < 0 || *jump >= n)
			return "jump out of the program";
		return NULL;
	case BPF_LDX:
		if (BPF_MODE(c) != BPF_MEM)
			return "unknown load";
		return in->dst == BPF_REG_FP ? "r10 is read-only" : NULL;
	case BPF_ST:
		return BPF_MODE(c) == BPF_MEM ? NULL : "unknown store";
	case BPF_STX:
		if (BPF_MODE(c) == BPF_MEM)
			return NULL;
		if (BPF_MODE(c) != BPF_ATOMIC || (BPF_SIZE(c) != BPF_W && BPF_SIZE(c) != BPF_DW) ||
		    !atomic_known(in->imm))
			return "unknown atomic instruction";
		return NULL;
	case BPF_LD:
		if (!bpf_is_lddw(in))
			return "unknown load (legacy packet access?)";
		if (pc + 1 >= n || in[1].code || in[1].dst || in[1].src || in[1].off || in->off)
			return "malformed 64-bit immediate load";
		if (in->dst == BPF_REG_FP)
			return "r10 is read-only";
		if (in->src == BPF_PSEUDO_MAP_IDX && (in->imm < 0 || in->imm >= vm->nmaps))
			return "map index out of range";
		if (in->src && in->src != BPF_PSEUDO_MAP_IDX)
			return "unresolved map or data reference";
		return NULL;
	default:
		return "unknown instruction class";
	}
}

int vm_check_prog(const struct vm *vm, const struct vm_prog *p, char *err, size_t errlen)
{
	if (p->n <= 0)
		return refuse(p, 0, err, errlen, "empty program");
	/* second halves of lddw: not instructions, not jump targets */
	unsigned char *half = calloc((size_t)p->n, 1);
	if (!half)
		return refuse(p, 0, err, errlen, "out of memory");
	int rc = 0;
	for (int pc = 0; pc < p->n && !rc; pc++) {
		int jump;
		const char *why = check_insn(vm, &p->insns[pc], pc, p->n, &jump);
		if (why)
			rc = refuse(p, pc, err, errlen, "%s (opcode 0x%02x)", why, p->insns[pc].code);
		else if (bpf_is_lddw(&p->insns[pc]))
			half[++pc] = 1;
	}
	for (int pc = 0; pc < p->n && !rc; pc++) {
		int jump;
		if (half[pc])
			continue;
		check_insn(vm, &p->insns[pc], pc, p->n, &jump);
		if (jump >= 0 && half[jump])
			rc = refuse(p, pc, err, errlen, "jump into the middle of a 64-bit load");
	}
	const struct bpf_insn *last = &p->insns[p->n - 1];
	if (!rc && (half[p->n - 1] ||
		    (last->code != (BPF_JMP | BPF_EXIT) && last->code != (BPF_JMP | BPF_JA))))
		rc = refuse(p, p->n - 1, err, errlen, "falls through past the end");
	free(half);
	return rc;
}

/* Bytes of stack below r10 the program can reach: its r10-based loads
 * and stores, and r10 copies moved down by a constant (pointers it
 * passes to helpers, which reach upwards from there). Any other use of
 * r10 counts the whole stack. vm_run_prog clears only this much. */
int vm_stack_depth(const struct vm_prog *p)
{
	int depth = 0;
	for (int pc = 0; pc < p->n; pc++) {
		const struct bpf_insn *in = &p->insns[pc];
		unsigned cls = BPF_CLASS(in->code);
		int at = 0;
		if (bpf_is_lddw(in)) {
			pc++;
			continue;
		}
		if (cls == BPF_LDX && in->src == BPF_REG_FP)
			at = -in->off;
		else if ((cls == BPF_ST || cls == BPF_STX) && in->dst == BPF_REG_FP)
			at = -in->off;
		else if (cls == BPF_ALU64 && in->code == (BPF_ALU64 | BPF_MOV | BPF_X) &&
			 in->src == BPF_REG_FP) {
			const struct bpf_insn *nx = pc + 1 < p->n ? &p->insns[pc + 1] : NULL;
			if (!nx || nx->code != (BPF_ALU64 | BPF_ADD | BPF_K) || nx->dst != in->dst ||
			    nx->imm > 0)
				return BPF_STACK_SIZE;
			at = -nx->imm;
		} else if (in->src == BPF_REG_FP && (cls == BPF_ALU || cls == BPF_ALU64 ||
						     cls == BPF_JMP || cls == BPF_JMP32 || cls == BPF_STX)) {
			return BPF_STACK_SIZE;
		}
		if (at > depth)
			depth = at;
	}
	return depth < BPF_STACK_SIZE ? depth : BPF_STACK_SIZE;
}
