// Built with -gencode arch=compute_90,code=sm_90 only: the fatbin holds
// sm_90 SASS and no PTX, so gpux cannot rewrite sassOnlyKernel. It must
// say so (naming the kernel) and let it run untouched.
// 40 blocks x 256 threads, n = 10000.
#include "common.h"

__global__ void sassOnlyKernel(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 3.0f - 2.0f;
}

int main()
{
	const int n = 10000;
	static float x[n], want[n];
	for (int i = 0; i < n; i++) {
		x[i] = (float)(i % 50) * 0.5f;
		want[i] = x[i] * 3.0f - 2.0f;
	}
	float *dx = dev_alloc(n);
	to_dev(dx, x, n);
	printf("sassOnlyKernel<<<40, 256>>> n=%d\n", n);
	sassOnlyKernel<<<40, 256>>>(dx, n);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	to_host(x, dx, n);
	summary("x", x, n);
	int bad = check("x", x, want, n);
	CK(cudaFree(dx));
	return finish(bad);
}
