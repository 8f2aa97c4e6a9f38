/* What the Compute Sanitizer's block-exit patching costs by itself, on
 * the GPU machine, without gpux: two elementwise kernels (a float4 per
 * thread, and 16 per thread) timed with events, unpatched and patched
 * with each callback of callbacks.cu (a copy of the kernels' module per
 * callback). Prints µs per launch, the median of ROUNDS, and the count
 * cb_count gathered against the threads launched.
 *   floor KERNELS.cubin CALLBACKS.fatbin [MB [ITERS [ROUNDS]]]
 * libsanitizer-public.so is found by the dynamic loader
 * (LD_LIBRARY_PATH=/usr/local/cuda/compute-sanitizer). */
#include <cuda.h>
#include <stdbool.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*subscribe_fn)(void **, void (*)(void *, int, int, const void *), void *);
typedef int (*add_fn)(const void *, CUcontext);
typedef int (*patchi_fn)(int, CUmodule, const char *);
typedef int (*patchm_fn)(CUmodule);
typedef int (*data_fn)(CUfunction, const void *);
typedef int (*fpc_fn)(CUmodule, const char *, uint64_t *, uint64_t *);
typedef int (*cpc_fn)(CUcontext, const char *, uint64_t *, uint64_t *);
typedef int (*d2h_fn)(void *, uint64_t, size_t, void *);

static void nothing(void *u, int d, int c, const void *p)
{
	(void)u, (void)d, (void)c, (void)p;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *p = malloc((size_t)n + 1);
	if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return p;
}

/* The patched kernel's code and what lies around the callback, as raw
 * SASS for nvdisasm -b SM90 -raw. */
static void save(const char *dir, const char *name, d2h_fn d2h, uint64_t pc, size_t n)
{
	char path[512];
	void *buf = malloc(n);
	snprintf(path, sizeof(path), "%s/%s.bin", dir, name);
	FILE *f = buf ? fopen(path, "wb") : NULL;
	int rc = -1;
	size_t got = 0; /* 256 bytes at a time, up to what is mapped */
	int ok = 0;
	while (f && got < n) { /* unreadable pieces as zeros */
		rc = d2h(buf, pc + got, 256, NULL);
		if (rc)
			memset(buf, 0, 256);
		else
			ok++;
		fwrite(buf, 1, 256, f);
		got += 256;
	}
	rc = ok;
	fprintf(stderr, "dump %s: pc %#llx size %zu, %d pieces read\n", name,
		(unsigned long long)pc, n, rc);
	if (f)
		fclose(f);
	free(buf);
}

static void dump_code(const char *dir, const char *kernel, bool enter, CUmodule mod, CUcontext ctx,
		      fpc_fn fpc, cpc_fn cpc, d2h_fn d2h)
{
	uint64_t pc = 0, size = 0;
	/* the kernel, then its trampolines, which follow it */
	if (fpc(mod, kernel, &pc, &size) == 0)
		save(dir, enter ? "enter" : "exit", d2h, pc, (size_t)size + 8192);
	/* the Sanitizer's own helpers lie below the callbacks */
	if (!enter && cpc && cpc(ctx, "cb_ret", &pc, &size) == 0)
		save(dir, "below_cb", d2h, pc - 0x5000, 0x5000);
}

#define CK(x)                                                                    \
	do {                                                                     \
		CUresult r_ = (x);                                               \
		if (r_ != CUDA_SUCCESS) {                                        \
			fprintf(stderr, "%s: %d (line %d)\n", #x, r_, __LINE__); \
			return 1;                                                \
		}                                                                \
	} while (0)

static int cmp(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: floor KERNELS.cubin CALLBACKS.fatbin [MB [ITERS [ROUNDS]]]\n");
		return 2;
	}
	unsigned mb = argc > 3 ? (unsigned)atoi(argv[3]) : 256;
	int iters = argc > 4 ? atoi(argv[4]) : 100, rounds = argc > 5 ? atoi(argv[5]) : 5;
	void *lib = dlopen("libsanitizer-public.so", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	subscribe_fn sub = (subscribe_fn)dlsym(lib, "sanitizerSubscribe");
	add_fn add = (add_fn)dlsym(lib, "sanitizerAddPatches");
	patchi_fn pi = (patchi_fn)dlsym(lib, "sanitizerPatchInstructions");
	patchm_fn pm = (patchm_fn)dlsym(lib, "sanitizerPatchModule");
	data_fn sd = (data_fn)dlsym(lib, "sanitizerSetCallbackData");
	fpc_fn fpc = (fpc_fn)dlsym(lib, "sanitizerGetFunctionPcAndSize");
	cpc_fn cpc = (cpc_fn)dlsym(lib, "sanitizerGetCallbackPcAndSize");
	d2h_fn d2h = (d2h_fn)dlsym(lib, "sanitizerMemcpyDeviceToHost");
	const char *dump = getenv("FLOOR_DUMP"); /* a directory: patched code */
	void *subscriber;
	if (!sub || !add || !pi || !pm || !sd || sub(&subscriber, nothing, NULL)) {
		fprintf(stderr, "no Sanitizer patching API\n");
		return 1;
	}
	size_t klen, clen;
	char *kimg = slurp(argv[1], &klen), *cimg = slurp(argv[2], &clen);
	if (!kimg || !cimg) {
		fprintf(stderr, "cannot read %s or %s\n", argv[1], argv[2]);
		return 1;
	}
	CUdevice dev;
	CUcontext ctx;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	if (add(cimg, ctx)) {
		fprintf(stderr, "sanitizerAddPatches failed\n");
		return 1;
	}
	unsigned n4 = (unsigned)((size_t)mb << 20) / 16;
	CUdeviceptr x, y, cnt;
	CK(cuMemAlloc(&x, (size_t)n4 * 16));
	CK(cuMemAlloc(&y, (size_t)n4 * 16));
	CK(cuMemAlloc(&cnt, 64));
	CK(cuMemsetD8(x, 0, (size_t)n4 * 16));
	CUevent e0, e1;
	CK(cuEventCreate(&e0, 0));
	CK(cuEventCreate(&e1, 0));
	static const char *const modes[] = { "none",	    "cb_ret",	   "cb_load",
					     "cb_count",    "cb_call",	   "enter_ret",
					     "enter_count", "enter_call" };
	static const char *const kernels[] = { "add1", "add16" };
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		CUmodule mod;
		CK(cuModuleLoadData(&mod, kimg));
		bool enter = !strncmp(modes[m], "enter_", 6);
		const char *cb = modes[m]; /* enter_X patches block enter with cb_X */
		char cbn[32];
		if (enter) {
			snprintf(cbn, sizeof(cbn), "cb_%s", modes[m] + 6);
			cb = cbn;
		}
		if (m > 0 && (pi(enter ? 1 : 2 /* BLOCK_ENTER, BLOCK_EXIT */, mod, cb) || pm(mod))) {
			fprintf(stderr, "patching with %s failed\n", modes[m]);
			return 1;
		}
		for (size_t k = 0; k < 2; k++) {
			CUfunction f;
			CK(cuModuleGetFunction(&f, mod, kernels[k]));
			CK(cuMemsetD8(cnt, 0, 64));
			if (m > 0 && sd(f, (const void *)(uintptr_t)cnt)) {
				fprintf(stderr, "sanitizerSetCallbackData failed\n");
				return 1;
			}
			int regs = -1, local = -1;
			cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
			cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f);
			unsigned per = k ? 16 : 1, block = 128;
			unsigned grid = (n4 + block * per - 1) / (block * per);
			void *args[] = { &x, &y, &n4 };
			float t[64];
			for (int w = 0; w < 3; w++)
				CK(cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, NULL, args, NULL));
			CK(cuCtxSynchronize());
			CK(cuMemsetD8(cnt, 0, 64));
			for (int r = 0; r < rounds && r < 64; r++) {
				CK(cuEventRecord(e0, NULL));
				for (int i = 0; i < iters; i++)
					CK(cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, NULL, args,
							  NULL));
				CK(cuEventRecord(e1, NULL));
				CK(cuEventSynchronize(e1));
				CK(cuEventElapsedTime(&t[r], e0, e1));
				t[r] = t[r] * 1e3f / (float)iters;
			}
			qsort(t, (size_t)rounds, sizeof(float), cmp);
			unsigned long long c = 0;
			CK(cuMemcpyDtoH(&c, cnt, sizeof(c)));
			printf("%-9s %-5s %8.2f us  count %llu of %llu threads (regs %d, local %d)\n",
			       modes[m], kernels[k], t[rounds / 2], c,
			       (unsigned long long)grid * block * iters * rounds, regs, local);
			if (dump && (m == 1 || m == 5) && fpc && d2h && k == 0)
				dump_code(dump, kernels[k], enter, mod, ctx, fpc, cpc, d2h);
		}
		CK(cuModuleUnload(mod));
	}
	return 0;
}
