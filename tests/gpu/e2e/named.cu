// Kernels whose names a user may pick and gpux's own runtime also uses
// as a prefix: extern "C" gpux_step (40 x 256, n = 10000) calls a device
// function gpux_scale and reads a __device__ table gpux_table; then the
// C++ kernel gpux_step(float*) (mangled _Z9gpux_stepPf), 10 x 128.
// All are the program's own names and must be instrumented.
#include "common.h"

__device__ float gpux_table[4] = {0.5f, 1.0f, 2.0f, 4.0f};

__device__ __noinline__ float gpux_scale(float x, int i)
{
	return x * gpux_table[i & 3];
}

extern "C" __global__ void gpux_step(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = gpux_scale(x[i], i);
}

__global__ void gpux_step(float *x)
{
	x[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f;
}

int main()
{
	const int n = 10000;
	static float x[n], want[n];
	const float t[4] = {0.5f, 1.0f, 2.0f, 4.0f};
	for (int i = 0; i < n; i++) {
		x[i] = (float)(i % 97) * 0.25f;
		want[i] = x[i] * t[i & 3] + (i < 10 * 128 ? 1.0f : 0.0f);
	}
	float *dx = dev_alloc(n);
	to_dev(dx, x, n);
	printf("gpux_step<<<40, 256>>> then gpux_step(float*)<<<10, 128>>> n=%d\n", n);
	gpux_step<<<40, 256>>>(dx, n);
	CKLAUNCH();
	gpux_step<<<10, 128>>>(dx);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	to_host(x, dx, n);
	summary("x", x, n);
	int bad = check("x", x, want, n);
	CK(cudaFree(dx));
	return finish(bad);
}
