// Tiled SGEMM (16 x 16 shared-memory tiles, like tests/gpu/e2e/gemm.cu)
// launch + cudaDeviceSynchronize latency: gemm_bench N ITERATIONS [WARMUP]
// (N a multiple of 16; the preset is 1024 100). Timing as vecadd_bench.
#include "bench.h"

#define TILE 16

__global__ void sgemm_tiled(const float *A, const float *B, float *C, int n)
{
	__shared__ float As[TILE][TILE], Bs[TILE][TILE];
	int tx = threadIdx.x, ty = threadIdx.y;
	int row = blockIdx.y * TILE + ty;
	int col = blockIdx.x * TILE + tx;
	float acc = 0.0f;
	for (int t = 0; t < n / TILE; t++) {
		As[ty][tx] = A[row * n + t * TILE + tx];
		Bs[ty][tx] = B[(t * TILE + ty) * n + col];
		__syncthreads();
		for (int k = 0; k < TILE; k++)
			acc = fmaf(As[ty][k], Bs[k][tx], acc);
		__syncthreads();
	}
	C[row * n + col] = acc;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s N ITERATIONS [WARMUP]\n", argv[0]);
		return 2;
	}
	int n = atoi(argv[1]), iters = atoi(argv[2]), warm = argc > 3 ? atoi(argv[3]) : 3;
	if (n <= 0 || n % TILE || iters <= 0 || warm < 0) {
		fprintf(stderr, "gemm_bench: bad arguments (N a multiple of %d)\n", TILE);
		return 2;
	}
	size_t count = (size_t)n * n;
	std::vector<float> A(count), B(count), C(count);
	for (size_t i = 0; i < count; i++) {
		A[i] = (float)((int)(i % 17) - 8) * 0.125f;
		B[i] = (float)((int)(i % 13) - 6) * 0.25f;
	}
	float *dA, *dB, *dC;
	CK(cudaMalloc((void **)&dA, count * sizeof(float)));
	CK(cudaMalloc((void **)&dB, count * sizeof(float)));
	CK(cudaMalloc((void **)&dC, count * sizeof(float)));
	CK(cudaMemcpy(dA, A.data(), count * sizeof(float), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(dB, B.data(), count * sizeof(float), cudaMemcpyHostToDevice));
	dim3 grid(n / TILE, n / TILE), block(TILE, TILE);
	for (int i = 0; i < warm; i++) {
		sgemm_tiled<<<grid, block>>>(dA, dB, dC, n);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
	}
	std::vector<double> t;
	double limit = max_us(), start = now_us();
	for (int i = 0; i < iters; i++) {
		double t0 = now_us();
		sgemm_tiled<<<grid, block>>>(dA, dB, dC, n);
		cudaError_t e = cudaDeviceSynchronize();
		double t1 = now_us();
		CK(e);
		t.push_back(t1 - t0);
		if (t1 - start > limit)
			break;
	}
	CK(cudaGetLastError());
	char what[160];
	snprintf(what, sizeof(what), "gemm n=%d grid=%dx%d block=%dx%d", n, grid.x, grid.y, TILE, TILE);
	report(what, t);
	CK(cudaMemcpy(C.data(), dC, count * sizeof(float), cudaMemcpyDeviceToHost));
	// Spot-check 64 elements against a double model (exact: multiples of
	// 1/32, partial sums far below 2^19).
	int bad = 0;
	for (int s = 0; s < 64; s++) {
		size_t r = (size_t)(s * 7919) % n, col = (size_t)(s * 104729) % n;
		double want = 0;
		for (int k = 0; k < n; k++)
			want += (double)A[r * n + k] * B[(size_t)k * n + col];
		bad += C[r * n + col] != (float)want;
	}
	printf("check: %s\n", bad ? "FAIL" : "ok");
	CK(cudaFree(dA));
	CK(cudaFree(dB));
	CK(cudaFree(dC));
	return bad ? 1 : 0;
}
