/* The interactive prompt: each line is checked as a probe or as
 * statements in the current probe context, diagnostics shown inline. */
#ifndef GPUX_REPL_H
#define GPUX_REPL_H

#include <stdbool.h>
#include <stdio.h>

/* use_readline: line editing and ~/.gpux_history (a terminal);
 * otherwise plain lines from in, for scripts and tests. */
int repl_run(FILE *in, FILE *out, bool use_readline);

#endif
