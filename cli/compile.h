/* After the front end: code generation for --dry-run, the -d stages
 * past `types`, and --emit. */
#ifndef GPUX_COMPILE_H
#define GPUX_COMPILE_H

#include <stdio.h>

#include "ast.h"
#include "llvm_host.h"
#include "diag.h"
#include "options.h"

/* Compile prog's device and host probes as the options ask, printing the
 * requested stages to out. 0, or -1 with diagnostics. */
int compile_program(struct program *prog, const struct options *o, FILE *out,
		    struct diags *diags);

/* For running: the host object of prog's host probes (no dumps unless
 * the options ask). 0 with *obj to free with compile_host_obj_free, or
 * -1 with diagnostics. */
int compile_host_obj(struct program *prog, const struct options *o,
		     struct host_obj *obj, struct diags *diags);
void compile_host_obj_free(struct host_obj *obj);

#endif
