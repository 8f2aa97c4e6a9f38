/* Running a program's device probes (gdev:) on a CUDA program: the
 * controller makes the session segment, starts the command with the
 * device runtime preloaded, prints printf records as they come and the
 * maps when the program ends, as bpftrace 0.17 does. */
#ifndef GPUX_SESSION_RUN_H
#define GPUX_SESSION_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "ast.h"
#include "diag.h"
#include "options.h"

/* Whether prog has a device probe. */
bool session_wanted(const struct program *prog);

/* Runs prog's device probes on the command of o until it exits, a
 * device exit() or SIGINT/SIGTERM. Programs that also have host probes,
 * and options without a command, are refused. The process exit status:
 * the command's (128 + N if signal N killed it), 0 after exit() or a
 * signal to gpux, 1 on failure (diagnostics or a message on stderr). */
int session_run(struct program *prog, const struct options *o, FILE *out,
		struct diags *diags);

#endif
