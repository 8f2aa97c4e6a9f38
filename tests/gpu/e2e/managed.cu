// Managed memory swept the way the stdlib memory policies expect
// (stdlib/policies): a vector add over three managed arrays in chunks
// (each launch's pointers one chunk further), two passes; then six
// managed weight buffers read layer by layer, two sweeps. 16 vadd
// launches of 256 x 256 threads, 12 layer launches of 128 x 256. Every
// value is a small integer, so sums are exact and the summary compares
// bit for bit with or without a policy.
#include "common.h"

#define N (16ul << 20)     // floats per array (64 MiB)
#define CHUNK (2ul << 20)  // floats per launch
#define LAYERS 6
#define LAYER_N (8ul << 20) // floats per layer (32 MiB)

__global__ void vadd(const float *a, const float *b, float *c, unsigned long n)
{
	for (unsigned long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long)gridDim.x * blockDim.x)
		c[i] = a[i] + b[i];
}

// One partial sum per block (no float atomics: deterministic).
__global__ void layer(const float *w, unsigned long n, float *out)
{
	__shared__ float part[256];
	float s = 0;
	for (unsigned long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long)gridDim.x * blockDim.x)
		s += w[i];
	part[threadIdx.x] = s;
	__syncthreads();
	for (int k = 128; k > 0; k >>= 1) {
		if (threadIdx.x < k)
			part[threadIdx.x] += part[threadIdx.x + k];
		__syncthreads();
	}
	if (!threadIdx.x)
		out[blockIdx.x] += part[0];
}

int main()
{
	float *a, *b, *c, *w[LAYERS], *out;
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMallocManaged(&a, N * 4));
	CK(cudaMallocManaged(&b, N * 4));
	CK(cudaMallocManaged(&c, N * 4));
	for (unsigned long i = 0; i < N; i++) {
		a[i] = (float)(i % 100);
		b[i] = (float)(i % 7);
		c[i] = 0;
	}
	for (int l = 0; l < LAYERS; l++) {
		CK(cudaMallocManaged(&w[l], LAYER_N * 4));
		for (unsigned long i = 0; i < LAYER_N; i++)
			w[l][i] = (float)((i + l) % 3);
	}
	CK(cudaMallocManaged(&out, 128 * 4));
	memset(out, 0, 128 * 4);

	for (int pass = 0; pass < 2; pass++) {
		for (unsigned long off = 0; off < N; off += CHUNK) {
			vadd<<<256, 256, 0, s>>>(a + off, b + off, c + off, CHUNK);
			CKLAUNCH();
		}
		CK(cudaStreamSynchronize(s));
	}
	for (int sweep = 0; sweep < 2; sweep++) {
		for (int l = 0; l < LAYERS; l++) {
			layer<<<128, 256, 0, s>>>(w[l], LAYER_N, out);
			CKLAUNCH();
		}
		CK(cudaStreamSynchronize(s));
	}

	for (unsigned long i = 0; i < N; i++)
		if (c[i] != (float)(i % 100 + i % 7)) {
			fprintf(stderr, "managed: c[%lu] = %g\n", i, c[i]);
			return 1;
		}
	double total = 0;
	for (int k = 0; k < 128; k++)
		total += out[k];
	summary("vadd", c, N);
	printf("layers: %.1f\n", total);
	for (int l = 0; l < LAYERS; l++)
		CK(cudaFree(w[l]));
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(c));
	CK(cudaFree(out));
	CK(cudaStreamDestroy(s));
	return 0;
}
