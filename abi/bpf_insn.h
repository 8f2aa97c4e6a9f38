/* Contract between what writes eBPF and what runs it: the instruction
 * encoding (the Linux ISA).
 *   Writers: codegen's device lowering and assembler (codegen/), and
 *   LLVM's BPF backend for host programs.
 *   Readers: the SIMT verifier, the disassembler and the PTX JIT
 *   (codegen/), the userspace VM (vm/bpf_vm*.c) in gpux and in
 *   traced processes, and the kernel. */
#ifndef GPUX_BPF_INSN_H
#define GPUX_BPF_INSN_H

#include <stdint.h>

struct bpf_insn {
	uint8_t code;
	uint8_t dst : 4;
	uint8_t src : 4;
	int16_t off;
	int32_t imm;
};

/* instruction classes */
#define BPF_CLASS(c) ((c) & 0x07)
#define BPF_LD 0x00
#define BPF_LDX 0x01
#define BPF_ST 0x02
#define BPF_STX 0x03
#define BPF_ALU 0x04
#define BPF_JMP 0x05
#define BPF_JMP32 0x06
#define BPF_ALU64 0x07

/* load/store size and mode */
#define BPF_SIZE(c) ((c) & 0x18)
#define BPF_W 0x00
#define BPF_H 0x08
#define BPF_B 0x10
#define BPF_DW 0x18
#define BPF_MODE(c) ((c) & 0xe0)
#define BPF_IMM 0x00
#define BPF_MEM 0x60
#define BPF_ATOMIC 0xc0

/* ALU and jump operations, and the operand source */
#define BPF_OP(c) ((c) & 0xf0)
#define BPF_SRC(c) ((c) & 0x08)
#define BPF_K 0x00
#define BPF_X 0x08
#define BPF_ADD 0x00
#define BPF_SUB 0x10
#define BPF_MUL 0x20
#define BPF_DIV 0x30
#define BPF_OR 0x40
#define BPF_AND 0x50
#define BPF_LSH 0x60
#define BPF_RSH 0x70
#define BPF_NEG 0x80
#define BPF_MOD 0x90
#define BPF_XOR 0xa0
#define BPF_MOV 0xb0
#define BPF_ARSH 0xc0
#define BPF_END 0xd0
#define BPF_JA 0x00
#define BPF_JEQ 0x10
#define BPF_JGT 0x20
#define BPF_JGE 0x30
#define BPF_JSET 0x40
#define BPF_JNE 0x50
#define BPF_JSGT 0x60
#define BPF_JSGE 0x70
#define BPF_CALL 0x80
#define BPF_EXIT 0x90
#define BPF_JLT 0xa0
#define BPF_JLE 0xb0
#define BPF_JSLT 0xc0
#define BPF_JSLE 0xd0

/* src of a 64-bit immediate load that names a map by its index */
#define BPF_PSEUDO_MAP_IDX 5

#define BPF_NREGS 11 /* r0..r9 and the frame pointer r10 */
#define BPF_REG_FP 10
#define BPF_STACK_SIZE 512

static inline int bpf_size_bytes(uint8_t code)
{
	switch (BPF_SIZE(code)) {
	case BPF_B: return 1;
	case BPF_H: return 2;
	case BPF_W: return 4;
	default: return 8;
	}
}

/* A 64-bit immediate load takes two slots. */
static inline int bpf_is_lddw(const struct bpf_insn *i)
{
	return i->code == (BPF_LD | BPF_DW | BPF_IMM);
}

#endif
