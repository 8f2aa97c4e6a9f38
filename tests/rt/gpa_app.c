/* A program that reaches the driver the way static cudart does: dlopen
 * libcuda.so.1, dlsym cuGetProcAddress_v2, and every other entry point
 * through it (the launch as the per-thread-stream variant), on the
 * device's primary context, its entry points kept in a table of its
 * data as cudart keeps them. Usage: gpa_app PTXFILE [late]
 * late: once the context is current, it waits for a SIGUSR1 before it
 * loads anything (a process gpux -p attaches to in between).
 * Prints what it did; exits 1 on any error. */
#include <cuda.h>

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "late.h"

typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t,
			   CUdriverProcAddressQueryResult *);

static gpa_fn gpa;

static void *get(const char *name, cuuint64_t flags)
{
	void *p = NULL;
	CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	if (gpa(name, &p, 12000, flags, &st) != CUDA_SUCCESS || !p ||
	    st != CU_GET_PROC_ADDRESS_SUCCESS) {
		fprintf(stderr, "gpa_app: no %s\n", name);
		exit(1);
	}
	return p;
}

static void check(CUresult rc, const char *what)
{
	if (rc != CUDA_SUCCESS) {
		fprintf(stderr, "gpa_app: %s failed (%d)\n", what, (int)rc);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2 && (argc != 3 || strcmp(argv[2], "late"))) {
		fprintf(stderr, "usage: gpa_app PTXFILE [late]\n");
		return 2;
	}
	bool late = argc == 3;
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	static char ptx[1 << 20];
	size_t n = fread(ptx, 1, sizeof(ptx) - 1, f);
	fclose(f);
	ptx[n] = 0;

	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "gpa_app: %s\n", dlerror());
		return 1;
	}
	gpa = (gpa_fn)dlsym(lib, "cuGetProcAddress_v2");
	if (!gpa) {
		fprintf(stderr, "gpa_app: no cuGetProcAddress_v2\n");
		return 1;
	}
	const cuuint64_t D = CU_GET_PROC_ADDRESS_DEFAULT;
	const cuuint64_t PT = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	/* a table in the program's data, as cudart keeps one */
	static CUresult (*init)(unsigned), (*dev_get)(CUdevice *, int),
		(*retain)(CUcontext *, CUdevice), (*release)(CUdevice),
		(*set_current)(CUcontext), (*load)(CUmodule *, const void *),
		(*unload)(CUmodule), (*get_function)(CUfunction *, CUmodule, const char *),
		(*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			  unsigned, CUstream, void **, void **),
		(*sync)(CUstream);
	init = get("cuInit", D);
	dev_get = get("cuDeviceGet", D);
	retain = get("cuDevicePrimaryCtxRetain", D);
	release = get("cuDevicePrimaryCtxRelease", D);
	set_current = get("cuCtxSetCurrent", D);
	load = get("cuModuleLoadData", D);
	unload = get("cuModuleUnload", D);
	get_function = get("cuModuleGetFunction", D);
	launch = get("cuLaunchKernel", PT);
	sync = get("cuStreamSynchronize", PT);

	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction add_one;
	check(init(0), "cuInit");
	check(dev_get(&dev, 0), "cuDeviceGet");
	check(retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	check(set_current(ctx), "cuCtxSetCurrent");
	if (late) /* CUDA going, nothing loaded: gpux -p attaches now */
		late_wait("gpa_app");
	check(load(&mod, ptx), "cuModuleLoadData");
	check(get_function(&add_one, mod, "add_one"), "cuModuleGetFunction");
	printf("gpa_app: loaded\n");
	static float buf[64];
	CUdeviceptr p = (CUdeviceptr)(uintptr_t)buf; /* never read by the fake */
	int count = 64;
	void *args[] = { &p, &count };
	for (int i = 0; i < 5; i++)
		check(launch(add_one, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel");
	check(sync(NULL), "cuStreamSynchronize");
	printf("gpa_app: add_one<<<1, 32>>> x5 (per-thread stream)\n");
	check(unload(mod), "cuModuleUnload");
	check(release(dev), "cuDevicePrimaryCtxRelease");
	printf("gpa_app: done\n");
	dlclose(lib);
	return 0;
}
