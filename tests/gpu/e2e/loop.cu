// A launch-bound loop for the fault-injection check (faults.sh): N
// launches of a tiny kernel over 1M floats, each followed by a
// synchronize. stdout is the result alone (deterministic); with
// LOOP_TIMES=FILE, every 2000 launches "LAUNCHES NS" (since the first)
// goes to FILE, flushed, so a watcher sees the program's speed while it
// runs.
#include "common.h"

#include <time.h>

__global__ void step(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 0.5f + 1.0f;
}

static long long now_ns()
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ll + t.tv_nsec;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 100000;
	const int n = 1 << 20;
	const char *tf = getenv("LOOP_TIMES");
	FILE *times = tf ? fopen(tf, "w") : NULL;
	float *x = dev_alloc(n);
	CK(cudaMemset(x, 0, n * sizeof(float)));
	long long t0 = now_ns();
	for (long k = 1; k <= iters; k++) {
		step<<<n / 256, 256>>>(x, n);
		CKLAUNCH();
		CK(cudaDeviceSynchronize());
		if (times && k % 2000 == 0) {
			fprintf(times, "%ld %lld\n", k, now_ns() - t0);
			fflush(times);
		}
	}
	static float h[1 << 20];
	to_host(h, x, n);
	// x converges to 2 exactly (x = x / 2 + 1 from 0, in float)
	summary("x", h, n);
	if (times)
		fclose(times);
	CK(cudaFree(x));
	return finish(0);
}
