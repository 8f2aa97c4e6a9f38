// Three kernels, two created streams and the per-thread default stream
// (built with --default-stream per-thread, so launches and copies go
// through the driver's _ptsz/_ptds entry points):
//   fillK   4 blocks x 256 on the default stream, once      (1024 threads)
//   scaleK 40 blocks x 256 on stream s1, 3 launches   (3 x 10240 threads)
//   addK    8 blocks x 128 on stream s2, 5 launches   (5 x 1024 threads)
// scaleK works on x (n = 10000), addK and fillK on y (n = 1000); the two
// streams touch disjoint buffers and run concurrently.
#include "common.h"

__global__ void fillK(float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = (float)i * 0.5f; // 1 store
}

__global__ void scaleK(float *x, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * s + 1.0f; // 1 load, 1 store
}

__global__ void addK(const float *c, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += c[i]; // 2 loads, 1 store
}

int main()
{
	const int nx = 10000, ny = 1000;
	static float x[nx], wx[nx], y[ny], wy[ny], c[ny];
	for (int i = 0; i < nx; i++)
		x[i] = wx[i] = (float)(i % 64) * 0.25f;
	for (int i = 0; i < ny; i++) {
		c[i] = (float)(i % 10) - 4.5f;
		wy[i] = (float)i * 0.5f;
	}
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < nx; i++)
			wx[i] = wx[i] * 0.5f + 1.0f; // exact: multiples of 2^-5
	for (int r = 0; r < 5; r++)
		for (int i = 0; i < ny; i++)
			wy[i] += c[i];

	cudaStream_t s1, s2;
	CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	float *dx = dev_alloc(nx), *dy = dev_alloc(ny), *dc = dev_alloc(ny);
	to_dev(dx, x, nx);
	to_dev(dc, c, ny);
	printf("fillK<<<4, 256>>> on the per-thread default stream\n");
	fillK<<<4, 256>>>(dy, ny);
	CKLAUNCH();
	// The copies and fillK done before s1 and s2 (non-blocking) start.
	CK(cudaDeviceSynchronize());
	printf("scaleK<<<40, 256, 0, s1>>> x3, addK<<<8, 128, 0, s2>>> x5\n");
	for (int r = 0; r < 5; r++) {
		if (r < 3) {
			scaleK<<<40, 256, 0, s1>>>(dx, 0.5f, nx);
			CKLAUNCH();
		}
		addK<<<8, 128, 0, s2>>>(dc, dy, ny);
		CKLAUNCH();
	}
	cudaEvent_t done;
	CK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
	CK(cudaEventRecord(done, s1));
	CK(cudaStreamWaitEvent(s2, done, 0));
	CK(cudaStreamSynchronize(s2));
	CK(cudaMemcpyAsync(x, dx, nx * sizeof(float), cudaMemcpyDeviceToHost, s1));
	CK(cudaMemcpyAsync(y, dy, ny * sizeof(float), cudaMemcpyDeviceToHost, s2));
	CK(cudaStreamSynchronize(s1));
	CK(cudaStreamSynchronize(s2));
	summary("x", x, nx);
	summary("y", y, ny);
	int bad = check("x", x, wx, nx);
	bad |= check("y", y, wy, ny);
	CK(cudaEventDestroy(done));
	CK(cudaStreamDestroy(s1));
	CK(cudaStreamDestroy(s2));
	CK(cudaFree(dx));
	CK(cudaFree(dy));
	CK(cudaFree(dc));
	return finish(bad);
}
