/* The probes in the form NVIDIA's Compute Sanitizer patches into SASS
 * (kernels with no PTX to rewrite: PyTorch's, cuBLAS, cuDNN, NCCL).
 *
 * From the session's probe module (the helper library appended) it
 * makes two PTX modules:
 *  - the patch module, for `ptxas --compile-as-tools-patch`: the probes
 *    and the library without their kernels (tools patches may hold none)
 *    and without redux.sync (refused there: a shfl loop instead), plus
 *    the callbacks the Sanitizer calls, one per kind of patch point, each
 *    calling the probes of its gdev: event that the launched kernel's
 *    record selects;
 *  - the boot module, loaded as an ordinary module: the library's clock
 *    sampler, and GPUX_SASS_BOOT, a kernel of one thread whose block
 *    enter patch (GPUX_SASS_CB_BOOT) writes the addresses of the patch
 *    module's variables into its userdata: the Sanitizer gives no module
 *    handle to look them up by name.
 *
 * Each kernel of a patched module gets a struct gpux_sass_kernel in
 * device memory as its callback userdata (sanitizerSetCallbackData). */
#ifndef GPUX_SASS_PTX_H
#define GPUX_SASS_PTX_H

#include <stddef.h>
#include <stdint.h>

#include "ptx_rewrite.h" /* struct ptx_probe */

#define GPUX_SASS_CB_BOOT "gpux_sb_boot"
#define GPUX_SASS_CB_ENTER "gpux_sb_enter"
#define GPUX_SASS_CB_EXIT "gpux_sb_exit"
#define GPUX_SASS_CB_ACCESS "gpux_sb_access"
#define GPUX_SASS_BOOT "gpux_sass_boot"
#define GPUX_SASS_MAX_PROBES 256
#define GPUX_SASS_MAX_MAPS 64 /* the boot table's map slots */

/* The Sanitizer's flags of a memory access (Sanitizer_DeviceMemoryFlags):
 * an atomic is a read and a write; a prefetch is no access. */
#define GPUX_SAN_READ 1u
#define GPUX_SAN_WRITE 2u
#define GPUX_SAN_PREFETCH 8u

/* A kernel's callback data. on == 0 (or no record at all) and the
 * callbacks call nothing; bit i of mask: probe i fires in this kernel. */
struct gpux_sass_kernel {
	uint32_t kernel_id; /* ctx.kernel_id: the session's name table index */
	uint32_t on;
	uint64_t mask[GPUX_SASS_MAX_PROBES / 64];
};

/* What GPUX_SASS_CB_BOOT writes, u64 each: generic addresses. */
enum gpux_sass_table {
	GPUX_SASS_T_CTL,    /* gpux_ctl */
	GPUX_SASS_T_CLOCK,  /* gpux_clock_off */
	GPUX_SASS_T_NODATA, /* u64: callbacks that found no kernel record */
	GPUX_SASS_T_GPU,    /* gpux_gpu */
	GPUX_SASS_T_MAPS,   /* gpux_map_0 ... gpux_map_{nmaps-1} */
};

struct sass_ptx {
	char *patch, *boot; /* NUL-terminated, malloc'd */
};

/* The patch point the Sanitizer calls probe p from: the one of its
 * kind, but block enter for a kernel_exit probe marked
 * GPUX_SITE_ANYTIME (the block-exit hook costs the GPU about 2.3 ns a
 * warp whatever it calls; the block-enter hook nothing: bench/gpu). */
enum ptx_site_kind sass_ptx_point(const struct ptx_probe *p);

/* 0, or -1 with err set (out is empty then). probes[i] is probe i of
 * the session; only kernel entry, kernel exit and access probes are
 * called (the Sanitizer has no device function boundaries by name). */
int sass_ptx_make(const char *module, size_t len, const struct ptx_probe *probes,
		  int nprobes, unsigned nmaps, struct sass_ptx *out, char *err, size_t errlen);
void sass_ptx_free(struct sass_ptx *out);

#endif
