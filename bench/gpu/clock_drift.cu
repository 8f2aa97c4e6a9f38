// How far the GPU's %globaltimer moves against the host's CLOCK_MONOTONIC
// over a run: the offset between them, taken by a handshake over mapped
// memory (the same method as the runtime's calibration) every interval,
// printed as microseconds of change since the first. gpux matches the
// clocks once per context, so any change here is error in `nsecs`.
//   clock_drift [seconds] [interval_ms] [busy]
// busy: keep the GPU loaded with a spinning kernel on another stream.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

__device__ static uint64_t gtimer(void)
{
	uint64_t t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

// m[0] running, m[1] go, m[2] stamp, m[3] done
__global__ void sample(volatile unsigned long long *m)
{
	m[0] = 1;
	__threadfence_system();
	while (!m[1])
		;
	m[2] = gtimer();
	__threadfence_system();
	m[3] = 1;
}

__global__ void spin(unsigned long long ns)
{
	uint64_t t0 = gtimer();
	while (gtimer() - t0 < ns)
		;
}

static int64_t offset(volatile unsigned long long *m, unsigned long long *dm, cudaStream_t s,
		      uint64_t *rt)
{
	int64_t best_off = 0;
	uint64_t best = UINT64_MAX;
	for (int r = 0; r < 5; r++) {
		for (int k = 0; k < 4; k++)
			m[k] = 0;
		sample<<<1, 1, 0, s>>>(dm);
		while (!m[0])
			;
		uint64_t h0 = now_ns();
		m[1] = 1;
		while (!m[3])
			;
		uint64_t h1 = now_ns();
		cudaStreamSynchronize(s);
		if (h1 - h0 < best) {
			best = h1 - h0;
			best_off = (int64_t)m[2] - (int64_t)(h0 + (h1 - h0) / 2);
		}
	}
	*rt = best;
	return best_off;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	int every = argc > 2 ? atoi(argv[2]) : 500;
	int busy = argc > 3 && atoi(argv[3]);
	unsigned long long *m, *dm;
	cudaHostAlloc(&m, 64, cudaHostAllocMapped);
	cudaHostGetDevicePointer(&dm, m, 0);
	cudaStream_t s, b;
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
	uint64_t rt, start = now_ns();
	int64_t first = offset(m, dm, s, &rt);
	printf("t_s offset_change_us roundtrip_us\n0.000 0.000 %.3f\n", rt / 1e3);
	while (now_ns() - start < secs * 1e9) {
		if (busy)
			spin<<<132 * 8, 128, 0, b>>>((unsigned long long)every * 900000ull);
		struct timespec d = { every / 1000, (every % 1000) * 1000000L };
		nanosleep(&d, NULL);
		int64_t o = offset(m, dm, s, &rt);
		printf("%.3f %.3f %.3f\n", (now_ns() - start) / 1e9, (o - first) / 1e3, rt / 1e3);
		fflush(stdout);
	}
	cudaDeviceSynchronize();
	return cudaGetLastError() != cudaSuccess;
}
