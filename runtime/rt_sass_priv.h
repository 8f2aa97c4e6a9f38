/* What rt_sass.c (the Sanitizer, modules, launches) and rt_sass_ctx.c
 * (the patch module in each context, kernels' records) share. */
#ifndef GPUX_RT_SASS_PRIV_H
#define GPUX_RT_SASS_PRIV_H

#include "rt_ctx_priv.h"
#include "sass_ptx.h"

/* Values of sanitizer_result.h and sanitizer_patching.h gpux passes
 * (stable across releases; tests/rt/sanitizer_abi.c checks them against
 * the headers where those are installed). */
enum { SAN_OK = 0, SAN_INVALID_PARAMETER = 1 };
enum { SAN_BLOCK_ENTER = 1, SAN_BLOCK_EXIT = 2, SAN_GLOBAL_ACCESS = 3 };

/* The entry points of libsanitizer-public.so gpux calls. */
struct rt_san {
	int (*Subscribe)(void **, void (*)(void *, int, int, const void *), void *);
	int (*AddPatches)(const void *, CUcontext);
	int (*PatchInstructions)(int, CUmodule, const char *);
	int (*PatchModule)(CUmodule);
	int (*SetCallbackData)(CUfunction, const void *);
	int (*GetResultString)(int, const char **);
};
extern struct rt_san rt_san;
const char *rt_san_err(int rc);

/* Why SASS patching is off or failed (rt_sass_why_not). */
extern char rt_sass_why[512];

/* The session's probes as the callbacks call them. */
extern struct ptx_probe rt_sass_probes[GPUX_SASS_MAX_PROBES];
extern int rt_sass_nprobes;

/* The context's patch module, added and set up once; false (and
 * rt_sass_why) when it cannot be. rt_lock held, rt_in_sass set. */
bool rt_sass_ctx_ready(struct rt_ctx *x);
/* A record slot in x's device memory, or 0. */
CUdeviceptr rt_sass_new_record(struct rt_ctx *x);

#endif
