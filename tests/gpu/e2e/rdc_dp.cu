// Relocatable device code with the device runtime (dynamic
// parallelism): each of rdc_parent's 4 blocks of 64 threads launches
// rdc_child<<<2, 32>>> from its thread 0; the device runtime's own code
// is linked into the module (libcudadevrt).
#include <cstdio>

#include "common.h"

__global__ void rdc_child(int *x)
{
	atomicAdd(x, 1);
}

__global__ void rdc_parent(int *x)
{
	if (threadIdx.x == 0)
		rdc_child<<<2, 32>>>(x);
}

int main()
{
	int *x;
	CK(cudaMallocManaged(&x, sizeof(int)));
	*x = 0;
	rdc_parent<<<4, 64>>>(x);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	printf("children ran %d threads\n", *x);
	return 0;
}
