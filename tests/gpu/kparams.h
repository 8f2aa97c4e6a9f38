/* What the host harness passes to the test kernel (one struct, by value).
 * The kernel plays the trampoline with abi/probe_site.h's context. */
#ifndef GPUX_TEST_KPARAMS_H
#define GPUX_TEST_KPARAMS_H

#include <stdint.h>

#include "probe_site.h"

enum kmode {
	KMODE_EXIT,      /* every thread calls the probe at kernel exit */
	KMODE_DIVERGENT, /* only threadIdx.x < 7 calls it (inside an if) */
	KMODE_ACCESS,    /* one simulated access per thread, then the probe */
};

struct kparams {
	uint64_t base;       /* KMODE_ACCESS: addr = base + gtid * stride */
	uint64_t touch;      /* device buffer the access really hits, or 0 */
	uint64_t rec_smid;   /* uint32_t per thread: %smid at the call, or 0 */
	uint64_t rec_warpid; /* uint32_t per thread: %warpid at the call, or 0 */
	uint32_t kernel_id;
	uint32_t mode;
	uint32_t stride;
	uint32_t pad;
};

#ifdef __cplusplus
static_assert(sizeof(struct kparams) == 48, "kparams layout");
#else
_Static_assert(sizeof(struct kparams) == 48, "kparams layout");
#endif

#endif
