// Cooperative launch with a grid-wide barrier: coopK, 40 blocks x 256
// threads (n = 10000) through cudaLaunchCooperativeKernel. Phase 1 writes
// x[i], grid.sync(), phase 2 reads a neighbour written by another block.
// (grid.sync() spins on global memory, so access counts are not fixed:
// only kernel entry/exit counts are checked.)
#include "common.h"

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void coopK(float *x, float *y, int n)
{
	cg::grid_group grid = cg::this_grid();
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = (float)(i % 100) * 0.25f;
	grid.sync();
	if (i < n)
		y[i] = x[(i + 256) % n] - x[i];
}

int main()
{
	const int n = 10000, blocks = 40, threads = 256;
	int dev = 0, coop = 0, per_sm = 0, sms = 0;
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, coopK, threads, 0));
	if (!coop || per_sm * sms < blocks) {
		fprintf(stderr, "coop: cooperative launch of %d blocks not possible "
			"(attribute %d, %d blocks/SM x %d SMs)\n", blocks, coop, per_sm, sms);
		return 3;
	}
	static float y[n], want[n];
	for (int i = 0; i < n; i++)
		want[i] = (float)(((i + 256) % n) % 100) * 0.25f - (float)(i % 100) * 0.25f;
	float *dx = dev_alloc(n), *dy = dev_alloc(n);
	int nn = n;
	void *args[] = {&dx, &dy, &nn};
	printf("cudaLaunchCooperativeKernel coopK<<<%d, %d>>> n=%d\n", blocks, threads, n);
	CK(cudaLaunchCooperativeKernel((void *)coopK, dim3(blocks), dim3(threads), args, 0, 0));
	CK(cudaDeviceSynchronize());
	to_host(y, dy, n);
	summary("y", y, n);
	int bad = check("y", y, want, n);
	CK(cudaFree(dx));
	CK(cudaFree(dy));
	return finish(bad);
}
