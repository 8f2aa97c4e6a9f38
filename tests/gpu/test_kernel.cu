/* The test kernel: plays the trampoline the device runtime inserts.
 * Each thread builds its own gpux_dev_ctx and calls the JIT'ed probe
 * (gpux_probe_0, defined by device.ptx, linked at load time) with its
 * three words by value, as one converged warp call. Compiled with nvcc
 * -rdc=true -ptx. */
#include <string.h>

#include "kparams.h"

extern "C" __device__ unsigned long long gpux_probe_0(unsigned long long c0,
						      unsigned long long c1,
						      unsigned long long c2);

static __device__ __forceinline__ void call_probe(const struct gpux_dev_ctx &ctx)
{
	unsigned long long w[3];
	memcpy(w, &ctx, sizeof(w));
	gpux_probe_0(w[0], w[1], w[2]);
}

static __device__ __forceinline__ unsigned smid(void)
{
	unsigned r;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
	return r;
}

/* gpux's `warp`: the warp's index in its block. */
static __device__ __forceinline__ unsigned warpid(void)
{
	return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) / 32;
}

/* Lanes of this thread's warp that exist: the last warp of a block of
 * 100 threads has 4. __syncwarp must name only those. */
static __device__ unsigned present_mask(void)
{
	unsigned base = threadIdx.x & ~31u, n = blockDim.x - base;
	return n >= 32 ? 0xffffffffu : (1u << n) - 1;
}

/* Record what the probe will read, so the host can predict warp and sm
 * exactly (both are hardware ids, not functions of the launch shape). */
static __device__ void record(const struct kparams &p, unsigned gtid)
{
	if (p.rec_smid)
		((unsigned *)p.rec_smid)[gtid] = smid();
	if (p.rec_warpid)
		((unsigned *)p.rec_warpid)[gtid] = warpid();
}

extern "C" __global__ void gpux_test_kernel(struct kparams p)
{
	unsigned gtid = blockIdx.x * blockDim.x + threadIdx.x;
	struct gpux_dev_ctx ctx = {};
	ctx.kernel_id = p.kernel_id;

	switch (p.mode) {
	case KMODE_EXIT:
		__syncwarp(present_mask());
		record(p, gtid);
		call_probe(ctx);
		break;
	case KMODE_DIVERGENT:
		if (threadIdx.x < 7) {
			record(p, gtid);
			call_probe(ctx);
		}
		break;
	case KMODE_ACCESS: {
		/* The store flag is per warp: one access site is either a
		 * load or a store for the whole warp. */
		bool store = ((gtid / 32) % 2) == 0;
		ctx.addr = p.base + (unsigned long long)gtid * p.stride;
		ctx.size = 4;
		ctx.store = store;
		if (p.touch) {
			float *buf = (float *)p.touch;
			if (store)
				buf[gtid] = (float)gtid;
			else
				ctx.site_id = buf[gtid] < 0.0f; /* a real load; the host zeroed buf */
		}
		__syncwarp(present_mask());
		record(p, gtid);
		call_probe(ctx);
		break;
	}
	}
}
