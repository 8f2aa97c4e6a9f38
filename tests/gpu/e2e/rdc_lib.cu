// The second file of rdc_main.cu's program: the device function and
// variable rdc_vadd uses, and a kernel of its own (40 x 256 threads).
#include "common.h"

__device__ float rdc_scale = 3.0f;

__device__ float rdc_twice(float x)
{
	return 2.0f * x;
}

__global__ void rdc_fill(float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = rdc_twice(rdc_scale) + (float)i;
}

void rdc_fill_launch(float *c, int n)
{
	rdc_fill<<<(n + 255) / 256, 256>>>(c, n);
	CK(cudaGetLastError());
}
