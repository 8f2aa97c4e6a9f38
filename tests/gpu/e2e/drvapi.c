/* Driver-API client (C11, cuda.h, linked with -lcuda): cuInit, primary
 * context, cuModuleLoadData of PTX text embedded at build time
 * (drvapi_kernel.cu -> nvcc -ptx -arch=compute_80 -> bin2c -> drvapi_ptx.h),
 * cuModuleGetFunction, cuLaunchKernel of drvScale, 40 blocks x 256
 * threads, n = 10000: y = a * x + y, 2 global loads + 1 store per i < n.
 * DRVAPI_JIT_FTZ set: the module is loaded with CU_JIT_FTZ and
 * CU_JIT_MAX_REGISTERS (cuModuleLoadDataEx). */
#include <cuda.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drvapi_ptx.h"

#define CU(call)                                                              \
	do {                                                                      \
		CUresult r_ = (call);                                                 \
		if (r_ != CUDA_SUCCESS) {                                             \
			const char *s_ = NULL;                                            \
			cuGetErrorString(r_, &s_);                                        \
			fprintf(stderr, "%s:%d: %s: %s (%d)\n", __FILE__, __LINE__,       \
				#call, s_ ? s_ : "?", (int)r_);                               \
			exit(2);                                                          \
		}                                                                     \
	} while (0)

enum { N = 10000, BLOCKS = 40, THREADS = 256 };

static uint64_t fnv1a64(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int main(void)
{
	static float x[N], y[N], want[N];
	const float a = 1.5f;
	for (int i = 0; i < N; i++) {
		x[i] = (float)(i % 40) * 0.25f;
		y[i] = (float)(i % 9) - 4.0f;
		want[i] = a * x[i] + y[i]; /* exact: multiples of 1/8 */
	}
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	CUdeviceptr dx, dy;
	CU(cuInit(0));
	CU(cuDeviceGet(&dev, 0));
	CU(cuDevicePrimaryCtxRetain(&ctx, dev));
	CU(cuCtxSetCurrent(ctx));
	/* DRVAPI_JIT_FTZ=1: loaded with JIT options that shape the code, as
	 * some programs do (a live session's copy must get them too) */
	if (getenv("DRVAPI_JIT_FTZ")) {
		CUjit_option o[] = { CU_JIT_FTZ, CU_JIT_MAX_REGISTERS };
		void *v[] = { (void *)(uintptr_t)1, (void *)(uintptr_t)32 };
		CU(cuModuleLoadDataEx(&mod, drvapi_ptx, 2, o, v));
	} else {
		CU(cuModuleLoadData(&mod, drvapi_ptx));
	}
	CU(cuModuleGetFunction(&fn, mod, "drvScale"));
	CU(cuMemAlloc(&dx, sizeof(x)));
	CU(cuMemAlloc(&dy, sizeof(y)));
	CU(cuMemcpyHtoD(dx, x, sizeof(x)));
	CU(cuMemcpyHtoD(dy, y, sizeof(y)));
	int n = N;
	float av = a;
	void *args[] = {&dx, &dy, &av, &n};
	printf("cuLaunchKernel drvScale<<<%d, %d>>> n=%d a=%a\n", BLOCKS, THREADS, N, a);
	CU(cuLaunchKernel(fn, BLOCKS, 1, 1, THREADS, 1, 1, 0, NULL, args, NULL));
	CU(cuCtxSynchronize());
	CU(cuMemcpyDtoH(y, dy, sizeof(y)));

	double s = 0;
	for (int i = 0; i < N; i++)
		s += y[i];
	printf("y: n=%d fnv1a64=%016llx sum=%a [0]=%a [%d]=%a\n", N,
	       (unsigned long long)fnv1a64(y, sizeof(y)), s, (double)y[0], N - 1,
	       (double)y[N - 1]);
	int bad = 0;
	for (int i = 0; i < N; i++)
		if (memcmp(&y[i], &want[i], sizeof(float))) {
			printf("check y: MISMATCH at %d: got %a want %a\n", i, (double)y[i],
			       (double)want[i]);
			bad = 1;
			break;
		}
	if (!bad)
		printf("check y: ok\n");
	CU(cuMemFree(dx));
	CU(cuMemFree(dy));
	CU(cuModuleUnload(mod));
	CU(cuDevicePrimaryCtxRelease(dev));
	printf("%s\n", bad ? "result: FAIL" : "result: ok");
	return bad;
}
