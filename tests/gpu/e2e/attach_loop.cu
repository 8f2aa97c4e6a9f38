// A kernel loop for gpux -p (attach.sh): add_one over 1M unsigned ints
// (4096 blocks of 256 threads) for SECONDS seconds of running time, a
// synchronize every 500 launches. SIGUSR1 pauses it between launches
// (after a synchronize: "attach_loop: paused at L launches" on stderr)
// until SIGUSR2, so gpux attaches and detaches at a known launch count.
// stderr also gets "attach_loop: second S: R launches" for each second
// run (its speed with and without gpux). stdout is the result alone,
// the same however many launches ran: every element equals the count.
#include "common.h"

#include <signal.h>
#include <time.h>

__global__ void add_one(unsigned *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 1;
}

static volatile sig_atomic_t pause_req, resume_req;
static void on_usr1(int sig) { (void)sig; pause_req = 1; }
static void on_usr2(int sig) { (void)sig; resume_req = 1; }

static long long now_ns()
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ll + t.tv_nsec;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 30;
	const int n = 1 << 20;
	sigset_t both, none;
	sigemptyset(&none);
	sigemptyset(&both);
	sigaddset(&both, SIGUSR1);
	sigaddset(&both, SIGUSR2);
	sigprocmask(SIG_BLOCK, &both, NULL);
	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, on_usr2);
	unsigned *x;
	CK(cudaMalloc(&x, n * sizeof(unsigned)));
	CK(cudaMemset(x, 0, n * sizeof(unsigned)));
	CK(cudaDeviceSynchronize());
	fprintf(stderr, "attach_loop: running\n");
	long launches = 0, in_second = 0;
	long long ran = 0, second_start = now_ns(), t = second_start;
	int second = 0;
	while (ran < (long long)(seconds * 1e9)) {
		add_one<<<n / 256, 256>>>(x, n);
		CKLAUNCH();
		launches++;
		in_second++;
		if (launches % 500)
			continue;
		CK(cudaDeviceSynchronize());
		long long now = now_ns();
		ran += now - t;
		t = now;
		if (now - second_start >= 1000000000ll) {
			fprintf(stderr, "attach_loop: second %d: %ld launches\n", ++second, in_second);
			in_second = 0;
			second_start = now;
		}
		sigprocmask(SIG_UNBLOCK, &both, NULL); /* a pending signal lands here */
		sigprocmask(SIG_BLOCK, &both, NULL);
		if (!pause_req)
			continue;
		pause_req = resume_req = 0;
		fprintf(stderr, "attach_loop: paused at %ld launches\n", launches);
		while (!resume_req)
			sigsuspend(&none);
		resume_req = 0;
		fprintf(stderr, "attach_loop: resumed\n");
		t = second_start = now_ns();
		in_second = 0;
	}
	unsigned *h = (unsigned *)malloc(n * sizeof(unsigned));
	CK(cudaMemcpy(h, x, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
	long bad = 0;
	for (int i = 0; i < n; i++)
		bad += h[i] != (unsigned)launches;
	fprintf(stderr, "attach_loop: %ld launches\n", launches);
	printf("attach_loop: %s\n", bad ? "WRONG" : "every element equals the launch count");
	free(h);
	CK(cudaFree(x));
	return bad ? 1 : 0;
}
