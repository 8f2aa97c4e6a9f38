/* Running a program: one controller loop for every kind of probe
 * (backend.h), bpftrace 0.17's output. */
#ifndef GPUX_RUN_H
#define GPUX_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "ast.h"
#include "diag.h"
#include "options.h"

/* Compiles prog's probes, starts the command of o if any, attaches, and
 * runs until exit(), SIGINT/SIGTERM, the command's end or, with nothing
 * to end it, forever; SIGUSR1 prints the maps. Prints as bpftrace 0.17
 * does. The process exit status: exit()'s N; the command's (128 + N if
 * signal N killed it) when it ended by itself; 0 after a signal; 1 on
 * failure (diagnostics). */
int run_program(struct program *prog, const struct options *o, FILE *out,
		struct diags *diags);

#endif
