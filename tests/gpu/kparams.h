/* What the host harness passes to the test kernel (one struct, by value),
 * and the trampoline's context, mirrored from codegen/device_abi.h: that
 * header drags in the front end, and the test kernel only needs the
 * layout the JIT reads (kernel_id at +16, size at +8, store at +12). */
#ifndef GPUX_TEST_KPARAMS_H
#define GPUX_TEST_KPARAMS_H

#include <stdint.h>

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

struct test_dev_ctx {
	uint64_t addr;
	uint32_t size;
	uint8_t store;
	uint8_t atomic;
	uint16_t pad;
	uint32_t kernel_id;
	uint32_t site_id;
};

#ifdef __cplusplus
static_assert(sizeof(struct test_dev_ctx) == 24, "gpux_dev_ctx layout");
static_assert(sizeof(struct kparams) == 48, "kparams layout");
#else
_Static_assert(sizeof(struct test_dev_ctx) == 24, "gpux_dev_ctx layout");
_Static_assert(sizeof(struct kparams) == 48, "kparams layout");
#endif

#endif
