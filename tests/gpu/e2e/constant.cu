// __constant__ data written with cudaMemcpyToSymbol, results in a
// __device__ array and counter read back with cudaMemcpyFromSymbol (and
// once through cudaGetSymbolAddress). poly<<<40, 256>>> (n = 10000) runs
// twice with different coefficients; if the instrumented module were not
// the one whose symbols the program writes and reads, the kernel would see
// other coefficients (or the reads would see another d_out) and the
// results would differ from the host model and from the run without gpux.
// Per i < n: 1 global load (float4), 1 global store (d_out), 1 atomic
// (d_count); ld.const of coef is not a global access.
#include "common.h"

#define N 10000

__constant__ float coef[4];
__device__ float d_out[N];
__device__ unsigned d_count;

__global__ void poly(const float4 *in, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float4 v = in[i];
		d_out[i] = coef[0] * v.x + coef[1] * v.y + coef[2] * v.z + coef[3] * v.w;
		atomicAdd(&d_count, 1u);
	}
}

static float model(const float *k, const float4 &v)
{
	// Multiples of 1/8 times multiples of 1/4, small: exact whatever the
	// order and contraction.
	return (float)((double)k[0] * v.x + (double)k[1] * v.y +
		       (double)k[2] * v.z + (double)k[3] * v.w);
}

int main()
{
	const int n = N;
	static float4 in[N];
	static float out1[N], out2[N], out3[N], want1[N], want2[N];
	const float k1[4] = {0.5f, -1.25f, 2.0f, 0.125f};
	const float k2[4] = {-3.0f, 0.75f, 0.25f, 1.5f};
	for (int i = 0; i < n; i++) {
		in[i] = make_float4((float)(i % 13) * 0.25f, (float)(i % 5) - 2.0f,
				    (float)(i % 11) * 0.125f, (float)(i / 100) * 0.5f);
		want1[i] = model(k1, in[i]);
		want2[i] = model(k2, in[i]);
	}
	float4 *din;
	CK(cudaMalloc((void **)&din, n * sizeof(float4)));
	CK(cudaMemcpy(din, in, n * sizeof(float4), cudaMemcpyHostToDevice));
	unsigned zero = 0, cnt1 = 0, cnt2 = 0;
	CK(cudaMemcpyToSymbol(d_count, &zero, sizeof(zero)));

	CK(cudaMemcpyToSymbol(coef, k1, sizeof(k1)));
	printf("poly<<<40, 256>>> n=%d coef={%a, %a, %a, %a}\n", n, k1[0], k1[1], k1[2], k1[3]);
	poly<<<40, 256>>>(din, n);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpyFromSymbol(out1, d_out, sizeof(out1)));
	CK(cudaMemcpyFromSymbol(&cnt1, d_count, sizeof(cnt1)));

	CK(cudaMemcpyToSymbol(coef, k2, sizeof(k2)));
	printf("poly<<<40, 256>>> n=%d coef={%a, %a, %a, %a}\n", n, k2[0], k2[1], k2[2], k2[3]);
	poly<<<40, 256>>>(din, n);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpyFromSymbol(out2, d_out, sizeof(out2)));
	CK(cudaMemcpyFromSymbol(&cnt2, d_count, sizeof(cnt2)));
	float *pout;
	CK(cudaGetSymbolAddress((void **)&pout, d_out));
	to_host(out3, pout, n);

	summary("d_out after launch 1", out1, n);
	summary("d_out after launch 2", out2, n);
	printf("d_count: %u after launch 1, %u after launch 2\n", cnt1, cnt2);
	int bad = check("launch 1", out1, want1, n);
	bad |= check("launch 2", out2, want2, n);
	bad |= check("cudaGetSymbolAddress(d_out)", out3, want2, n);
	if (cnt1 != (unsigned)n || cnt2 != 2u * n) {
		printf("check d_count: MISMATCH\n");
		bad = 1;
	} else {
		printf("check d_count: ok\n");
	}
	CK(cudaFree(din));
	return finish(bad);
}
