/* Hand-crafted bytecode for the VM's safety checks: each case is put in
 * a minimal BPF ELF (section gpux/begin, one function, optionally one
 * relocation), loaded and run on a 16-byte context; the outcome must be
 * the expected load refusal, run-time error or r0. "random" runs
 * thousands of random programs: whatever passes the checks must run to
 * an end or an error, never crash (the ASan build watches).
 *
 *   vm_bad NAME */
#include <elf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_insn.h"
#include "bpf_vm.h"

#define INS(c, d, s, o, i) { (c), (d), (s), (o), (i) }
#define MOV(d, i) INS(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOVR(d, s) INS(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ALU(op, d, i) INS(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define ALUR(op, d, s) INS(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define ALU32(op, d, i) INS(BPF_ALU | (op) | BPF_K, d, 0, 0, i)
#define LDX(sz, d, s, o) INS(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, i) INS(BPF_ST | BPF_MEM | (sz), d, 0, o, i)
#define JA(o) INS(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define JEQ32(d, i, o) INS(BPF_JMP32 | BPF_JEQ | BPF_K, d, 0, o, i)
#define CALL(i) INS(BPF_JMP | BPF_CALL, 0, 0, 0, i)
#define EXIT INS(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define LDDW(d, s, lo, hi) INS(BPF_LD | BPF_DW | BPF_IMM, d, s, 0, lo), INS(0, 0, 0, 0, hi)

enum want { LOAD_ERR, RUN_ERR, RUN_OK };

struct bad_case {
	const char *name;
	enum want want;
	const char *msg; /* substring of the error */
	uint64_t r0;     /* RUN_OK */
	struct bpf_insn insns[16];
	int n;
};

#define CASE(nm, want, msg, r0, ...) { #nm, want, msg, r0, { __VA_ARGS__ }, \
	(int)(sizeof((struct bpf_insn[]){ __VA_ARGS__ }) / sizeof(struct bpf_insn)) }

static const struct bad_case cases[] = {
	CASE(stack_oob_read, RUN_ERR, "fp+0 is outside the 512-byte stack", 0,
	     LDX(BPF_DW, 0, 10, 0), EXIT),
	CASE(stack_oob_write, RUN_ERR, "fp-520 is outside the 512-byte stack", 0,
	     ST(BPF_DW, 10, -520, 1), MOV(0, 0), EXIT),
	CASE(jump_out, LOAD_ERR, "insn 0: jump out of the program", 0,
	     JA(5), EXIT),
	CASE(jump_into_lddw, LOAD_ERR, "jump into the middle of a 64-bit load", 0,
	     JA(1), LDDW(0, 0, 1, 2), EXIT),
	CASE(unknown_helper, LOAD_ERR, "call to a helper the VM does not implement", 0,
	     CALL(999), EXIT),
	CASE(probe_read_kernel, LOAD_ERR, "call to a helper the VM does not implement", 0,
	     CALL(113), EXIT),
	CASE(kfunc_call, LOAD_ERR, "kfunc calls are for the driver", 0,
	     INS(BPF_JMP | BPF_CALL, 0, 2, 0, 77), EXIT),
	CASE(bpf2bpf_call, LOAD_ERR, "bpf-to-bpf calls are not supported", 0,
	     INS(BPF_JMP | BPF_CALL, 0, 1, 0, 1), EXIT, EXIT),
	CASE(kfunc_reloc, LOAD_ERR, "call to 'bpf_uvm_pmm_chunk_move_tail' cannot run in the VM", 0,
	     INS(BPF_JMP | BPF_CALL, 0, 1, 0, -1), EXIT),
	CASE(extern_reloc, LOAD_ERR, "unresolved symbol 'some_extern'", 0,
	     LDDW(1, 0, 0, 0), EXIT),
	CASE(map_fd_unresolved, LOAD_ERR, "unresolved map or data reference", 0,
	     LDDW(1, 1, 3, 0), MOV(0, 0), EXIT),
	CASE(map_idx_range, LOAD_ERR, "map index out of range", 0,
	     LDDW(1, 5, 0, 0), MOV(0, 0), EXIT),
	CASE(infinite_loop, RUN_ERR, "instruction budget of 1000000 exhausted", 0,
	     MOV(0, 0), ALU(BPF_ADD, 0, 1), JA(-2), EXIT),
	CASE(fall_through, LOAD_ERR, "falls through past the end", 0,
	     MOV(0, 0)),
	CASE(lddw_at_end, LOAD_ERR, "malformed 64-bit immediate load", 0,
	     EXIT, INS(BPF_LD | BPF_DW | BPF_IMM, 0, 0, 0, 1)),
	CASE(write_r10, LOAD_ERR, "r10 is read-only", 0,
	     MOV(10, 0), EXIT),
	CASE(bad_register, LOAD_ERR, "bad destination register", 0,
	     MOV(11, 0), EXIT),
	CASE(unknown_alu, LOAD_ERR, "unknown ALU instruction (opcode 0xe7)", 0,
	     INS(0xe7, 0, 0, 0, 0), EXIT),
	CASE(signed_div_v4, LOAD_ERR, "unknown ALU instruction", 0,
	     INS(BPF_ALU64 | BPF_DIV | BPF_K, 0, 0, 1, 3), EXIT),
	CASE(legacy_ld_abs, LOAD_ERR, "unknown load (legacy packet access?)", 0,
	     INS(BPF_LD | BPF_W | 0x20, 0, 0, 0, 0), EXIT),
	CASE(null_deref, RUN_ERR, "load of 8 bytes at 0x0: not stack, context or a map value", 0,
	     MOV(1, 0), LDX(BPF_DW, 0, 1, 0), EXIT),
	CASE(ctx_write, RUN_ERR, "store to the read-only context", 0,
	     ST(BPF_DW, 1, 0, 1), MOV(0, 0), EXIT),
	CASE(ctx_oob, RUN_ERR, "load of 8 bytes at ctx+12 is outside the 16-byte context", 0,
	     LDX(BPF_DW, 0, 1, 12), EXIT),
	CASE(ctx_read, RUN_OK, NULL, 0x22222222,
	     LDX(BPF_W, 0, 1, 4), EXIT),
	CASE(helper_not_map, RUN_ERR, "helper 1: r1 is not a map", 0,
	     MOV(1, 5), MOVR(2, 10), ALU(BPF_ADD, 2, -8), CALL(1), EXIT),
	CASE(comm_oob, RUN_ERR, "store of 16 bytes at fp-8 is outside", 0,
	     MOVR(1, 10), ALU(BPF_ADD, 1, -8), MOV(2, 16), CALL(16), EXIT),
	CASE(comm_ok, RUN_OK, NULL, 0x625f6d76,
	     MOVR(1, 10), ALU(BPF_ADD, 1, -16), MOV(2, 16), CALL(16),
	     LDX(BPF_W, 0, 10, -16), EXIT),
	CASE(div_zero, RUN_OK, NULL, 7,
	     MOV(0, 7), MOV(1, 0), ALUR(BPF_DIV, 0, 1), MOV(2, 7), ALUR(BPF_MOD, 2, 1),
	     ALUR(BPF_ADD, 0, 2), EXIT),
	CASE(arsh, RUN_OK, NULL, (uint64_t)-4,
	     MOV(0, -16), ALU(BPF_ARSH, 0, 2), EXIT),
	CASE(alu32_wraps, RUN_OK, NULL, 1,
	     MOV(0, -1), ALU32(BPF_ADD, 0, 2), EXIT),
	CASE(byteswap, RUN_OK, NULL, 0x0201,
	     MOV(0, 0x0102), INS(BPF_ALU | BPF_END | 0x08, 0, 0, 0, 16), EXIT),
	CASE(jmp32, RUN_OK, NULL, 1,
	     LDDW(1, 0, 1, 1), JEQ32(1, 1, 2), MOV(0, 0), EXIT, MOV(0, 1), EXIT),
	CASE(atomic_fetch_add, RUN_OK, NULL, 13,
	     ST(BPF_DW, 10, -8, 5), MOV(1, 3),
	     INS(BPF_STX | BPF_ATOMIC | BPF_DW, 10, 1, -8, BPF_ADD | 1),
	     LDX(BPF_DW, 0, 10, -8), ALUR(BPF_ADD, 0, 1), EXIT),
	CASE(bad_elf, LOAD_ERR, "not a little-endian ELF64 object", 0, EXIT),
	CASE(bad_shoff, LOAD_ERR, "ELF section headers out of bounds", 0, EXIT),
	CASE(random, RUN_OK, NULL, 0, EXIT),
};

/* The relocation some cases carry: at instruction 0 against sym. */
static const struct { const char *name, *sym; uint32_t type; } relocs[] = {
	{ "kfunc_reloc", "bpf_uvm_pmm_chunk_move_tail", 10 },
	{ "extern_reloc", "some_extern", 1 },
};

struct buf {
	unsigned char *p;
	size_t n;
};

static size_t put(struct buf *b, const void *d, size_t n)
{
	size_t at = (b->n + 7) & ~(size_t)7;
	b->p = realloc(b->p, at + n);
	memset(b->p + b->n, 0, at - b->n);
	memcpy(b->p + at, d, n);
	b->n = at + n;
	return at;
}

/* Sections: 1 .strtab (also the section names), 2 .symtab, 3 gpux/begin,
 * 4 its relocations when sym is set. */
static struct buf make_elf(const struct bpf_insn *insns, int n, const char *sym, uint32_t rtype)
{
	struct buf b = { 0 };
	Elf64_Ehdr eh = { 0 };
	put(&b, &eh, sizeof(eh));
	char strs[256] = "\0.strtab\0.symtab\0gpux/begin\0.relgpux/begin\0prog";
	size_t strs_len = 48;
	size_t sym_name = strs_len;
	if (sym) {
		strcpy(strs + sym_name, sym);
		strs_len += strlen(sym) + 1;
	}
	size_t str_off = put(&b, strs, strs_len);
	Elf64_Sym syms[3] = { { 0 } };
	syms[1] = (Elf64_Sym){ .st_name = 43, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			       .st_shndx = 3, .st_size = (uint64_t)n * 8 };
	syms[2] = (Elf64_Sym){ .st_name = (uint32_t)sym_name,
			       .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_NOTYPE) };
	size_t sym_off = put(&b, syms, sizeof(syms));
	size_t code_off = put(&b, insns, (size_t)n * 8);
	Elf64_Rel rel = { 0, ELF64_R_INFO(2, rtype) };
	size_t rel_off = put(&b, &rel, sizeof(rel));
	Elf64_Shdr sh[5] = { { 0 } };
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_STRTAB, .sh_offset = str_off,
			      .sh_size = strs_len };
	sh[2] = (Elf64_Shdr){ .sh_name = 9, .sh_type = SHT_SYMTAB, .sh_offset = sym_off,
			      .sh_size = sizeof(syms), .sh_link = 1, .sh_entsize = sizeof(Elf64_Sym) };
	sh[3] = (Elf64_Shdr){ .sh_name = 17, .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_offset = code_off,
			      .sh_size = (uint64_t)n * 8 };
	sh[4] = (Elf64_Shdr){ .sh_name = 28, .sh_type = SHT_REL, .sh_offset = rel_off,
			      .sh_size = sym ? sizeof(rel) : 0, .sh_link = 2, .sh_info = 3,
			      .sh_entsize = sizeof(Elf64_Rel) };
	size_t sh_off = put(&b, sh, sizeof(sh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_REL;
	eh.e_machine = EM_BPF;
	eh.e_version = EV_CURRENT;
	eh.e_shoff = sh_off;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 5;
	eh.e_shstrndx = 1;
	memcpy(b.p, &eh, sizeof(eh));
	return b;
}

static const unsigned char ctx[16] = { 1, 1, 1, 1, 0x22, 0x22, 0x22, 0x22 };

/* Load and run; "load: MSG", "run: error N: MSG" or "run: ok r0=N". */
static int attempt(const unsigned char *elf, size_t len, char *out, size_t outlen, uint64_t *r0)
{
	char err[256];
	struct vm *vm;
	if (vm_load(elf, len, &vm, err, sizeof(err))) {
		snprintf(out, outlen, "load: %s", err);
		return LOAD_ERR;
	}
	int rc = vm_run(vm, "gpux/begin", ctx, sizeof(ctx), r0);
	if (rc)
		snprintf(out, outlen, "run: error %d: %s", rc, vm_last_error(vm));
	else
		snprintf(out, outlen, "run: ok r0=%llu", (unsigned long long)*r0);
	vm_free(vm);
	return rc ? RUN_ERR : RUN_OK;
}

/* Random instructions, biased to valid classes and registers. */
static int random_programs(void)
{
	int counts[3] = { 0 };
	srand(1234);
	for (int t = 0; t < 20000; t++) {
		struct bpf_insn in[12];
		int n = 2 + rand() % 10;
		for (int i = 0; i < n; i++) {
			static const uint8_t codes[] = { 0x07, 0x0f, 0xb7, 0xbf, 0x04, 0x79, 0x61,
							 0x7b, 0x72, 0x05, 0x15, 0x1d, 0x85, 0x95,
							 0x18, 0xdb, 0xc7, 0x37, 0x97, 0x16 };
			in[i] = (struct bpf_insn){ codes[rand() % sizeof(codes)], (uint8_t)(rand() % 11),
						   (uint8_t)(rand() % 11), (int16_t)(rand() % 9 - 4 - (rand() % 8 ? 0 : 500)),
						   rand() % 3 ? rand() % 20 - 10 : rand() };
		}
		in[n - 1] = (struct bpf_insn)EXIT;
		struct buf b = make_elf(in, n, NULL, 0);
		char out[512];
		uint64_t r0 = 0;
		counts[attempt(b.p, b.n, out, sizeof(out), &r0)]++;
		free(b.p);
	}
	printf("random: %d refused, %d stopped, %d ran\n", counts[LOAD_ERR], counts[RUN_ERR],
	       counts[RUN_OK]);
	return counts[RUN_OK] && counts[RUN_ERR] && counts[LOAD_ERR] ? 0 : 1;
}

int main(int argc, char **argv)
{
	const struct bad_case *c = NULL;
	for (size_t i = 0; argc == 2 && i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(cases[i].name, argv[1]))
			c = &cases[i];
	if (!c) {
		fprintf(stderr, "usage: vm_bad CASE\n");
		return 2;
	}
	if (!strcmp(c->name, "random"))
		return random_programs();
	const char *sym = NULL;
	uint32_t rtype = 0;
	for (size_t i = 0; i < sizeof(relocs) / sizeof(relocs[0]); i++)
		if (!strcmp(relocs[i].name, c->name)) {
			sym = relocs[i].sym;
			rtype = relocs[i].type;
		}
	struct buf b = make_elf(c->insns, c->n, sym, rtype);
	if (!strcmp(c->name, "bad_elf"))
		b.n = 10;
	if (!strcmp(c->name, "bad_shoff"))
		((Elf64_Ehdr *)(void *)b.p)->e_shoff = b.n - 8;
	char out[512];
	uint64_t r0 = 0;
	int got = attempt(b.p, b.n, out, sizeof(out), &r0);
	free(b.p);
	printf("%s\n", out);
	bool ok = got == (int)c->want &&
		  (c->want == RUN_OK ? r0 == c->r0 : strstr(out, c->msg) != NULL);
	if (!ok)
		printf("FAILED: wanted %s %s\n", c->want == LOAD_ERR ? "load error" :
		       c->want == RUN_ERR ? "run error" : "r0", c->msg ? c->msg : "");
	return ok ? 0 : 1;
}
