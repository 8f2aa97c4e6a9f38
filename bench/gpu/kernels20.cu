// Module-instrumentation time: one translation unit with 20 distinct
// kernels (different bodies, so the rewriter and the driver's JIT see 20
// functions), each launched once. Run with `gpux -v` to get the
// runtime's "patched a module of N functions in X ms" and "the driver
// loaded a patched library in Y ms" lines.
#include <cstdio>
#include <cuda_runtime.h>

#define K(n)                                                              \
	__global__ void kern##n(float *x, int len)                        \
	{                                                                 \
		int i = blockIdx.x * blockDim.x + threadIdx.x;            \
		if (i < len)                                              \
			x[i] = x[i] * (float)(n + 1) + (float)(n * n);    \
	}
K(0) K(1) K(2) K(3) K(4) K(5) K(6) K(7) K(8) K(9)
K(10) K(11) K(12) K(13) K(14) K(15) K(16) K(17) K(18) K(19)

int main()
{
	const int n = 4096;
	float *x;
	if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess)
		return 1;
	cudaMemset(x, 0, n * sizeof(float));
	void (*ks[])(float *, int) = { kern0, kern1, kern2, kern3, kern4, kern5, kern6,
				       kern7, kern8, kern9, kern10, kern11, kern12, kern13,
				       kern14, kern15, kern16, kern17, kern18, kern19 };
	for (auto k : ks)
		k<<<n / 256, 256>>>(x, n);
	float h[4];
	cudaMemcpy(h, x, sizeof(h), cudaMemcpyDeviceToHost);
	printf("%s x[1]=%a\n", cudaGetErrorString(cudaDeviceSynchronize()), h[1]);
	cudaFree(x);
	return 0;
}
