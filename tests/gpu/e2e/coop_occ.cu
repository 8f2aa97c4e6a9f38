// A cooperative launch sized at the occupancy limit, the way CUDA's
// reductionMultiBlockCG sizes it: block size from the kernel's
// maxThreadsPerBlock (1024 with its 56 registers on sm_90), blocks from
// the occupancy API times the SMs, then one grid-synchronised reduction
// in double. Prints the configuration, the attributes it read and the
// sum: all must be the same under gpux (instrumented, this kernel needs
// more registers than 1024 threads leave, unless gpux keeps it to the
// original's budget and answers the queries as the original).
#include <cooperative_groups.h>
#include <cstdio>

#include "common.h"

namespace cg = cooperative_groups;

__global__ void occ_reduce(const float *in, double *partial, double *out, int n)
{
	cg::grid_group grid = cg::this_grid();
	extern __shared__ double sh[];
	float a[24];
#pragma unroll
	for (int k = 0; k < 24; k++)
		a[k] = 0.0f;
	for (int i = grid.thread_rank(); i < n; i += grid.size() * 24) {
#pragma unroll
		for (int k = 0; k < 24; k++) {
			int j = i + k * grid.size();
			float v = j < n ? in[j] : 0.0f;
			a[k] = fmaf(v, v + (float)k, a[k]);
		}
	}
	double s = 0;
#pragma unroll
	for (int k = 0; k < 24; k++)
		s += (double)a[k] * (k + 1);
	sh[threadIdx.x] = s;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w >>= 1) {
		if (threadIdx.x < w)
			sh[threadIdx.x] += sh[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		partial[blockIdx.x] = sh[0];
	grid.sync();
	if (grid.thread_rank() == 0) {
		double t = 0;
		for (int b = 0; b < gridDim.x; b++)
			t += partial[b];
		*out = t;
	}
}

int main()
{
	const int n = 1 << 22;
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	cudaFuncAttributes fa;
	CK(cudaFuncGetAttributes(&fa, occ_reduce));
	int threads = fa.maxThreadsPerBlock;
	size_t smem = threads * sizeof(double);
	int per_sm = 0, min_grid = 0, best_block = 0;
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, occ_reduce, threads, smem));
	CK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &best_block, occ_reduce,
						 threads * sizeof(double)));
	int blocks = per_sm * prop.multiProcessorCount;
	float *in;
	double *partial, *out;
	CK(cudaMallocManaged(&in, n * sizeof(float)));
	CK(cudaMalloc(&partial, blocks * sizeof(double)));
	CK(cudaMallocManaged(&out, sizeof(double)));
	for (int i = 0; i < n; i++)
		in[i] = (float)(i % 1000) * 0.001f;
	int nn = n;
	void *args[] = { &in, &partial, &out, &nn };
	CK(cudaLaunchCooperativeKernel((void *)occ_reduce, blocks, threads, args, smem));
	CK(cudaDeviceSynchronize());
	printf("threads %d blocks %d (%d per SM) registers %d local %zu potential block %d "
	       "grid %d\n", threads, blocks, per_sm, fa.numRegs, fa.localSizeBytes, best_block,
	       min_grid);
	printf("sum %.17g\n", *out);
	CK(cudaFree(in));
	CK(cudaFree(partial));
	CK(cudaFree(out));
	return 0;
}
