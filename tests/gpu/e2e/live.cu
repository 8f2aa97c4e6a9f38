// A long-running program for live sessions (gpux --repl -c): two kernels
// launched by turns until SIGTERM; each SIGUSR1 starts a new phase. A
// launch counts in the phase current when it returned, so a launch held
// by a paused gpux counts in the phase it was let go in. At the end:
// each phase's launches of each kernel, and a checksum of the data.
#include <csignal>
#include <cstdio>
#include <ctime>

#include "common.h"

#define PHASES 16
static volatile sig_atomic_t phase, quit;

static void on_usr1(int) { if (phase < PHASES - 1) phase++; }
static void on_term(int) { quit = 1; }

__global__ void add_one(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 1.0f;
}

__global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}

int main()
{
	const int n = 1 << 16, threads = 256, blocks = n / threads;
	static long launches[PHASES][2];
	float *d;
	CK(cudaMalloc(&d, n * sizeof(float)));
	CK(cudaMemset(d, 0, n * sizeof(float)));
	std::signal(SIGUSR1, on_usr1);
	std::signal(SIGTERM, on_term);
	std::printf("live: launching %d x %d threads\n", blocks, threads);
	std::fflush(stdout);
	for (long i = 0; !quit; i++) {
		if (i % 2 == 0)
			add_one<<<blocks, threads>>>(d, n);
		else
			scale<<<blocks, threads>>>(d, 0.5f, n);
		CK(cudaGetLastError());
		launches[phase][i % 2]++;
		if (i % 2) {
			CK(cudaDeviceSynchronize());
			timespec t = { 0, 500000 };
			nanosleep(&t, nullptr);
		}
	}
	CK(cudaDeviceSynchronize());
	float h[4];
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	for (int p = 0; p <= phase; p++)
		std::printf("live: phase %d: add_one %ld, scale %ld\n", p, launches[p][0],
			    launches[p][1]);
	std::printf("live: x[0] = %.6f\n", h[0]);
	CK(cudaFree(d));
	return 0;
}
