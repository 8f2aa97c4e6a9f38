// The SASS-only half of sass_mixed (-gencode arch=compute_90,code=sm_90).
#include "common.h"

__global__ void sassPart(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] + 10.0f;
}

void launch_sass_part(float *x, int n)
{
	sassPart<<<40, 256>>>(x, n);
	CKLAUNCH();
}
