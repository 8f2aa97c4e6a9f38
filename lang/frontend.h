/* The front end in one call: text -> checked AST. The CLI, the REPL and
 * the fuzz target all go through here. */
#ifndef GPUX_FRONTEND_H
#define GPUX_FRONTEND_H

#include "ast.h"
#include "diag.h"

enum fe_stop {
	FE_STOP_PARSE, /* syntax only (-d ast) */
	FE_STOP_SEMA,  /* all semantic passes */
};

/* Allocates a program owning a copy of the text; free with program_free. */
struct program *program_new(const char *name, const char *text, size_t len);
void program_free(struct program *prog);

/* Script arguments for $1..$N (the strings are copied). */
void program_set_args(struct program *prog, char **args, int n);

/* Parse, then (unless stop is FE_STOP_PARSE) run the semantic passes.
 * Diagnostics go to diags, which must use prog's arena. 0 if clean. */
int frontend_check(struct program *prog, struct diags *diags,
		   enum fe_stop stop);

#endif
