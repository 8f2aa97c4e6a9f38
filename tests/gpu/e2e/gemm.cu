// Tiled SGEMM with shared memory and __syncthreads: C = A * B, 256 x 256,
// 16 x 16 tiles, grid 16 x 16 blocks of 16 x 16 threads (65536 threads).
// A and B are filled on the device by initMatrix (64 blocks x 256 threads,
// grid-stride, 4 elements and 8 stores per thread), a kernel whose name does
// not match *gemm*, so filters on the kernel name are seen to work.
#include "common.h"

#define TILE 16

__global__ void initMatrix(float *A, float *B, int count)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
	     i += gridDim.x * blockDim.x) {
		A[i] = (float)((i * 37) % 17 - 8) * 0.125f;
		B[i] = (float)((i * 11) % 13 - 6) * 0.25f;
	}
}

// Per thread: n / TILE iterations of 2 global loads, then 1 global store.
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

int main()
{
	const int n = 256, count = n * n;
	float *dA = dev_alloc(count), *dB = dev_alloc(count), *dC = dev_alloc(count);
	CK(cudaMemset(dC, 0, count * sizeof(float)));
	printf("initMatrix<<<64, 256>>> count=%d\n", count);
	initMatrix<<<64, 256>>>(dA, dB, count);
	CKLAUNCH();
	dim3 grid(n / TILE, n / TILE), block(TILE, TILE);
	printf("sgemm_tiled<<<(%d, %d), (%d, %d)>>> n=%d\n", grid.x, grid.y,
	       block.x, block.y, n);
	sgemm_tiled<<<grid, block>>>(dA, dB, dC, n);
	CKLAUNCH();
	CK(cudaDeviceSynchronize());

	static float A[count], B[count], C[count], want[count];
	to_host(A, dA, count);
	to_host(B, dB, count);
	to_host(C, dC, count);
	int bad = 0;
	for (int i = 0; i < count; i++)
		if (A[i] != (float)((i * 37) % 17 - 8) * 0.125f ||
		    B[i] != (float)((i * 11) % 13 - 6) * 0.25f) {
			printf("check init: MISMATCH at %d\n", i);
			bad = 1;
			break;
		}
	// Products are multiples of 1/32 and every partial sum stays below
	// 2^9: exact in float in any order, so the double model is exact.
	for (int r = 0; r < n; r++)
		for (int c = 0; c < n; c++) {
			double s = 0;
			for (int k = 0; k < n; k++)
				s += (double)A[r * n + k] * B[k * n + c];
			want[r * n + c] = (float)s;
		}
	summary("A", A, count);
	summary("B", B, count);
	summary("C", C, count);
	bad |= check("C", C, want, count);
	CK(cudaFree(dA));
	CK(cudaFree(dB));
	CK(cudaFree(dC));
	return finish(bad);
}
