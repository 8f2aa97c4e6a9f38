/* The controller for programs whose probes the kernel runs: uprobes,
 * uretprobes and tracepoints, attached through libgpux-host.so. */
#ifndef GPUX_LIVE_RUN_H
#define GPUX_LIVE_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "ast.h"
#include "diag.h"
#include "options.h"

/* Whether prog has a uprobe, uretprobe or tracepoint probe. */
bool live_wanted(const struct program *prog);
/* Compiles prog, attaches its probes (to -p's process only, when given;
 * with -c/-- the command starts once they are attached) and runs until
 * exit(), SIGINT/SIGTERM, or the end of the command or process; then
 * detaches and prints every map as bpftrace 0.17 does. The exit status:
 * exit()'s N, 0 after Ctrl-C or -p's process ending, the command's own
 * status when it ends by itself (128+N if signal N killed it), or 1 on
 * failure (diagnostics). */
int live_run(struct program *prog, const struct options *o, FILE *out,
	     struct diags *diags);

#endif
