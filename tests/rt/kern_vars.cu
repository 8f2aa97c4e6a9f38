// kern.cu's kernels with module variables, as programs have them: a
// __device__ count of launches (read back by the program) and a
// __constant__ table. In a live session the instrumented copy of the
// module must use the program's variables, not its own.
__device__ unsigned fk_runs;
__constant__ float fk_factor[4] = { 1.0f, 2.0f, 3.0f, 4.0f };

extern "C" __global__ void add_one(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i == 0)
		atomicAdd(&fk_runs, 1u);
	if (i < n)
		x[i] += fk_factor[0];
}

__global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i == 0)
		atomicAdd(&fk_runs, 1u);
	if (i >= n)
		return;
	x[i] *= a * fk_factor[i & 3] / fk_factor[i & 3];
}
