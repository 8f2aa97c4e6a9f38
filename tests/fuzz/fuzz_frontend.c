/* libFuzzer target: any bytes through the whole front end (parse, all
 * semantic passes, dumps and diagnostic printing). It must never crash,
 * hang or leak. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ast_dump.h"
#include "frontend.h"

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
	struct diags diags;
	diags_init(&diags, &prog->arena);
	if (frontend_check(prog, &diags, FE_STOP_SEMA) == 0)
		ast_dump(sink, prog, true);
	diags_print(&diags, &prog->src, sink);
	program_free(prog);
	return 0;
}
