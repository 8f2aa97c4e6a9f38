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

struct dev_module;
/* A map cuda: probes write (obj) is copied to the device before each
 * launch: the device may read it but not write it. One they only read
 * is the device's (a mirror), which gdev: probes may write. -1 with an
 * error at each map mod's probes write as well, else 0. */
int compile_check_shared(const struct dev_module *mod, const struct host_obj *obj,
			 struct diags *diags);

/* The driver ABIs that prog's driver probes compile against. */
struct driver_abis {
	struct host_binding b; /* the running driver's, when bound */
	bool bound;
	const struct host_sops_abi *abis[HOST_DRV_N];
	int nabis; /* 0: the built-ins */
};

/* Binds to the running driver's BTF (llvm_host.h: host_bind_driver)
 * when prog has driver probes and it is to run, or $GPUX_BTF_DIR is set;
 * else the built-ins. 0 with *a (free with compile_driver_abis_free), or
 * -1 with one error at the first probe of a provider the driver lacks. */
int compile_driver_abis(const struct program *prog, bool running, struct driver_abis *a,
			struct diags *diags);
void compile_driver_abis_free(struct driver_abis *a);

/* For running: the host object of prog's host probes (no dumps unless
 * the options ask), driver probes against abis (NULL: the built-ins).
 * 0 with *obj to free with host_obj_free, or -1 with
 * diagnostics. */
int compile_host_obj(struct program *prog, const struct options *o,
		     const struct driver_abis *abis, struct host_obj *obj,
		     struct diags *diags);

#endif
