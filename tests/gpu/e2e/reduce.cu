// Two-level sum with shared memory and __syncthreads, extern "C" names
// (printed as is): reduceBlocks, 40 blocks x 256 threads over n = 10000
// (one global load per i < n, one global store per block by thread 0),
// then reduceFinal, 1 block x 64 threads over the 40 partial sums (one
// load per thread < 40, one store). No atomics: the order of additions is
// fixed, so the output compares bit for bit.
#include "common.h"

extern "C" __global__ void reduceBlocks(const float *in, float *out, int n)
{
	__shared__ float s[256];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	s[threadIdx.x] = i < n ? in[i] : 0.0f;
	__syncthreads();
	for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
		if (threadIdx.x < stride)
			s[threadIdx.x] += s[threadIdx.x + stride];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		out[blockIdx.x] = s[0];
}

extern "C" __global__ void reduceFinal(const float *in, float *out, int n)
{
	__shared__ float s[64];
	unsigned t = threadIdx.x;
	s[t] = t < (unsigned)n ? in[t] : 0.0f;
	__syncthreads();
	for (unsigned stride = 32; stride > 0; stride >>= 1) {
		if (t < stride)
			s[t] += s[t + stride];
		__syncthreads();
	}
	if (t == 0)
		out[0] = s[0];
}

int main()
{
	const int n = 10000, blocks = 40, threads = 256;
	static float in[n];
	float part[blocks], want[blocks], total, want_total = 0;
	for (int i = 0; i < n; i++)
		in[i] = (float)(i % 100) * 0.5f - 20.0f;
	// Multiples of 1/2 with partial sums far below 2^23: exact in any order.
	for (int b = 0; b < blocks; b++) {
		double s = 0;
		for (int i = b * threads; i < (b + 1) * threads && i < n; i++)
			s += in[i];
		want[b] = (float)s;
		want_total += want[b];
	}
	float *din = dev_alloc(n), *dpart = dev_alloc(blocks), *dtot = dev_alloc(1);
	to_dev(din, in, n);
	printf("reduceBlocks<<<%d, %d>>> n=%d; reduceFinal<<<1, 64>>> n=%d\n",
	       blocks, threads, n, blocks);
	reduceBlocks<<<blocks, threads>>>(din, dpart, n);
	CKLAUNCH();
	reduceFinal<<<1, 64>>>(dpart, dtot, blocks);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	to_host(part, dpart, blocks);
	to_host(&total, dtot, 1);
	summary("partials", part, blocks);
	printf("total: %a\n", (double)total);
	int bad = check("partials", part, want, blocks);
	bad |= check("total", &total, &want_total, 1);
	CK(cudaFree(din));
	CK(cudaFree(dpart));
	CK(cudaFree(dtot));
	return finish(bad);
}
