/* What fake_cuda.c and fake_graph.c share inside the fake libcuda. */
#ifndef GPUX_FAKE_CUDA_H
#define GPUX_FAKE_CUDA_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

#define FK_HIDDEN __attribute__((visibility("hidden")))

/* One line into FAKE_CUDA_LOG. */
FK_HIDDEN void flog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A launch, as cuLaunchKernel makes it (api: the name logged). */
FK_HIDDEN CUresult fk_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			     unsigned by, unsigned bz, void **params, const char *api);
/* Whether s is being captured; a launch into it becomes a kernel node
 * of its graph (true) instead of running. */
FK_HIDDEN bool fk_capturing(CUstream s);
FK_HIDDEN bool fk_captured(CUstream s, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
			   unsigned bx, unsigned by, unsigned bz, unsigned shm, void **params);

/* fake_sanitizer.c: whether a Sanitizer subscribed (a cubin's kernels
 * are then its ELF's, to patch); what the patches do at a launch. */
extern FK_HIDDEN bool fk_sass_on;
FK_HIDDEN void fk_sass_launch(CUfunction f, uint64_t threads);
/* For it: PTX loaded as a module; a module's global; its text; the map
 * probe FUNC counts into (-1: none) and whether by kernel; a function's
 * module and name; count() as a probe does it. */
FK_HIDDEN void *fk_load_ptx(const char *text);
FK_HIDDEN CUcontext fk_current(void);
FK_HIDDEN bool fk_global(void *mod, const char *name, CUdeviceptr *d);
FK_HIDDEN const char *fk_mod_text(void *mod);
FK_HIDDEN int fk_probe_map(void *mod, const char *probe, bool *by_kernel);
FK_HIDDEN bool fk_func_of(CUfunction f, void **mod, const char **name);
FK_HIDDEN void fk_count(void *mod, int map, bool by_kernel, uint32_t kernel_id,
			uint64_t threads, const char *who);

#endif
