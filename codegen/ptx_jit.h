/* The eBPF -> PTX JIT: verified device bytecode becomes one PTX `.func`
 * per probe, called warp-collectively by a trampoline spliced into the
 * user's kernel. A whole module, as ptxas takes it:
 *
 *   ver = ptx_jit_version_for(helpers_ptx, len, buf, sizeof(buf));
 *   ptx_jit_module_header(out, ver, "sm_80", PTX_LINK_SAME_MODULE);
 *   ptx_jit_map_decls(out, prog, PTX_LINK_SAME_MODULE);
 *   ptx_jit(prog, "gpux_probe_0", out, diags);    ... one per probe
 *   ptx_jit_append_library(out, helpers_ptx, len); the helper library
 *
 * The calling convention and the layouts the helpers use are in
 * codegen/ptx/README.md and abi/gpux_dev.h. */
#ifndef GPUX_PTX_JIT_H
#define GPUX_PTX_JIT_H

#include <stddef.h>
#include <stdio.h>

#include "device_abi.h"
#include "diag.h"

/* PTX ISA 8.0 (CUDA 12.0): the oldest that knows sm_90, so the JIT's own
 * output loads on every driver that runs either target; CUDA 13's ptxas
 * takes up to 9.0. A module holding nvcc's PTX needs nvcc's version (CUDA
 * 13 writes 9.0 and uses 8.3 features): see ptx_jit_version_for. */
#define PTX_JIT_VERSION "8.0"

enum ptx_link {
	/* The helper library and the map descriptors live in this module:
	 * helpers are forward-declared, descriptors defined here and filled
	 * by the runtime (cuModuleGetGlobal) before the first launch. */
	PTX_LINK_SAME_MODULE,
	/* Separate compilation (ptxas -c, then nvlink): everything is
	 * .extern and defined by another module. */
	PTX_LINK_EXTERN,
	/* Linked with the helper library's relocatable cubin (the runtime's
	 * cuLink*, nvlink): helpers are .extern, defined by the cubin with
	 * gpux_ctl and gpux_clock_sample; the map descriptors and the clock
	 * offset are defined here as with PTX_LINK_SAME_MODULE. No library
	 * is appended. */
	PTX_LINK_LIBRARY_CUBIN,
};

/* The .version for a module holding the JIT's output and the PTX text
 * lib (may be NULL): the higher of PTX_JIT_VERSION and lib's .version.
 * Returns buf or a constant string. */
const char *ptx_jit_version_for(const char *lib, size_t len, char *buf,
				size_t buf_len);

/* .version (NULL: PTX_JIT_VERSION), .target (e.g. "sm_80") and
 * .address_size, then the prototypes of the helpers the JIT calls. */
void ptx_jit_module_header(FILE *out, const char *version, const char *target,
			   enum ptx_link link);

/* The descriptor `gpux_map_N` for each map of prog (struct gpux_map_desc).
 * Probes of one module share the map table, so emit it once. */
void ptx_jit_map_decls(FILE *out, const struct dev_prog *prog,
		       enum ptx_link link);

/* One probe as `.visible .func (.param .b64 ret) func_name(.param .b64
 * ctx)`. 0 on success; -1 with located diagnostics for bytecode the JIT
 * does not translate (the output is then incomplete). */
int ptx_jit(const struct dev_prog *prog, const char *func_name, FILE *out,
	    struct diags *diags);

/* Copy nvcc's PTX of the helper library, dropping its own .version,
 * .target and .address_size lines (the module header has them). */
void ptx_jit_append_library(FILE *out, const char *ptx, size_t len);

/* The PTX function implementing helper id, its argument count; NULL if
 * the library has none (builtin is inlined, not called). */
const char *ptx_helper_symbol(int id, int *nargs);

#endif
