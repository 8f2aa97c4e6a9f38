// Programs that end in unusual ways, for faults.sh: gpux must leave
// their exit status and output as they are alone.
//   edge devfault      a kernel writes to an unmapped address: the next
//                      synchronize reports it, the program exits 5
//   edge thread_exit   a second thread calls exit(7) while the main
//                      thread launches kernels
//   edge fork          fork() after a launch; the child (no CUDA) exits
//                      3, the parent waits, launches again, exits 0
#include "common.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

__global__ void poke(int *p)
{
	p[threadIdx.x] = (int)threadIdx.x;
}

static void *exiter(void *arg)
{
	(void)arg;
	usleep(200000);
	printf("thread: exit(7)\n");
	fflush(stdout);
	exit(7);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fork";
	int *d;
	CK(cudaMalloc((void **)&d, 1024 * sizeof(int)));
	poke<<<1, 256>>>(d);
	CK(cudaDeviceSynchronize());
	printf("edge %s: first launch done\n", mode);
	fflush(stdout);
	if (!strcmp(mode, "devfault")) {
		poke<<<1, 256>>>((int *)(uintptr_t)16);
		cudaError_t e = cudaDeviceSynchronize();
		printf("synchronize: %s\n", cudaGetErrorName(e));
		return e == cudaSuccess ? 0 : 5;
	}
	if (!strcmp(mode, "thread_exit")) {
		pthread_t t;
		pthread_create(&t, NULL, exiter, NULL);
		for (;;) {
			poke<<<1, 256>>>(d);
			if (cudaDeviceSynchronize() != cudaSuccess)
				for (;;) /* the exit is tearing CUDA down: let it finish */
					pause();
		}
	}
	pid_t c = fork();
	if (c == 0)
		exit(3);
	int st = 0;
	waitpid(c, &st, 0);
	printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	poke<<<1, 256>>>(d);
	CK(cudaDeviceSynchronize());
	printf("edge fork: second launch done\n");
	CK(cudaFree(d));
	return 0;
}
