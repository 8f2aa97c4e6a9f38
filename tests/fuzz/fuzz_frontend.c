/* libFuzzer target: any bytes through the whole compile path: the front
 * end (parse, all semantic passes, dumps and diagnostic printing) and,
 * for programs that check, both code generators: the device's (lowering,
 * SIMT verifier, PTX JIT) and the host's (LLVM to BPF, its disassembly).
 * It must never crash, hang or leak. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ast_dump.h"
#include "dev_lower.h"
#include "frontend.h"
#include "llvm_host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	static char *args[] = { "42", "str" };
	if (size > 16384)
		return 0;
	if (!sink)
		sink = fopen("/dev/null", "w");
	struct program *prog = program_new("fuzz", (const char *)data, size);
	if (!prog)
		return 0;
	program_set_args(prog, args, 2);
	prog->unsafe = true; /* system() and signal() reach the code generators */
	prog->text_only = true; /* no cpp per input */
	struct diags diags;
	diags_init(&diags, &prog->arena);
	if (frontend_check(prog, &diags, FE_STOP_SEMA) == 0) {
		ast_dump(sink, prog, true);
		struct dev_module mod;
		if (dev_compile(prog, &mod, &diags) == 0)
			dev_write_ptx(sink, &mod, "sm_80", NULL, 0,
				      PTX_LINK_SAME_MODULE, &diags);
		/* cpid 0: compiling only, as --dry-run -c probe_tgt does */
		struct host_opts opts = { .optimize = true, .cmd = "probe_tgt" };
		struct host_obj obj;
		if (host_compile(prog, &opts, &obj, &diags) == 0 && obj.size)
			host_print_bpf(&obj, &prog->src, sink);
		host_obj_free(&obj);
	}
	diags_print(&diags, &prog->src, sink);
	program_free(prog);
	return 0;
}
