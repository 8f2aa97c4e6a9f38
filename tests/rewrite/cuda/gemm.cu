// Tiled GEMM with shared memory and __syncthreads.
#define TILE 16
extern "C" __global__ void gemm(const float *A, const float *B, float *C, int n)
{
	__shared__ float As[TILE][TILE], Bs[TILE][TILE];
	int row = blockIdx.y * TILE + threadIdx.y;
	int col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0.0f;
	for (int t = 0; t < n / TILE; t++) {
		As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];
		Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];
		__syncthreads();
		for (int k = 0; k < TILE; k++)
			acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
		__syncthreads();
	}
	C[row * n + col] = acc;
}
