// Block-exit callbacks for sass_floor, compiled as a tools patch:
//   cb_ret    returns at once (what the Sanitizer's call costs alone)
//   cb_load   reads a flag from the userdata and returns
//   cb_count  one atomic per warp (the warp's active lanes)
//   cb_call   the same through a call to a non-inlined function, as
//             gpux's callback calls the probe
#include <stdint.h>
extern "C" __device__ __noinline__ int cb_ret(void *u, uint64_t pc)
{
	return 0;
}

extern "C" __device__ __noinline__ int cb_load(void *u, uint64_t pc)
{
	volatile unsigned *f = (volatile unsigned *)u;
	if (f && f[2] == 12345u)
		f[3] = 1;
	return 0;
}

static __device__ __forceinline__ void count(unsigned long long *c)
{
	unsigned m = __activemask();
	unsigned lane;
	asm("mov.u32 %0, %%laneid;" : "=r"(lane));
	if (lane == (unsigned)__ffs(m) - 1)
		atomicAdd(c, (unsigned long long)__popc(m));
}

extern "C" __device__ __noinline__ int cb_count(void *u, uint64_t pc)
{
	if (u)
		count((unsigned long long *)u);
	return 0;
}

extern "C" __device__ __noinline__ void floor_probe(unsigned long long *c)
{
	count(c);
}

extern "C" __device__ __noinline__ int cb_call(void *u, uint64_t pc)
{
	if (u)
		floor_probe((unsigned long long *)u);
	return 0;
}
