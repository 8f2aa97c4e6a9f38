/* PTX JIT checks on raw bytecode the text assembler cannot write (byte
 * swaps, negative move immediates, malformed jumps, no spans), the
 * module helpers, and the JIT's helper table against the device ABI.
 *
 *   test_ptx_jit [PTXAS]   with PTXAS, the raw programs also go through
 *                          ptxas for sm_80 and sm_90 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptx_jit.h"

static int passed, failed;

static void check(int ok, const char *what)
{
	if (ok) {
		passed++;
	} else {
		failed++;
		printf("FAIL: %s\n", what);
	}
}

#define INSN(c, d, s, o, i) { .code = (c), .dst = (d), .src = (s), .off = (o), .imm = (i) }

/* JIT insns into a string; rc and the error count through pointers. */
static char *jit(const struct bpf_insn *insns, int n, const char *name,
		 int *rc, int *errors)
{
	struct arena a;
	arena_init(&a);
	struct diags d;
	diags_init(&d, &a);
	struct dev_prog p = { .name = "raw", .insns = insns, .ninsns = n };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	*rc = ptx_jit(&p, name, f, &d);
	fclose(f);
	*errors = d.errors;
	arena_free(&a);
	return buf;
}

static const struct bpf_insn swaps[] = {
	INSN(BPF_LDX | BPF_MEM | BPF_DW, 2, 1, 0, 0),
	INSN(BPF_ALU | BPF_END | BPF_K, 2, 0, 0, 16),   /* le16 */
	INSN(BPF_ALU | BPF_END | BPF_K, 2, 0, 0, 32),   /* le32 */
	INSN(BPF_ALU | BPF_END | BPF_K, 2, 0, 0, 64),   /* le64: nothing */
	INSN(BPF_ALU | BPF_END | BPF_X, 2, 0, 0, 16),   /* be16 */
	INSN(BPF_ALU | BPF_END | BPF_X, 2, 0, 0, 32),   /* be32 */
	INSN(BPF_ALU | BPF_END | BPF_X, 2, 0, 0, 64),   /* be64 */
	INSN(BPF_ALU64 | BPF_END | BPF_K, 2, 0, 0, 64), /* bswap64 */
	INSN(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, -8),
	INSN(BPF_ALU | BPF_MOV | BPF_K, 4, 0, 0, -8),
	INSN(BPF_ALU64 | BPF_MOV | BPF_X, 0, 2, 0, 0),
	INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
};

static void test_swaps(const char *ptxas)
{
	int rc, errors;
	char *s = jit(swaps, 12, "swaps", &rc, &errors);
	check(rc == 0 && errors == 0, "byte swaps translate");
	check(strstr(s, "and.b64 %r2, %r2, 0xFFFF;\n") != NULL, "le16 truncates");
	check(strstr(s, "and.b64 %r2, %r2, 0xFFFFFFFF;\n") != NULL, "le32 truncates");
	check(strstr(s, "prmt.b32 %w0, %w0, 0, 0x4401;\n") != NULL, "be16 swaps two bytes");
	check(strstr(s, "prmt.b32 %w0, %w0, 0, 0x0123;\n") != NULL, "be32 swaps four");
	check(strstr(s, "mov.b64 %r2, {%w2, %w3};\n") != NULL, "be64 swaps halves");
	check(strstr(s, "mov.b64 %r3, -8;\n") != NULL, "mov64 sign-extends");
	check(strstr(s, "mov.b64 %r4, 0xFFFFFFF8;\n") != NULL, "mov32 zero-extends");
	/* le64 emits nothing between its comment and the next one. */
	const char *le64 = strstr(s, "\t// 3: ");
	le64 = le64 ? strchr(le64, '\n') : NULL;
	check(le64 && !strncmp(le64, "\n\t// 4: ", 8), "le64 is a no-op");
	if (ptxas && rc == 0) {
		char path[] = "/tmp/gpux_jit_XXXXXX";
		int fd = mkstemp(path);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (f) {
			ptx_jit_module_header(f, NULL, "sm_80", PTX_LINK_EXTERN);
			fputs(s, f);
			fclose(f);
			for (int k = 0; k < 2; k++) {
				char cmd[512];
				snprintf(cmd, sizeof(cmd), "%s -c -arch=%s %s -o /dev/null",
					 ptxas, k ? "sm_90" : "sm_80", path);
				check(system(cmd) == 0, cmd);
			}
			unlink(path);
		} else {
			check(0, "temporary file");
		}
	}
	free(s);
}

static void test_refusals(void)
{
	static const struct bpf_insn bad_swap[] = {
		INSN(BPF_ALU | BPF_END | BPF_X, 2, 0, 0, 8),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	static const struct bpf_insn into_lddw[] = {
		INSN(BPF_JMP | BPF_JA, 0, 0, 1, 0),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, 0, 0, 1),
		INSN(0, 0, 0, 0, 0),
		INSN(BPF_JMP | BPF_JA, 0, 0, -5, 0), /* before the start */
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	static const struct bpf_insn falls_off[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
	};
	static const struct bpf_insn v4[] = {
		INSN(BPF_ALU64 | BPF_DIV | BPF_X, 0, 1, 1, 0), /* sdiv */
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 10, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 0, 12, 0, 0),
		INSN(BPF_JMP | BPF_CALL, 0, 1, 0, 3), /* bpf-to-bpf */
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	int rc, errors;
	char *s = jit(bad_swap, 2, "f", &rc, &errors);
	check(rc == -1 && errors == 1, "byte swap of 8 bits refused");
	free(s);
	s = jit(into_lddw, 5, "f", &rc, &errors);
	check(rc == -1 && errors == 2, "jumps into lddw and before the start refused");
	free(s);
	s = jit(falls_off, 1, "f", &rc, &errors);
	check(rc == -1 && errors == 1, "falling off the end refused");
	free(s);
	s = jit(v4, 5, "f", &rc, &errors);
	check(rc == -1 && errors == 4, "sdiv, r10 write, r12, pseudo call refused");
	free(s);
	s = jit(swaps, 12, "1bad-name", &rc, &errors);
	check(rc == -1 && errors == 1 && s[0] == '\0', "bad function name refused");
	free(s);
}

/* The JIT's helper table must agree with the device ABI's. */
static void test_helper_table(void)
{
	for (int id = 0; id < DH_COUNT + 8; id++) {
		int nargs;
		const char *sym = ptx_helper_symbol(id, &nargs);
		const struct dev_helper_info *h = dev_helper_info(id);
		if (!sym) {
			if (h && id != DH_BUILTIN && id != DH_LANE_FILTER &&
			    id != DH_PREFETCH)
				printf("note: helper %s has no PTX implementation\n",
				       h->name);
			continue;
		}
		char what[96];
		snprintf(what, sizeof(what), "%s matches the device ABI", sym);
		int n = 0;
		while (h && n < 5 && h->args[n] != DA_NONE)
			n++;
		check(h && !strcmp(sym + strlen("gpux_h_"), h->name) && n == nargs,
		      what);
	}
	check(ptx_helper_symbol(DH_BUILTIN, NULL) == NULL, "builtin is inlined");
	check(ptx_helper_symbol(DH_LANE_FILTER, NULL) == NULL,
	      "lane_filter is inlined");
	check(ptx_helper_symbol(DH_PREFETCH, NULL) == NULL, "prefetch is inlined");
}

static void test_module(void)
{
	char buf[16];
	check(!strcmp(ptx_jit_version_for(NULL, 0, buf, sizeof(buf)), "8.0"),
	      "no library: the JIT's version");
	const char lib9[] = "//\n.version 9.0\n.target sm_80\n.address_size 64\n"
			    ".visible .func f()\n{\n\tret;\n}\n";
	check(!strcmp(ptx_jit_version_for(lib9, strlen(lib9), buf, sizeof(buf)),
		      "9.0"), "a newer library raises the version");
	const char lib7[] = ".version 7.5\n";
	check(!strcmp(ptx_jit_version_for(lib7, strlen(lib7), buf, sizeof(buf)),
		      "8.0"), "an older library does not lower it");
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	ptx_jit_append_library(f, lib9, strlen(lib9));
	fclose(f);
	check(!strcmp(out, "//\n.visible .func f()\n{\n\tret;\n}\n"),
	      "the library's header is dropped");
	free(out);

	static const struct dev_map maps[] = {
		{ .name = "a", .key_size = 8, .value_size = 8, .max_entries = 16 },
		{ .name = "b", .key_size = 8, .value_size = 8, .max_entries = 16 },
	};
	struct dev_prog p = { .maps = maps, .nmaps = 2 };
	f = open_memstream(&out, &len);
	ptx_jit_map_decls(f, &p, PTX_LINK_EXTERN);
	fclose(f);
	check(!strcmp(out, ".extern .global .align 8 .b8 gpux_map_0[64]; // @a\n"
			   ".extern .global .align 8 .b8 gpux_map_1[64]; // @b\n\n"),
	      "extern map descriptors");
	free(out);
}

int main(int argc, char **argv)
{
	test_swaps(argc > 1 && argv[1][0] ? argv[1] : NULL);
	test_refusals();
	test_helper_table();
	test_module();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
