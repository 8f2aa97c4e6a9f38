// A thread per GPU (the first two devices), each launching fillK
// <<<20, 256>>> on its own device DEV + 1 times: GPU 0 runs 5120 threads,
// GPU 1 10240, so per-GPU counts tell the devices apart.
#include <thread>

#include "common.h"

__global__ void fillK(float *p, int n, float v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = v;
}

static int run(int dev, float *sum)
{
	const int n = 5000, blocks = 20, threads = 256;
	static thread_local float h[n];
	CK(cudaSetDevice(dev));
	float *d = dev_alloc(n);
	for (int k = 0; k <= dev; k++) {
		fillK<<<blocks, threads>>>(d, n, (float)(dev + 1));
		CKLAUNCH();
	}
	CK(cudaDeviceSynchronize());
	to_host(h, d, n);
	*sum = 0;
	for (int i = 0; i < n; i++)
		*sum += h[i];
	CK(cudaFree(d));
	return 0;
}

int main()
{
	int ndev = 0;
	CK(cudaGetDeviceCount(&ndev));
	if (ndev < 2) {
		fprintf(stderr, "two_gpus: %d device(s), need 2\n", ndev);
		return 3; /* the e2e runner skips the case */
	}
	float sums[2] = { 0, 0 };
	int rcs[2] = { 0, 0 };
	std::thread t0([&] { rcs[0] = run(0, &sums[0]); });
	std::thread t1([&] { rcs[1] = run(1, &sums[1]); });
	t0.join();
	t1.join();
	printf("gpu 0 sum %.1f, gpu 1 sum %.1f\n", sums[0], sums[1]);
	return rcs[0] || rcs[1] || sums[0] != 5000.0f || sums[1] != 10000.0f;
}
