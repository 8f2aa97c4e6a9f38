// CUDA graphs, both ways:
//   captured: cudaStreamBeginCapture on s, capA<<<40, 256>>> (n = 10000)
//     then capB<<<10, 64>>> (n = 640), cudaStreamEndCapture,
//     cudaGraphInstantiate, cudaGraphLaunch x4;
//   explicit: two cudaGraphAddKernelNode nodes of nodeC<<<8, 128>>>
//     (n = 1000), the second depending on the first, launched x3.
// Launches: capA 4 x 10240 threads, capB 4 x 640, nodeC 3 x 2 x 1024.
#include "common.h"

__global__ void capA(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 0.5f + 1.0f; // 1 load, 1 store
}

__global__ void capB(const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += x[i]; // 2 loads, 1 store
}

__global__ void nodeC(float *z, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		z[i] = z[i] * 2.0f - 1.0f; // 1 load, 1 store
}

int main()
{
	const int nx = 10000, ny = 640, nz = 1000;
	static float x[nx], wx[nx], y[ny], wy[ny], z[nz], wz[nz];
	for (int i = 0; i < nx; i++)
		x[i] = wx[i] = (float)(i % 32) * 0.125f;
	for (int i = 0; i < ny; i++)
		y[i] = wy[i] = 0.0f;
	for (int i = 0; i < nz; i++)
		z[i] = wz[i] = (float)(i % 8) * 0.5f;
	for (int r = 0; r < 4; r++) {
		for (int i = 0; i < nx; i++)
			wx[i] = wx[i] * 0.5f + 1.0f;
		for (int i = 0; i < ny; i++)
			wy[i] += wx[i];
	}
	for (int r = 0; r < 6; r++)
		for (int i = 0; i < nz; i++)
			wz[i] = wz[i] * 2.0f - 1.0f;

	float *dx = dev_alloc(nx), *dy = dev_alloc(ny), *dz = dev_alloc(nz);
	to_dev(dx, x, nx);
	to_dev(dy, y, ny);
	to_dev(dz, z, nz);
	CK(cudaDeviceSynchronize()); // s is non-blocking: copies done first
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

	// Stream capture.
	cudaGraph_t g1;
	cudaGraphExec_t e1;
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	capA<<<40, 256, 0, s>>>(dx, nx);
	CKLAUNCH();
	capB<<<10, 64, 0, s>>>(dx, dy, ny);
	CKLAUNCH();
	CK(cudaStreamEndCapture(s, &g1));
	CK(cudaGraphInstantiate(&e1, g1, 0));
	printf("captured graph: capA<<<40, 256>>>, capB<<<10, 64>>>; launched 4 times\n");
	for (int r = 0; r < 4; r++)
		CK(cudaGraphLaunch(e1, s));

	// Explicit kernel nodes.
	cudaGraph_t g2;
	cudaGraphExec_t e2;
	CK(cudaGraphCreate(&g2, 0));
	int nzv = nz;
	void *args[] = {&dz, &nzv};
	cudaKernelNodeParams p = {};
	p.func = (void *)nodeC;
	p.gridDim = dim3(8);
	p.blockDim = dim3(128);
	p.sharedMemBytes = 0;
	p.kernelParams = args;
	p.extra = NULL;
	cudaGraphNode_t n1, n2;
	CK(cudaGraphAddKernelNode(&n1, g2, NULL, 0, &p));
	CK(cudaGraphAddKernelNode(&n2, g2, &n1, 1, &p));
	CK(cudaGraphInstantiate(&e2, g2, 0));
	printf("explicit graph: nodeC<<<8, 128>>> -> nodeC<<<8, 128>>>; launched 3 times\n");
	for (int r = 0; r < 3; r++)
		CK(cudaGraphLaunch(e2, s));
	CK(cudaStreamSynchronize(s));

	to_host(x, dx, nx);
	to_host(y, dy, ny);
	to_host(z, dz, nz);
	summary("x", x, nx);
	summary("y", y, ny);
	summary("z", z, nz);
	int bad = check("x", x, wx, nx);
	bad |= check("y", y, wy, ny);
	bad |= check("z", z, wz, nz);
	CK(cudaGraphExecDestroy(e1));
	CK(cudaGraphExecDestroy(e2));
	CK(cudaGraphDestroy(g1));
	CK(cudaGraphDestroy(g2));
	CK(cudaStreamDestroy(s));
	CK(cudaFree(dx));
	CK(cudaFree(dy));
	CK(cudaFree(dz));
	return finish(bad);
}
