// Non-inlined device functions with early returns, called from a kernel
// that itself returns early. 40 blocks x 256 threads, n = 10000:
//   threads i >= n (240) return at once;
//   clampf (3 return paths) is entered once per i < n (10000);
//   put returns early without storing when v == 0: in[i] == 0 exactly when
//   i % 7 == 3, 1429 of the 10000 elements, so 8571 stores.
// Global accesses: 10000 loads of in[i] (kernel) + 8571 stores (put).
#include "common.h"

__device__ __noinline__ float clampf(float x, float lo, float hi)
{
	if (x < lo)
		return lo;
	if (x > hi)
		return hi;
	return x;
}

__device__ __noinline__ void put(float *p, int i, float v)
{
	if (v == 0.0f)
		return;
	p[i] = v;
}

__global__ void devfuncKernel(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = clampf(in[i], -1.0f, 1.0f);
	put(out, i, v);
}

int main()
{
	const int n = 10000, blocks = 40, threads = 256;
	static float in[n], out[n], want[n];
	int zeros = 0;
	for (int i = 0; i < n; i++) {
		in[i] = (float)(i % 7 - 3) * 0.5f; // -1.5 .. 1.5, 0 when i % 7 == 3
		out[i] = 7.0f;                      // stays where put stores nothing
		float v = in[i] < -1.0f ? -1.0f : in[i] > 1.0f ? 1.0f : in[i];
		want[i] = v == 0.0f ? 7.0f : v;
		zeros += in[i] == 0.0f;
	}
	float *din = dev_alloc(n), *dout = dev_alloc(n);
	to_dev(din, in, n);
	to_dev(dout, out, n);
	printf("devfuncKernel<<<%d, %d>>> n=%d zeros=%d\n", blocks, threads, n, zeros);
	devfuncKernel<<<blocks, threads>>>(din, dout, n);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	to_host(out, dout, n);
	summary("out", out, n);
	int bad = check("out", out, want, n);
	CK(cudaFree(din));
	CK(cudaFree(dout));
	return finish(bad);
}
