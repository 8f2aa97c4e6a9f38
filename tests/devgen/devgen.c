/* Test driver for the device lowering: front end, dev_compile (lowering
 * and the SIMT verifier), then the disassembly or a PTX module.
 *
 *   devgen [--ptx sm_XX] [--lib helpers.ptx] [--verifier-log] FILE.gpx
 *
 * Without --ptx it prints the `-d bpf` dump. With --ptx it prints the
 * module plus a test kernel per probe calling it as a trampoline would,
 * so ptxas compiles every probe and the helpers they reach. Diagnostics
 * go to stderr in the front end's format; the status is 1 on any error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev_lower.h"
#include "frontend.h"

static void test_kernels(FILE *out, const struct dev_module *mod)
{
	for (int k = 0; k < mod->nprobes; k++)
		fprintf(out, "\n.visible .entry gpux_test_%s(.param .u64 gpux_test_ctx)\n"
			"{\n"
			"\t.reg .b64 %%c;\n"
			"\tld.param.u64 %%c, [gpux_test_ctx];\n"
			"\t{\n"
			"\t.param .b64 gpux_a0;\n"
			"\t.param .b64 gpux_a1;\n"
			"\t.param .b64 gpux_a2;\n"
			"\t.param .b64 gpux_rv;\n"
			"\tst.param.b64 [gpux_a0], %%c;\n"
			"\tst.param.b64 [gpux_a1], %%c;\n"
			"\tst.param.b64 [gpux_a2], %%c;\n"
			"\tcall (gpux_rv), %s, (gpux_a0, gpux_a1, gpux_a2);\n"
			"\t}\n"
			"\tret;\n"
			"}\n", mod->probes[k].func_name, mod->probes[k].func_name);
}

static int usage(void)
{
	fprintf(stderr, "usage: devgen [--ptx sm_XX] [--lib helpers.ptx] "
		"[--verifier-log] FILE.gpx\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *target = NULL, *lib_path = NULL, *path = NULL;
	bool vlog = false;
	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--ptx") && k + 1 < argc)
			target = argv[++k];
		else if (!strcmp(argv[k], "--lib") && k + 1 < argc)
			lib_path = argv[++k];
		else if (!strcmp(argv[k], "--verifier-log"))
			vlog = true;
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
	struct program *prog = program_new(path, text, len);
	free(text);
	if (!prog) {
		free(lib);
		return 1;
	}
	struct diags diags;
	diags_init(&diags, &prog->arena);
	struct dev_module mod;
	int rc = frontend_check(prog, &diags, FE_STOP_SEMA);
	if (rc == 0 && vlog) {
		if ((rc = dev_lower(prog, &mod, &diags)) == 0)
			rc = dev_verify_log(&mod, &diags, stdout);
	} else if (rc == 0 && (rc = dev_compile(prog, &mod, &diags)) == 0) {
		if (!target) {
			dev_dump_bpf(stdout, prog, &mod);
		} else {
			/* Buffer it: nothing is printed for a refused module. */
			char *buf = NULL;
			size_t buf_len = 0;
			FILE *out = open_memstream(&buf, &buf_len);
			if (!out) {
				rc = -1;
			} else {
				rc = dev_write_ptx(out, &mod, target, lib, lib_len,
						   PTX_LINK_SAME_MODULE, &diags);
				test_kernels(out, &mod);
				fclose(out);
				if (rc == 0)
					fwrite(buf, 1, buf_len, stdout);
				free(buf);
			}
		}
	}
	diags_print(&diags, &prog->src, stderr);
	program_free(prog);
	free(lib);
	return rc ? 1 : 0;
}
