/* Test driver for the PTX JIT: assemble a .bpf file and print its PTX.
 *
 *   jit_bpf [--func-only] [--target sm_XX] [--lib helpers.ptx] FILE.bpf
 *
 * --func-only prints the probe's .func alone (for golden comparisons);
 * otherwise a whole module: header, map descriptors, the probe, a test
 * kernel calling it as a trampoline would and, with --lib, the helper
 * library, ready for ptxas (which compiles only what a kernel reaches). Diagnostics go to stderr in
 * the front end's format; the status is 1 on any error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_asm.h"
#include "ptx_jit.h"

/* A stand-in for the trampoline: every thread calls the probe with the
 * context's three words, so ptxas compiles the probe and the helpers it
 * calls. */
static void test_kernel(FILE *out)
{
	fputs("\n.visible .entry gpux_test_kernel(.param .u64 gpux_test_ctx)\n"
	      "{\n"
	      "\t.reg .b64 %c;\n"
	      "\tld.param.u64 %c, [gpux_test_ctx];\n"
	      "\t{\n"
	      "\t.param .b64 gpux_a0;\n"
	      "\t.param .b64 gpux_a1;\n"
	      "\t.param .b64 gpux_a2;\n"
	      "\t.param .b64 gpux_rv;\n"
	      "\tst.param.b64 [gpux_a0], %c;\n"
	      "\tst.param.b64 [gpux_a1], %c;\n"
	      "\tst.param.b64 [gpux_a2], %c;\n"
	      "\tcall (gpux_rv), gpux_probe, (gpux_a0, gpux_a1, gpux_a2);\n"
	      "\t}\n"
	      "\tret;\n"
	      "}\n\n", out);
}

static int usage(void)
{
	fprintf(stderr, "usage: jit_bpf [--func-only] [--target sm_XX] "
		"[--lib helpers.ptx] FILE.bpf\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *target = "sm_80", *lib_path = NULL, *path = NULL;
	bool func_only = false;
	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--func-only"))
			func_only = true;
		else if (!strcmp(argv[k], "--target") && k + 1 < argc)
			target = argv[++k];
		else if (!strcmp(argv[k], "--lib") && k + 1 < argc)
			lib_path = argv[++k];
		else if (argv[k][0] != '-' && !path)
			path = argv[k];
		else
			return usage();
	}
	if (!path)
		return usage();

	size_t len, lib_len = 0;
	char *text = source_read_file(path, &len), *lib = NULL;
	if (!text) {
		perror(path);
		return 1;
	}
	if (lib_path && !(lib = source_read_file(lib_path, &lib_len))) {
		perror(lib_path);
		free(text);
		return 1;
	}
	struct arena arena;
	arena_init(&arena);
	struct diags diags;
	diags_init(&diags, &arena);
	struct source src = { path, text, len, NULL, 0 };
	struct dev_prog prog;
	int rc = bpf_assemble(&src, &arena, &prog, &diags);
	if (rc == 0) {
		/* Buffer the module so nothing is printed for a refused one. */
		char *buf = NULL;
		size_t buf_len = 0;
		FILE *out = open_memstream(&buf, &buf_len);
		if (!out) {
			rc = -1;
		} else {
			if (!func_only) {
				char vbuf[16];
				const char *ver = ptx_jit_version_for(lib, lib_len, vbuf,
								      sizeof(vbuf));
				ptx_jit_module_header(out, ver, target,
						      PTX_LINK_SAME_MODULE);
				ptx_jit_map_decls(out, &prog, PTX_LINK_SAME_MODULE);
			}
			rc = ptx_jit(&prog, "gpux_probe", out, &diags);
			if (!func_only)
				test_kernel(out);
			if (!func_only && lib)
				ptx_jit_append_library(out, lib, lib_len);
			fclose(out);
			if (rc == 0)
				fwrite(buf, 1, buf_len, stdout);
			free(buf);
		}
	}
	diags_print(&diags, &src, stderr);
	arena_free(&arena);
	free(lib);
	free(text);
	return rc ? 1 : 0;
}
