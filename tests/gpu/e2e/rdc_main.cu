// Relocatable device code across files (nvcc -rdc=true, as CMake's
// CUDA_SEPARABLE_COMPILATION builds): rdc_vadd calls rdc_twice and reads
// rdc_scale, both defined in rdc_lib.cu; rdc_lib.cu's own kernel is
// launched from there. 10000 elements, 40 blocks of 256 threads each.
#include <cstdio>

#include "common.h"

extern __device__ float rdc_scale;
__device__ float rdc_twice(float x);
void rdc_fill_launch(float *c, int n);

__global__ void rdc_vadd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = rdc_twice(a[i]) + b[i] * rdc_scale;
}

int main()
{
	const int n = 10000;
	float *a, *b, *c, *d;
	CK(cudaMallocManaged(&a, n * sizeof(float)));
	CK(cudaMallocManaged(&b, n * sizeof(float)));
	CK(cudaMallocManaged(&c, n * sizeof(float)));
	CK(cudaMallocManaged(&d, n * sizeof(float)));
	for (int i = 0; i < n; i++) {
		a[i] = (float)i;
		b[i] = 1.0f;
	}
	rdc_vadd<<<(n + 255) / 256, 256>>>(a, b, c, n);
	CK(cudaGetLastError());
	rdc_fill_launch(d, n);
	CK(cudaDeviceSynchronize());
	double s = 0;
	for (int i = 0; i < n; i++)
		s += c[i] + d[i];
	printf("rdc sum %.1f\n", s);
	return 0;
}
