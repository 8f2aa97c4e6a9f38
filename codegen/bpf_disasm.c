/* eBPF to text, in the assembler's syntax (bpf_asm.h). */
#include <inttypes.h>

#include "bpf_asm.h"

static const char *size_name(uint8_t code)
{
	switch (BPF_SIZE(code)) {
	case BPF_B: return "u8";
	case BPF_H: return "u16";
	case BPF_W: return "u32";
	default: return "u64";
	}
}

static const char *alu_op(uint8_t op)
{
	switch (op) {
	case BPF_ADD: return "+=";
	case BPF_SUB: return "-=";
	case BPF_MUL: return "*=";
	case BPF_DIV: return "/=";
	case BPF_OR: return "|=";
	case BPF_AND: return "&=";
	case BPF_LSH: return "<<=";
	case BPF_RSH: return ">>=";
	case BPF_MOD: return "%=";
	case BPF_XOR: return "^=";
	case BPF_MOV: return "=";
	case BPF_ARSH: return "s>>=";
	default: return NULL;
	}
}

static const char *jmp_op(uint8_t op)
{
	switch (op) {
	case BPF_JEQ: return "==";
	case BPF_JGT: return ">";
	case BPF_JGE: return ">=";
	case BPF_JSET: return "&";
	case BPF_JNE: return "!=";
	case BPF_JSGT: return "s>";
	case BPF_JSGE: return "s>=";
	case BPF_JLT: return "<";
	case BPF_JLE: return "<=";
	case BPF_JSLT: return "s<";
	case BPF_JSLE: return "s<=";
	default: return NULL;
	}
}

static void mem(FILE *out, const struct bpf_insn *i, int base)
{
	fprintf(out, "*(%s *)(r%d %c %d)", size_name(i->code), base,
		i->off < 0 ? '-' : '+', i->off < 0 ? -i->off : i->off);
}

int bpf_disasm_insn(FILE *out, const struct bpf_insn *insns, int k, int n,
		    const struct dev_map *maps, int nmaps)
{
	const struct bpf_insn *i = &insns[k];
	uint8_t cls = BPF_CLASS(i->code);
	char r = 'r';
	switch (cls) {
	case BPF_LD:
		if (bpf_is_lddw(i) && k + 1 < n) {
			if (i->src == BPF_PSEUDO_MAP_IDX && i->imm >= 0 && i->imm < nmaps)
				fprintf(out, "r%d = map[%s] ll", i->dst, maps[i->imm].name);
			else
				fprintf(out, "r%d = 0x%" PRIx64 " ll", i->dst,
					(uint64_t)(uint32_t)i->imm |
						((uint64_t)(uint32_t)insns[k + 1].imm << 32));
			return 2;
		}
		break;
	case BPF_LDX:
		if (BPF_MODE(i->code) != BPF_MEM)
			break;
		fprintf(out, "r%d = ", i->dst);
		mem(out, i, i->src);
		return 1;
	case BPF_ST:
	case BPF_STX:
		if (BPF_MODE(i->code) == BPF_ATOMIC && cls == BPF_STX) {
			fputs("lock ", out);
			mem(out, i, i->dst);
			fprintf(out, " += r%d", i->src);
			return 1;
		}
		if (BPF_MODE(i->code) != BPF_MEM)
			break;
		mem(out, i, i->dst);
		if (cls == BPF_STX)
			fprintf(out, " = r%d", i->src);
		else
			fprintf(out, " = %d", i->imm);
		return 1;
	case BPF_ALU:
		r = 'w';
		/* fall through */
	case BPF_ALU64: {
		if (BPF_OP(i->code) == BPF_NEG) {
			fprintf(out, "%c%d = -%c%d", r, i->dst, r, i->dst);
			return 1;
		}
		const char *op = alu_op(BPF_OP(i->code));
		if (!op)
			break;
		if (BPF_SRC(i->code) == BPF_X)
			fprintf(out, "%c%d %s %c%d", r, i->dst, op, r, i->src);
		else
			fprintf(out, "%c%d %s %d", r, i->dst, op, i->imm);
		return 1;
	}
	case BPF_JMP32:
		r = 'w';
		/* fall through */
	case BPF_JMP: {
		uint8_t op = BPF_OP(i->code);
		if (cls == BPF_JMP && op == BPF_EXIT) {
			fputs("exit", out);
			return 1;
		}
		if (cls == BPF_JMP && op == BPF_CALL) {
			const struct dev_helper_info *h = dev_helper_info(i->imm);
			if (h)
				fprintf(out, "call %s", h->name);
			else
				fprintf(out, "call %d", i->imm);
			return 1;
		}
		if (cls == BPF_JMP && op == BPF_JA) {
			fprintf(out, "goto %+d", i->off);
			return 1;
		}
		const char *cmp = jmp_op(op);
		if (!cmp)
			break;
		if (BPF_SRC(i->code) == BPF_X)
			fprintf(out, "if %c%d %s %c%d goto %+d", r, i->dst, cmp, r, i->src, i->off);
		else
			fprintf(out, "if %c%d %s %d goto %+d", r, i->dst, cmp, i->imm, i->off);
		return 1;
	}
	}
	fprintf(out, "invalid opcode 0x%02x", i->code);
	return 1;
}

void bpf_disasm(FILE *out, const struct dev_prog *prog)
{
	for (int k = 0; k < prog->nmaps; k++)
		fprintf(out, ".map %s %u %u %u\n", prog->maps[k].name,
			prog->maps[k].key_size, prog->maps[k].value_size,
			prog->maps[k].max_entries);
	for (int k = 0; k < prog->ninsns;) {
		fprintf(out, "%4d: ", k);
		k += bpf_disasm_insn(out, prog->insns, k, prog->ninsns, prog->maps,
				     prog->nmaps);
		fputc('\n', out);
	}
}
