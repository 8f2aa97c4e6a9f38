/* The controller loop for programs whose probes all run in the
 * userspace BPF VM and need no attaching: BEGIN, END, interval:. */
#ifndef GPUX_RUN_H
#define GPUX_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "ast.h"
#include "diag.h"
#include "options.h"

/* Whether every probe of prog is BEGIN, END or interval:. */
bool run_supported(const struct program *prog);
/* Compiles and runs prog until exit(), Ctrl-C (SIGINT/SIGTERM) or, with
 * no interval probe, forever; prints to out as bpftrace 0.17 does. The
 * process exit status: 0, exit(N)'s N, or 1 on failure (diagnostics). */
int run_program(struct program *prog, const struct options *o, FILE *out,
		struct diags *diags);

#endif
