/* The VM's interpreter. bpf_vm_check.c has vouched for the opcodes,
 * registers and jump targets; what is left to check happens here: each
 * memory access against the regions a program may touch, and the
 * instruction budget that bounds loops. Arithmetic is done unsigned so
 * that no program can reach C's undefined behaviour (BPF: x / 0 = 0,
 * x % 0 = x, shifts taken modulo the width). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bpf_vm_priv.h"

#define BPF_FETCH 0x01
#define BPF_XCHG (0xe0 | BPF_FETCH)
#define BPF_CMPXCHG (0xf0 | BPF_FETCH)
#define BPF_TO_BE 0x08

int vm_fault(struct vm_exec *x, int status, const char *fmt, ...)
{
	char msg[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(x->vm->err, sizeof(x->vm->err), "%s (%s) insn %d: %s", x->prog->section,
		 x->prog->name, x->pc, msg);
	return status;
}

/* [addr, addr+size) within [base, base+len)? No overflow on the way. */
static bool inside(uint64_t addr, uint64_t size, const void *base, uint64_t len)
{
	uint64_t b = (uint64_t)(uintptr_t)base;
	return base && addr >= b && addr - b <= len && size <= len - (addr - b);
}

/* Distance from addr to the region [b, b+len), 0 inside it. */
static uint64_t gap(uint64_t addr, uint64_t b, uint64_t len)
{
	if (addr < b)
		return b - addr;
	return addr - b <= len ? 0 : addr - b - len;
}

/* A missed access: the message names the nearest region (within 4 KiB),
 * by distance, so heap layout cannot make a map value read past its end
 * look like a stack access. */
static void vm_miss(struct vm_exec *x, uint64_t addr, uint64_t size, bool write)
{
	const char *dir = write ? "store" : "load";
	unsigned long long sz = (unsigned long long)size;
	uint64_t fp = (uint64_t)(uintptr_t)(x->stack + BPF_STACK_SIZE);
	uint64_t best = 4097;
	int kind = -1; /* 0 stack, 1 ctx, 2 + i: map value i */
	uint64_t d = gap(addr, fp - BPF_STACK_SIZE, BPF_STACK_SIZE);
	if (d < best)
		best = d, kind = 0;
	if (x->ctx && (d = gap(addr, (uint64_t)(uintptr_t)x->ctx, x->ctx_size)) < best)
		best = d, kind = 1;
	for (unsigned i = 0; i < x->nval && i < VM_LIVE_VALUES; i++)
		if ((d = gap(addr, x->val[i], x->val_size[i])) <= best)
			best = d, kind = 2 + (int)i;
	if (kind == 0)
		vm_fault(x, VM_EFAULT, "%s of %llu bytes at fp%+lld is outside the 512-byte stack",
			 dir, sz, (long long)(addr - fp));
	else if (kind == 1)
		vm_fault(x, VM_EFAULT, "%s of %llu bytes at ctx%+lld is outside the %zu-byte context",
			 dir, sz, (long long)(addr - (uint64_t)(uintptr_t)x->ctx), x->ctx_size);
	else if (kind >= 2)
		vm_fault(x, VM_EFAULT, "%s of %llu bytes at value%+lld is outside the %u-byte map value",
			 dir, sz, (long long)(addr - x->val[kind - 2]), x->val_size[kind - 2]);
	else
		vm_fault(x, VM_EFAULT, "%s of %llu bytes at 0x%llx: not stack, context or a map value",
			 dir, sz, (unsigned long long)addr);
}

void *vm_reach(struct vm_exec *x, uint64_t addr, uint64_t size, bool write)
{
	if (size && inside(addr, size, x->stack, BPF_STACK_SIZE))
		return (void *)(uintptr_t)addr;
	if (size && !write && inside(addr, size, x->ctx, x->ctx_size))
		return (void *)(uintptr_t)addr;
	for (unsigned i = 0; size && i < x->nval && i < VM_LIVE_VALUES; i++)
		if (inside(addr, size, (const void *)(uintptr_t)x->val[i], x->val_size[i]))
			return (void *)(uintptr_t)addr;
	return NULL;
}

void *vm_mem(struct vm_exec *x, uint64_t addr, uint64_t size, bool write)
{
	void *p = vm_reach(x, addr, size, write);
	if (p)
		return p;
	if (size && x->ctx && inside(addr, size, x->ctx, x->ctx_size))
		return vm_fault(x, VM_EFAULT, "store to the read-only context"), NULL;
	return vm_miss(x, addr, size, write), NULL;
}

static uint64_t load_n(const void *p, int n)
{
	uint8_t b; uint16_t h; uint32_t w; uint64_t d;
	switch (n) {
	case 1: memcpy(&b, p, 1); return b;
	case 2: memcpy(&h, p, 2); return h;
	case 4: memcpy(&w, p, 4); return w;
	default: memcpy(&d, p, 8); return d;
	}
}

static void store_n(void *p, int n, uint64_t v)
{
	uint8_t b = (uint8_t)v; uint16_t h = (uint16_t)v; uint32_t w = (uint32_t)v;
	switch (n) {
	case 1: memcpy(p, &b, 1); break;
	case 2: memcpy(p, &h, 2); break;
	case 4: memcpy(p, &w, 4); break;
	default: memcpy(p, &v, 8); break;
	}
}

static uint64_t alu(uint8_t op, uint64_t a, uint64_t b, bool is64)
{
	unsigned sh = is64 ? 63 : 31;
	if (!is64) {
		a = (uint32_t)a;
		b = (uint32_t)b;
	}
	switch (op) {
	case BPF_ADD: return a + b;
	case BPF_SUB: return a - b;
	case BPF_MUL: return a * b;
	case BPF_DIV: return b ? a / b : 0;
	case BPF_MOD: return b ? a % b : a;
	case BPF_OR: return a | b;
	case BPF_AND: return a & b;
	case BPF_XOR: return a ^ b;
	case BPF_LSH: return a << (b & sh);
	case BPF_RSH: return a >> (b & sh);
	case BPF_ARSH:
		/* sign fill by hand: >> of a negative value is implementation-defined */
		if (is64)
			return (a >> (b & 63)) | ((a >> 63) && (b & 63) ? ~0ull << (64 - (b & 63)) : 0);
		return (uint32_t)((a >> (b & 31)) |
				  ((a >> 31) && (b & 31) ? ~0u << (32 - (b & 31)) : 0));
	case BPF_NEG: return 0 - a;
	case BPF_MOV: return b;
	default: return 0; /* refused by the checks */
	}
}

static uint64_t byteswap(uint64_t v, int32_t bits, bool to_be)
{
	if (!to_be) /* the host is little endian: truncate */
		return bits == 16 ? (uint16_t)v : bits == 32 ? (uint32_t)v : v;
	if (bits == 16)
		return __builtin_bswap16((uint16_t)v);
	return bits == 32 ? __builtin_bswap32((uint32_t)v) : __builtin_bswap64(v);
}

static bool cond(uint8_t op, uint64_t a, uint64_t b, bool is64)
{
	if (!is64) {
		a = (uint32_t)a;
		b = (uint32_t)b;
	}
	int64_t sa = is64 ? (int64_t)a : (int32_t)(uint32_t)a;
	int64_t sb = is64 ? (int64_t)b : (int32_t)(uint32_t)b;
	switch (op) {
	case BPF_JA: return true;
	case BPF_JEQ: return a == b;
	case BPF_JNE: return a != b;
	case BPF_JGT: return a > b;
	case BPF_JGE: return a >= b;
	case BPF_JLT: return a < b;
	case BPF_JLE: return a <= b;
	case BPF_JSET: return a & b;
	case BPF_JSGT: return sa > sb;
	case BPF_JSGE: return sa >= sb;
	case BPF_JSLT: return sa < sb;
	case BPF_JSLE: return sa <= sb;
	default: return false;
	}
}

static int atomic(struct vm_exec *x, const struct bpf_insn *in)
{
	int n = bpf_size_bytes(in->code);
	void *p = vm_mem(x, x->reg[in->dst] + (uint64_t)(int64_t)in->off, (uint64_t)n, true);
	if (!p)
		return VM_EFAULT;
	uint64_t old = load_n(p, n), src = x->reg[in->src];
	uint64_t mask = n == 4 ? 0xffffffffull : ~0ull;
	switch (in->imm) {
	case BPF_XCHG:
		store_n(p, n, src);
		x->reg[in->src] = old;
		return 0;
	case BPF_CMPXCHG:
		if (old == (x->reg[0] & mask))
			store_n(p, n, src);
		x->reg[0] = old;
		return 0;
	default:
		store_n(p, n, alu((uint8_t)(in->imm & 0xf0), old, src, true));
		if (in->imm & BPF_FETCH)
			x->reg[in->src] = old;
		return 0;
	}
}

/* One instruction, any opcode the checks let through: *pc moves on, or
 * a VM_E* status (1: exit, r0 in *ret). */
static int step(struct vm_exec *x, const struct bpf_insn *in, int *pc, uint64_t *ret)
{
	uint64_t *r = x->reg;
	uint8_t c = in->code, cls = BPF_CLASS(c), op = BPF_OP(c);
	uint64_t imm = (uint64_t)(int64_t)in->imm;
	uint64_t src = BPF_SRC(c) == BPF_X ? r[in->src] : imm;
	uint64_t addr;
	void *p;
	int rc;
	switch (cls) {
	case BPF_ALU64:
	case BPF_ALU:
		if (op == BPF_END)
			r[in->dst] = byteswap(r[in->dst], in->imm, BPF_SRC(c) == BPF_TO_BE);
		else
			r[in->dst] = alu(op, r[in->dst], src, cls == BPF_ALU64);
		if (cls == BPF_ALU)
			r[in->dst] = (uint32_t)r[in->dst];
		++*pc;
		return 0;
	case BPF_JMP:
	case BPF_JMP32:
		if (op == BPF_EXIT) {
			if (ret)
				*ret = r[0];
			return 1;
		}
		if (op == BPF_CALL) {
			if ((rc = vm_helper(x, in->imm)))
				return rc;
			++*pc;
			return 0;
		}
		*pc += cond(op, r[in->dst], src, cls == BPF_JMP) ? 1 + in->off : 1;
		return 0;
	case BPF_LDX:
		addr = r[in->src] + (uint64_t)(int64_t)in->off;
		if (!(p = vm_mem(x, addr, (uint64_t)bpf_size_bytes(c), false)))
			return VM_EFAULT;
		r[in->dst] = load_n(p, bpf_size_bytes(c));
		++*pc;
		return 0;
	case BPF_ST:
	case BPF_STX:
		if (BPF_MODE(c) == BPF_ATOMIC) {
			if ((rc = atomic(x, in)))
				return rc;
			++*pc;
			return 0;
		}
		addr = r[in->dst] + (uint64_t)(int64_t)in->off;
		if (!(p = vm_mem(x, addr, (uint64_t)bpf_size_bytes(c), true)))
			return VM_EFAULT;
		store_n(p, bpf_size_bytes(c), cls == BPF_ST ? imm : r[in->src]);
		++*pc;
		return 0;
	case BPF_LD:
		if (in->src == BPF_PSEUDO_MAP_IDX)
			r[in->dst] = VM_MAP_HANDLE(in->imm);
		else
			r[in->dst] = (uint32_t)in->imm | (uint64_t)(uint32_t)in[1].imm << 32;
		*pc += 2;
		return 0;
	default:
		return vm_fault(x, VM_EINSN, "unknown instruction 0x%02x", c);
	}
}

/* An 8-byte access on the stack, the common case, without vm_mem's walk. */
static inline void *stack8(struct vm_exec *x, uint64_t addr)
{
	uint64_t lo = (uint64_t)(uintptr_t)x->stack;
	return addr - lo <= BPF_STACK_SIZE - 8 ? (void *)(uintptr_t)addr : NULL;
}

/* An 8-byte load from the context (cuda: fields). */
static inline void *ctx8(struct vm_exec *x, uint64_t addr)
{
	uint64_t lo = (uint64_t)(uintptr_t)x->ctx;
	return x->ctx_size >= 8 && addr - lo <= x->ctx_size - 8 ? (void *)(uintptr_t)addr : NULL;
}

#define IMM ((uint64_t)(int64_t)in->imm)

/* The hot opcodes, numbered densely so that the switch is one indexed
 * jump (their raw values are sparse: a compare tree otherwise). */
enum { H_OTHER, H_MOV_K, H_MOV_X, H_ADD_K, H_ADD_X, H_JA, H_JEQ_K, H_JNE_K, H_EXIT,
       H_LDX_DW, H_STX_DW, H_ST_DW };
static const uint8_t hot[256] = {
	[BPF_ALU64 | BPF_MOV | BPF_K] = H_MOV_K,
	[BPF_ALU64 | BPF_MOV | BPF_X] = H_MOV_X,
	[BPF_ALU64 | BPF_ADD | BPF_K] = H_ADD_K,
	[BPF_ALU64 | BPF_ADD | BPF_X] = H_ADD_X,
	[BPF_JMP | BPF_JA] = H_JA,
	[BPF_JMP | BPF_JEQ | BPF_K] = H_JEQ_K,
	[BPF_JMP | BPF_JNE | BPF_K] = H_JNE_K,
	[BPF_JMP | BPF_EXIT] = H_EXIT,
	[BPF_LDX | BPF_MEM | BPF_DW] = H_LDX_DW,
	[BPF_STX | BPF_MEM | BPF_DW] = H_STX_DW,
	[BPF_ST | BPF_MEM | BPF_DW] = H_ST_DW,
};

/* The hot opcodes (what host programs are mostly made of: moves, adds,
 * 8-byte stack and value accesses, equality jumps, calls) are decoded
 * by one switch on the whole opcode byte; the rest go through step().
 * The budget counts every instruction. */
int vm_exec(struct vm_exec *x, uint64_t *ret)
{
	const struct bpf_insn *insns = x->prog->insns;
	uint64_t *r = x->reg, budget = x->vm->budget, n = x->insns;
	int pc = 0, rc;
	for (;;) {
		const struct bpf_insn *in = &insns[pc];
		void *p;
		if (++n > budget) {
			x->insns = n - 1;
			x->pc = pc;
			return vm_fault(x, VM_EBUDGET, "instruction budget of %llu exhausted (unbounded loop?)",
					(unsigned long long)budget);
		}
		switch (hot[in->code]) {
		case H_MOV_K:
			r[in->dst] = IMM;
			pc++;
			continue;
		case H_MOV_X:
			r[in->dst] = r[in->src];
			pc++;
			continue;
		case H_ADD_K:
			r[in->dst] += IMM;
			pc++;
			continue;
		case H_ADD_X:
			r[in->dst] += r[in->src];
			pc++;
			continue;
		case H_JA:
			pc += 1 + in->off;
			continue;
		case H_JEQ_K:
			pc += r[in->dst] == IMM ? 1 + in->off : 1;
			continue;
		case H_JNE_K:
			pc += r[in->dst] != IMM ? 1 + in->off : 1;
			continue;
		case H_EXIT:
			x->insns = n;
			if (ret)
				*ret = r[0];
			return 0;
		case H_LDX_DW:
			if (!(p = stack8(x, r[in->src] + (uint64_t)(int64_t)in->off)) &&
			    !(p = ctx8(x, r[in->src] + (uint64_t)(int64_t)in->off)))
				break;
			memcpy(&r[in->dst], p, 8);
			pc++;
			continue;
		case H_STX_DW:
			if (!(p = stack8(x, r[in->dst] + (uint64_t)(int64_t)in->off)))
				break;
			memcpy(p, &r[in->src], 8);
			pc++;
			continue;
		case H_ST_DW: {
			uint64_t v = IMM;
			if (!(p = stack8(x, r[in->dst] + (uint64_t)(int64_t)in->off)))
				break;
			memcpy(p, &v, 8);
			pc++;
			continue;
		}
		default:
			break;
		}
		x->pc = pc;
		x->insns = n;
		if ((rc = step(x, in, &pc, ret)))
			return rc > 0 ? 0 : rc;
	}
}
