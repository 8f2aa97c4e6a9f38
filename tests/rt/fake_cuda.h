/* What fake_cuda.c and fake_graph.c share inside the fake libcuda. */
#ifndef GPUX_FAKE_CUDA_H
#define GPUX_FAKE_CUDA_H

#include <cuda.h>
#include <stdbool.h>

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

#endif
