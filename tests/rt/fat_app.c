/* A driver-API program whose module comes from a fatbin registered in
 * its own sections, as cudart's are (the container in .nv_fatbin, the
 * wrapper in .nvFatBinSegment), loaded through the wrapper before gpux
 * -p attaches. Usage: fat_app ROUNDS N
 * Loads the module, then for each round waits for a SIGUSR1 ("fat_app:
 * waiting"), launches add_one N times over 1000 elements (4 blocks of
 * 256 threads) and says "fat_app: round R: N launches, T in all"; then
 * "fat_app: ok". Exits 1 on any error. */
#include <cuda.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "late.h"

#define ELEMS 1000

/* FAT_APP_FATBIN: kern.cu as an uncompressed PTX-only fatbin, which the
 * fake driver runs (tests/rt/CMakeLists.txt) */
__asm__(".pushsection .nv_fatbin, \"a\"\n"
	".balign 8\n"
	"fat_app_container:\n"
	".incbin \"" FAT_APP_FATBIN "\"\n"
	".popsection\n");
extern const char fat_app_container[];

static const struct {
	uint32_t magic, version;
	const void *data, *prelinked;
} fat_wrapper __attribute__((section(".nvFatBinSegment"), used, aligned(8))) = {
	0x466243b1u, 1, fat_app_container, NULL
};

static void check(CUresult rc, const char *what)
{
	if (rc != CUDA_SUCCESS) {
		fprintf(stderr, "fat_app: %s failed (%d)\n", what, (int)rc);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: fat_app ROUNDS N\n");
		return 2;
	}
	int rounds = atoi(argv[1]), n = atoi(argv[2]), elems = ELEMS;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction add_one;
	CUdeviceptr x;
	check(cuInit(0), "cuInit");
	check(cuDeviceGet(&dev, 0), "cuDeviceGet");
	check(cuCtxCreate(&ctx, NULL, 0, dev), "cuCtxCreate");
	check(cuModuleLoadData(&mod, &fat_wrapper), "cuModuleLoadData");
	check(cuModuleGetFunction(&add_one, mod, "add_one"), "cuModuleGetFunction");
	check(cuMemAlloc(&x, ELEMS * sizeof(float)), "cuMemAlloc");
	check(cuMemsetD32(x, 0, ELEMS), "cuMemsetD32");
	long total = 0;
	for (int r = 1; r <= rounds; r++) {
		late_go = 0;
		late_wait("fat_app");
		for (int i = 0; i < n; i++) {
			void *args[] = { &x, &elems };
			check(cuLaunchKernel(add_one, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL),
			      "cuLaunchKernel");
		}
		check(cuCtxSynchronize(), "cuCtxSynchronize");
		total += n;
		printf("fat_app: round %d: %d launches, %ld in all\n", r, n, total);
		fflush(stdout);
	}
	check(cuMemFree(x), "cuMemFree");
	check(cuModuleUnload(mod), "cuModuleUnload");
	check(cuCtxDestroy(ctx), "cuCtxDestroy");
	printf("fat_app: ok\n");
	return 0;
}
