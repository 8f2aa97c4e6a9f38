// A program that crashes after 10 synchronised launches of 1024 x 1024
// threads: `crash segv` writes through a null pointer, `crash abort`
// aborts. Under gpux the maps must still hold every kernel that finished.
#include "common.h"

#include <signal.h>

__global__ void bump(unsigned *c)
{
	atomicAdd(c, 1u);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "segv";
	unsigned *c, h = 0;
	CK(cudaMalloc((void **)&c, sizeof(*c)));
	CK(cudaMemset(c, 0, sizeof(*c)));
	for (int i = 0; i < 10; i++) {
		bump<<<1024, 1024>>>(c);
		CKLAUNCH();
		CK(cudaDeviceSynchronize());
	}
	CK(cudaMemcpy(&h, c, sizeof(h), cudaMemcpyDeviceToHost));
	printf("bump<<<1024, 1024>>> x10: %u, then %s\n", h, how);
	fflush(stdout);
	if (!strcmp(how, "abort"))
		abort();
	volatile int *p = (volatile int *)(uintptr_t)(argc - 2 + (argc < 2));
	*p = 1; /* NULL: SIGSEGV */
	return 0;
}
