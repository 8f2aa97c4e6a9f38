#include "frontend.h"

#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "sema.h"

struct program *program_new(const char *name, const char *text, size_t len)
{
	struct program *prog = calloc(1, sizeof(*prog));
	if (!prog)
		return NULL;
	arena_init(&prog->arena);
	prog->src.name = arena_strdup(&prog->arena, name);
	prog->src.text = arena_strndup(&prog->arena, text, len);
	prog->src.len = len;
	return prog;
}

void program_free(struct program *prog)
{
	if (!prog)
		return;
	if (prog->kernel_types && prog->kernel_types->release)
		prog->kernel_types->release(prog);
	arena_free(&prog->arena);
	free(prog);
}

void program_set_args(struct program *prog, char **args, int n)
{
	prog->positional = arena_alloc(&prog->arena, sizeof(char *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		prog->positional[i] = arena_strdup(&prog->arena, args[i]);
	prog->npositional = n;
}

int frontend_check(struct program *prog, struct diags *diags,
		   enum fe_stop stop)
{
	const char *nul = memchr(prog->src.text, '\0', prog->src.len);
	if (nul) { /* located, as any other character that cannot be there */
		struct span sp = { 1, 1, 1, 1 };
		for (const char *c = prog->src.text; c < nul; c++) {
			sp.first_column++;
			if (*c == '\n') {
				sp.first_line++;
				sp.first_column = 1;
			}
		}
		sp.last_line = sp.first_line;
		sp.last_column = sp.first_column + 1;
		diag_error(diags, sp, "the program contains a NUL byte");
		return -1;
	}
	if (parse_program(prog, diags))
		return -1;
	if (stop == FE_STOP_PARSE)
		return 0;
	return sema_run(prog, diags);
}
