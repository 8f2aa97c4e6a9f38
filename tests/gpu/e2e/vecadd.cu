// Vector add, n = 10000, 40 blocks x 256 threads (10240 threads, the last
// 240 do nothing). Per element i < n: 2 global loads + 1 global store.
// Built twice: static cudart (vecadd) and -cudart shared (vecadd_shared).
#include "common.h"

__global__ void vecAdd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

int main()
{
	const int n = 10000, blocks = 40, threads = 256;
	static float a[n], b[n], c[n], want[n];
	for (int i = 0; i < n; i++) {
		// Multiples of 1/8 of modest size: every sum is exact.
		a[i] = (float)(i % 1000) * 0.25f;
		b[i] = (float)(i / 7) * 0.125f - 100.0f;
		want[i] = a[i] + b[i];
	}
	float *da = dev_alloc(n), *db = dev_alloc(n), *dc = dev_alloc(n);
	to_dev(da, a, n);
	to_dev(db, b, n);
	CK(cudaMemset(dc, 0, n * sizeof(float)));
	printf("vecAdd<<<%d, %d>>> n=%d\n", blocks, threads, n);
	vecAdd<<<blocks, threads>>>(da, db, dc, n);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	to_host(c, dc, n);
	summary("c", c, n);
	int bad = check("c", c, want, n);
	CK(cudaFree(da));
	CK(cudaFree(db));
	CK(cudaFree(dc));
	return finish(bad);
}
