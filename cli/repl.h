/* The interactive prompt: each line is checked as a probe or as
 * statements in the current probe context, diagnostics shown inline. */
#ifndef GPUX_REPL_H
#define GPUX_REPL_H

#include <stdbool.h>
#include <stdio.h>

#include "options.h"

/* use_readline: line editing, the "gpux> " prompt and ~/.gpux_history
 * (a terminal); otherwise plain lines from in with no prompt printed, so
 * piped sessions give clean, testable output. Diagnostics go to stderr
 * (file name "repl"), results to out. With a command in o (-c, --), a
 * live session (live.h): the command runs, and probes entered attach to
 * it. Returns 0 at :quit or end of input, 1 if the command cannot start. */
int repl_run(FILE *in, FILE *out, bool use_readline, const struct options *o);

#endif
