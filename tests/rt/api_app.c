/* A driver-API program linked against libcuda (the fake one in tests)
 * that makes a known number of each call behind the runtime's cuda:
 * events. Usage: api_app PTX SASS_FATBIN PTX_FATBIN CUBIN
 *   module_load  6: cuModuleLoadData (PTX, and a fatbin with PTX),
 *                cuModuleLoadDataEx (cubin), cuModuleLoadFatBinary (SASS
 *                only), cuModuleLoad (PTX file), cuLibraryLoadData (PTX)
 *   malloc       8: cuMemAlloc x2, managed 1024, pitch 100x8 (pitch 512:
 *                4096 bytes), async 2048, from a pool 512; through
 *                cuGetProcAddress cuMemAlloc 256 and the per-thread
 *                cuMemAllocAsync 128
 *   memcpy      18: the 14 kinds once each (4 of them 2D/3D), then
 *                through cuGetProcAddress the per-thread cuMemcpyHtoD,
 *                cuMemcpyDtoHAsync and cuMemcpy, and through dlsym
 *                cuMemcpyDtoD_v2_ptds; one more cuMemcpyHtoD fetched for
 *                CUDA 2.0 (the 32-bit one: not an event)
 *   sync         5: stream, context; per-thread stream, both context
 *                syncs through cuGetProcAddress
 *   launch       8: add_one x2, scale by cuLaunchKernelEx, add_one
 *                cooperative, scale from the library (a CUkernel), add_one
 *                of the second PTX module, add_one after an unload, and
 *                the per-thread cuLaunchKernel through cuGetProcAddress
 *   free         8
 * Prints what it did (the stream's handle on stderr); exits 1 on any
 * error or a copy that moved the wrong bytes. */
#include <cuda.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "slurp.h"

static void check(CUresult rc, const char *what)
{
	if (rc == CUDA_SUCCESS)
		return;
	const char *s = NULL;
	cuGetErrorString(rc, &s);
	fprintf(stderr, "api_app: %s: %s\n", what, s ? s : "?");
	exit(1);
}

static void same(const void *a, const void *b, size_t n, const char *what)
{
	if (memcmp(a, b, n)) {
		fprintf(stderr, "api_app: %s moved the wrong bytes\n", what);
		exit(1);
	}
}

static void *gpa(const char *name, int ver, cuuint64_t flags)
{
	void *p = NULL;
	CUdriverProcAddressQueryResult st;
	check(cuGetProcAddress(name, &p, ver, flags, &st), name);
	if (!p) {
		fprintf(stderr, "api_app: no %s\n", name);
		exit(1);
	}
	return p;
}

static unsigned char h[4096], h2[4096];

static void copies(CUcontext ctx, CUstream s, CUdeviceptr d1, CUdeviceptr d2, CUdeviceptr um,
		   CUdeviceptr pd)
{
	for (size_t i = 0; i < sizeof(h); i++)
		h[i] = (unsigned char)(i * 7 + 3);
	check(cuMemcpyHtoD(d1, h, 4096), "cuMemcpyHtoD");
	check(cuMemcpyDtoD(d2, d1, 4096), "cuMemcpyDtoD");
	check(cuMemcpyDtoH(h2, d2, 4096), "cuMemcpyDtoH");
	same(h, h2, 4096, "HtoD, DtoD, DtoH");
	check(cuMemcpy(um, d1, 1024), "cuMemcpy");
	check(cuMemcpyHtoDAsync(d1, h + 1, 256, s), "cuMemcpyHtoDAsync");
	check(cuMemcpyDtoDAsync(d2, d1, 256, s), "cuMemcpyDtoDAsync");
	check(cuMemcpyDtoHAsync(h2, d2, 256, s), "cuMemcpyDtoHAsync");
	same(h + 1, h2, 256, "the async copies");
	check(cuMemcpyAsync(um, d2, 256, s), "cuMemcpyAsync");
	check(cuMemcpyPeer(d2, ctx, d1, ctx, 128), "cuMemcpyPeer");
	check(cuMemcpyPeerAsync(d1, ctx, d2, ctx, 128, s), "cuMemcpyPeerAsync");
	printf("api_app: 10 linear copies\n");

	/* 8 rows of 100 bytes into the pitched allocation and back */
	CUDA_MEMCPY2D c2 = { .srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = h, .srcPitch = 100,
			     .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = pd,
			     .dstPitch = 512, .WidthInBytes = 100, .Height = 8 };
	check(cuMemcpy2D(&c2), "cuMemcpy2D");
	memset(h2, 0, sizeof(h2));
	CUDA_MEMCPY2D b2 = { .srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = pd,
			     .srcPitch = 512, .dstMemoryType = CU_MEMORYTYPE_HOST, .dstHost = h2,
			     .dstPitch = 100, .WidthInBytes = 100, .Height = 8 };
	check(cuMemcpy2DAsync(&b2, s), "cuMemcpy2DAsync");
	same(h, h2, 800, "the 2D copies");
	/* 2 slices of 4 rows of 64 bytes, pitch 128 */
	CUDA_MEMCPY3D c3 = { .srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = d1,
			     .srcPitch = 128, .srcHeight = 4, .dstMemoryType = CU_MEMORYTYPE_DEVICE,
			     .dstDevice = d2, .dstPitch = 128, .dstHeight = 4,
			     .WidthInBytes = 64, .Height = 4, .Depth = 2 };
	check(cuMemcpy3D(&c3), "cuMemcpy3D");
	/* unified to host: 2 slices of 2 rows of 32 bytes */
	CUDA_MEMCPY3D u3 = { .srcMemoryType = CU_MEMORYTYPE_UNIFIED, .srcDevice = um,
			     .srcPitch = 32, .srcHeight = 2, .dstMemoryType = CU_MEMORYTYPE_HOST,
			     .dstHost = h2, .dstPitch = 32, .dstHeight = 2,
			     .WidthInBytes = 32, .Height = 2, .Depth = 2 };
	check(cuMemcpy3DAsync(&u3, s), "cuMemcpy3DAsync");
	printf("api_app: 4 2D and 3D copies\n");
}

static void launches(CUmodule m1, CUmodule m5, CUlibrary lib, CUstream s, CUdeviceptr d1)
{
	CUfunction add_one, scale, add_one5;
	CUkernel k;
	int n = 64;
	float a = 2.0f;
	void *args1[] = { &d1, &n };
	void *args2[] = { &d1, &a, &n };
	check(cuModuleGetFunction(&add_one, m1, "add_one"), "cuModuleGetFunction");
	check(cuModuleGetFunction(&scale, m1, "_Z5scalePffi"), "cuModuleGetFunction");
	check(cuModuleGetFunction(&add_one5, m5, "add_one"), "cuModuleGetFunction");
	check(cuLibraryGetKernel(&k, lib, "_Z5scalePffi"), "cuLibraryGetKernel");
	for (int i = 0; i < 2; i++)
		check(cuLaunchKernel(add_one, 2, 1, 1, 32, 1, 1, 0, NULL, args1, NULL),
		      "cuLaunchKernel");
	CUlaunchConfig cfg = { .gridDimX = 3, .gridDimY = 2, .gridDimZ = 1, .blockDimX = 16,
			       .blockDimY = 2, .blockDimZ = 1, .sharedMemBytes = 128,
			       .hStream = s };
	check(cuLaunchKernelEx(&cfg, scale, args2, NULL), "cuLaunchKernelEx");
	check(cuLaunchCooperativeKernel(add_one, 1, 1, 1, 64, 1, 1, 0, s, args1),
	      "cuLaunchCooperativeKernel");
	check(cuLaunchKernel((CUfunction)k, 4, 1, 1, 8, 1, 1, 0, NULL, args2, NULL),
	      "cuLaunchKernel");
	check(cuLaunchKernel(add_one5, 1, 1, 1, 1, 1, 1, 0, NULL, args1, NULL), "cuLaunchKernel");
	printf("api_app: 6 launches\n");
}

/* Entry points fetched as static cudart fetches them. */
static void fetched(CUstream s, CUfunction add_one, CUdeviceptr d1)
{
	const cuuint64_t D = CU_GET_PROC_ADDRESS_DEFAULT;
	const cuuint64_t PT = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	CUresult (*alloc)(CUdeviceptr *, size_t) = gpa("cuMemAlloc", 12000, D);
	CUresult (*alloc_async)(CUdeviceptr *, size_t, CUstream) =
		gpa("cuMemAllocAsync", 12000, PT);
	CUresult (*htod)(CUdeviceptr, const void *, size_t) = gpa("cuMemcpyHtoD", 12000, PT);
	CUresult (*dtoh_async)(void *, CUdeviceptr, size_t, CUstream) =
		gpa("cuMemcpyDtoHAsync", 12000, PT);
	CUresult (*copy)(CUdeviceptr, CUdeviceptr, size_t) = gpa("cuMemcpy", 12000, PT);
	CUresult (*free_async)(CUdeviceptr, CUstream) = gpa("cuMemFreeAsync", 12000, PT);
	CUresult (*free_)(CUdeviceptr) = gpa("cuMemFree", 12000, D);
	CUresult (*stream_sync)(CUstream) = gpa("cuStreamSynchronize", 12000, PT);
	CUresult (*ctx_sync)(void) = gpa("cuCtxSynchronize", 12000, D);
	CUresult (*ctx_sync2)(CUcontext) = gpa("cuCtxSynchronize", 13000, D);
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, CUstream, void **, void **) = gpa("cuLaunchKernel", 12000, PT);
	/* the 32-bit cuMemcpyHtoD of CUDA 2.0: the fake hands out the _v2 */
	CUresult (*htod_v1)(CUdeviceptr, const void *, size_t) = gpa("cuMemcpyHtoD", 2000, D);
	CUresult (*dtod)(CUdeviceptr, CUdeviceptr, size_t) =
		(CUresult(*)(CUdeviceptr, CUdeviceptr, size_t))dlsym(RTLD_DEFAULT,
								     "cuMemcpyDtoD_v2_ptds");
	if (!dtod) {
		fprintf(stderr, "api_app: no cuMemcpyDtoD_v2_ptds\n");
		exit(1);
	}

	CUdeviceptr x, y;
	check(alloc(&x, 256), "cuMemAlloc (fetched)");
	check(alloc_async(&y, 128, NULL), "cuMemAllocAsync_ptsz");
	check(htod(x, h, 256), "cuMemcpyHtoD_v2_ptds");
	check(dtoh_async(h2, x, 256, s), "cuMemcpyDtoHAsync_v2_ptsz");
	same(h, h2, 256, "the fetched copies");
	check(copy(y, x, 128), "cuMemcpy_ptds");
	check(dtod(x, y, 128), "cuMemcpyDtoD_v2_ptds");
	check(htod_v1(x, h, 16), "cuMemcpyHtoD (2.0)");
	check(stream_sync(NULL), "cuStreamSynchronize_ptsz");
	check(ctx_sync(), "cuCtxSynchronize (fetched)");
	check(ctx_sync2(NULL), "cuCtxSynchronize_v2");
	int n = 64;
	void *args[] = { &d1, &n };
	check(launch(add_one, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel_ptsz");
	check(free_async(y, NULL), "cuMemFreeAsync_ptsz");
	check(free_(x), "cuMemFree (fetched)");
	printf("api_app: 14 calls through cuGetProcAddress and dlsym\n");
}

/* The first hooked call is an allocation: nothing has resolved the
 * runtime's own driver entry points yet when the first event comes. */
static int first_alloc(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr d;
	check(cuInit(0), "cuInit");
	check(cuDeviceGet(&dev, 0), "cuDeviceGet");
	check(cuCtxCreate(&ctx, NULL, 0, dev), "cuCtxCreate");
	check(cuMemAlloc(&d, 64), "cuMemAlloc");
	struct timespec t = { 0, 300 * 1000000L }; /* the runtime thread runs */
	nanosleep(&t, NULL);
	check(cuMemFree(d), "cuMemFree");
	printf("api_app: first-alloc done\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "first-alloc"))
		return first_alloc();
	if (argc != 5) {
		fprintf(stderr, "usage: api_app PTX SASS_FATBIN PTX_FATBIN CUBIN\n");
		return 2;
	}
	char *ptx = slurp(argv[1]), *sass = slurp(argv[2]), *ptxfat = slurp(argv[3]);
	char *cubin = slurp(argv[4]);
	CUdevice dev;
	CUcontext ctx;
	CUmodule m1, m2, m3, m4, m5;
	CUlibrary lib;
	check(cuInit(0), "cuInit");
	check(cuDeviceGet(&dev, 0), "cuDeviceGet");
	check(cuCtxCreate(&ctx, NULL, 0, dev), "cuCtxCreate");

	check(cuModuleLoadData(&m1, ptx), "cuModuleLoadData");
	check(cuModuleLoadDataEx(&m2, cubin, 0, NULL, NULL), "cuModuleLoadDataEx");
	check(cuModuleLoadFatBinary(&m3, sass), "cuModuleLoadFatBinary");
	check(cuModuleLoadData(&m4, ptxfat), "cuModuleLoadData");
	check(cuModuleLoad(&m5, argv[1]), "cuModuleLoad");
	check(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0), "cuLibraryLoadData");
	printf("api_app: 6 modules loaded\n");

	CUstream s;
	CUmemoryPool pool;
	CUdeviceptr d1, d2, um, pd, a1, a2;
	size_t pitch;
	check(cuStreamCreate(&s, 0), "cuStreamCreate");
	fprintf(stderr, "api_app: stream=%p\n", (void *)s);
	check(cuMemAlloc(&d1, 4096), "cuMemAlloc");
	check(cuMemAlloc(&d2, 4096), "cuMemAlloc");
	check(cuMemAllocManaged(&um, 1024, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
	check(cuMemAllocPitch(&pd, &pitch, 100, 8, 4), "cuMemAllocPitch");
	check(cuMemAllocAsync(&a1, 2048, s), "cuMemAllocAsync");
	check(cuDeviceGetDefaultMemPool(&pool, dev), "cuDeviceGetDefaultMemPool");
	check(cuMemAllocFromPoolAsync(&a2, 512, pool, s), "cuMemAllocFromPoolAsync");
	printf("api_app: 6 allocations (pitch %zu)\n", pitch);

	copies(ctx, s, d1, d2, um, pd);
	check(cuStreamSynchronize(s), "cuStreamSynchronize");
	check(cuCtxSynchronize(), "cuCtxSynchronize");
	printf("api_app: 2 syncs\n");

	launches(m1, m5, lib, s, d1);
	/* an unload: names are looked up again */
	CUfunction add_one;
	check(cuModuleUnload(m2), "cuModuleUnload");
	check(cuModuleGetFunction(&add_one, m1, "add_one"), "cuModuleGetFunction");
	int n = 64;
	void *args[] = { &d1, &n };
	check(cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel");
	printf("api_app: add_one after an unload\n");

	fetched(s, add_one, d1);

	check(cuMemFree(d1), "cuMemFree");
	check(cuMemFree(d2), "cuMemFree");
	check(cuMemFree(um), "cuMemFree");
	check(cuMemFree(pd), "cuMemFree");
	check(cuMemFreeAsync(a1, s), "cuMemFreeAsync");
	check(cuMemFreeAsync(a2, s), "cuMemFreeAsync");
	printf("api_app: 6 frees\n");
	check(cuStreamDestroy(s), "cuStreamDestroy");
	check(cuModuleUnload(m1), "cuModuleUnload");
	check(cuModuleUnload(m3), "cuModuleUnload");
	check(cuModuleUnload(m4), "cuModuleUnload");
	check(cuModuleUnload(m5), "cuModuleUnload");
	check(cuLibraryUnload(lib), "cuLibraryUnload");
	check(cuCtxDestroy(ctx), "cuCtxDestroy");
	printf("api_app: done\n");
	free(ptx);
	free(sass);
	free(ptxfat);
	free(cubin);
	return 0;
}
