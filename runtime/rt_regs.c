/* With -v, what instrumenting cost each kernel of a patched module in
 * registers and local memory per thread: the driver compiles the
 * original image beside the patched one (once per module, only when
 * asked) and both are queried. A PTX-only module has no register budget
 * to keep (README, "registers"), so its probes may lower the kernels'
 * occupancy; this says by how much, as Nsight would. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fatbin.h"
#include "kernel_list.h"
#include "rt_hooks.h"

#include <stdio.h>
#include <string.h>

#define SHOWN 8 /* kernels named in the line; the rest are counted */

typedef CUresult (*attr_fn)(int *, CUfunction_attribute, CUfunction);

static bool regs_of(CUmodule m, const char *name, attr_fn attr, int *regs, int *local)
{
	CUfunction f;
	if (rt_cu.ModuleGetFunction(&f, m, name) != CUDA_SUCCESS ||
	    attr(regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f) != CUDA_SUCCESS)
		return false;
	if (attr(local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f) != CUDA_SUCCESS)
		*local = 0; /* not said: only the registers are compared */
	return true;
}

void rt_regs_report(CUmodule patched, const char *ptx)
{
	const void *image;
	load_fn load = REAL(H_LOAD, "cuModuleLoadData", load_fn);
	mod_unload_fn unload = REAL(H_MOD_UNLOAD, "cuModuleUnload", mod_unload_fn);
	attr_fn attr = REAL(H_FN_GET_ATTR, "cuFuncGetAttribute", attr_fn);
	CUmodule orig;
	if (!load || !unload || !attr || !rt_image_original(ptx, &image) ||
	    load(&orig, image) != CUDA_SUCCESS)
		return;
	struct gpux_names k = { 0 };
	char line[1024];
	size_t at = 0;
	int shown = 0, more = 0, same = 0;
	if (gpux_ptx_names(ptx, &k) == GPUX_FB_OK) {
		for (size_t i = 0; i < k.n; i++) {
			int r0, l0, r1, l1;
			if (k.kind[i] != GPUX_SYM_ENTRY ||
			    !regs_of(orig, k.name[i], attr, &r0, &l0) ||
			    !regs_of(patched, k.name[i], attr, &r1, &l1))
				continue;
			if (r0 == r1 && l0 == l1) {
				same++;
			} else if (shown == SHOWN || at >= sizeof(line) - 200) {
				more++;
			} else {
				char dn[128];
				int n = snprintf(line + at, sizeof(line) - at, "%s%s %d -> %d",
						 shown ? ", " : "",
						 rt_demangle(k.name[i], dn, sizeof(dn)), r0, r1);
				at += n > 0 ? (size_t)n : 0;
				if (l0 != l1 && at < sizeof(line)) {
					n = snprintf(line + at, sizeof(line) - at,
						     " (local %d -> %d bytes)", l0, l1);
					at += n > 0 ? (size_t)n : 0;
				}
				shown++;
			}
		}
	}
	gpux_names_free(&k);
	unload(orig);
	if (!shown) {
		rt_warn("registers per thread: the patched module's %d kernels have the "
			"original's", same);
		return;
	}
	char tail[40] = "";
	if (more)
		snprintf(tail, sizeof(tail), " and %d more", more);
	rt_warn("registers per thread, without -> with probes: %s%s; %d unchanged", line,
		tail, same);
}
