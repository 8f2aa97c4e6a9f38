/* Linking through the driver's cuLink*: the units of a module of
 * relocatable device code (rt_relink.c), and a patched module with the
 * helper library's cubin for its device (rt_helpers.h). Linked, the
 * driver compiles only the user's code and the probes: the library was
 * compiled when gpux was built. Where no cubin fits (an architecture
 * the build lacks, devices of several architectures) or the link
 * fails, the module carries the library as PTX as before; -v says so
 * once. Called with rt_lock held. */
#include "rt_hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubin.h"
#include "rt_helpers.h"

typedef CUresult (*link_create_fn)(unsigned, CUjit_option *, void **, CUlinkState *);
typedef CUresult (*link_complete_fn)(CUlinkState, void **, size_t *);
typedef CUresult (*link_destroy_fn)(CUlinkState);

void *rt_link(const struct rt_link_in *in, int n, unsigned maxreg, size_t *size, char *err,
	      size_t errlen)
{
	link_create_fn create = (link_create_fn)rt_cuda_sym("cuLinkCreate_v2");
	link_add_fn add = REAL(H_LINK_ADD2, "cuLinkAddData_v2", link_add_fn);
	link_complete_fn complete = (link_complete_fn)rt_cuda_sym("cuLinkComplete");
	link_destroy_fn destroy = (link_destroy_fn)rt_cuda_sym("cuLinkDestroy");
	if (!create || !add || !complete || !destroy) {
		snprintf(err, errlen, "libcuda has no cuLink*");
		return NULL;
	}
	/* A link needs a context: without a current one, the device's
	 * primary context is taken (the program's cudart would take it
	 * anyway). */
	CUcontext cur = NULL, primary = NULL;
	CUdevice dev;
	if (rt_cu.CtxGetCurrent(&cur) != CUDA_SUCCESS || !cur) {
		if (rt_cu.DeviceGet(&dev, 0) != CUDA_SUCCESS ||
		    rt_cu.DevicePrimaryCtxRetain(&primary, dev) != CUDA_SUCCESS ||
		    rt_cu.CtxSetCurrent(primary) != CUDA_SUCCESS)
			primary = NULL;
	}
	char log[2048] = "";
	CUjit_option o[4] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *v[4] = { log, (void *)(uintptr_t)sizeof(log) };
	unsigned k = 2;
	if (maxreg) {
		o[k] = CU_JIT_MAX_REGISTERS;
		v[k++] = (void *)(uintptr_t)maxreg;
	}
	unsigned split = rt_split_compile(o + k, v + k, NULL, 0);
	CUlinkState st;
	void *cubin = NULL, *copy = NULL;
	CUresult rc = create(k + split, o, v, &st);
	if (rc == CUDA_ERROR_INVALID_VALUE && split) /* a driver without the option */
		rc = create(k, o, v, &st);
	if (rc == CUDA_SUCCESS) {
		for (int i = 0; rc == CUDA_SUCCESS && i < n; i++)
			rc = add(st, in[i].type, (void *)(uintptr_t)in[i].data, in[i].size,
				 "gpux_unit", 0, NULL, NULL);
		if (rc == CUDA_SUCCESS)
			rc = complete(st, &cubin, size);
		if (rc == CUDA_SUCCESS && (copy = malloc(*size)))
			memcpy(copy, cubin, *size);
		destroy(st);
	}
	if (primary)
		rt_cu.CtxSetCurrent(NULL); /* the primary context stays retained */
	if (rc != CUDA_SUCCESS) {
		log[strcspn(log, "\n")] = 0;
		snprintf(err, errlen, "%s%s%s", rt_cu_err(rc), *log ? ": " : "", log);
	} else if (!copy) {
		snprintf(err, errlen, "out of memory");
	}
	return copy;
}

/* CU_JIT_SPLIT_COMPILE by its value, which the driver's ABI fixes: an
 * older cuda.h does not name it. */
#define JIT_SPLIT_COMPILE ((CUjit_option)34)

unsigned rt_split_compile(CUjit_option *o, void **v, const CUjit_option *opt, unsigned n)
{
	for (unsigned i = 0; opt && i < n; i++)
		if (opt[i] == JIT_SPLIT_COMPILE)
			return 0;
	*o = JIT_SPLIT_COMPILE;
	*v = (void *)(uintptr_t)0; /* 0: as many threads as CPUs */
	return 1;
}

static bool verbose(void)
{
	return rt_sess()->flags & GPUX_SESS_VERBOSE;
}

/* Whether every device is of arch: the cache serves one image's result
 * to every context, and a library loads lazily in each. */
static bool one_arch(unsigned arch)
{
	CUresult (*count)(int *) = (CUresult(*)(int *))rt_cuda_sym("cuDeviceGetCount");
	int n = 1;
	if (!count || count(&n) != CUDA_SUCCESS)
		n = 1;
	for (int i = 0; i < n; i++) {
		CUdevice d;
		unsigned a;
		if (rt_cu.DeviceGet(&d, i) != CUDA_SUCCESS || !(a = rt_device_arch(d)))
			continue;
		if (a != arch)
			return false;
	}
	return true;
}

bool rt_link_lib(unsigned arch)
{
	static int told_arch, told_mixed;
	const struct gpux_sess_hdr *h = rt_sess();
	if (!h || !h->link_ptx_len || !arch)
		return false; /* no link form (no library at all): nothing to say */
	if (!rt_helper_has(arch)) {
		if (verbose() && !told_arch++)
			rt_warn("this build has no helper library cubin for sm_%u: patched modules "
				"carry the library as PTX, which the driver compiles with each",
				arch);
		return false;
	}
	static int mixed = -1;
	if (mixed < 0)
		mixed = !one_arch(arch);
	if (mixed && verbose() && !told_mixed++)
		rt_warn("devices of more than one architecture: patched modules carry the helper "
			"library as PTX, which the driver compiles with each");
	return !mixed;
}

void rt_link_failed(unsigned arch, const char *err)
{
	static int told;
	if (verbose() && !told++)
		rt_warn("cannot link a patched module with the helper library's sm_%u cubin (%s): "
			"it carries the library as PTX", arch, err);
}

unsigned rt_regs_lowest(const struct gpux_cubin_regs *regs)
{
	unsigned lowest = 0;
	for (size_t i = 0; regs && i < regs->n; i++)
		if (regs->regs[i] && (!lowest || regs->regs[i] < lowest))
			lowest = regs->regs[i];
	return lowest;
}

void *rt_link_with_lib(const char *ptx, const struct gpux_cubin_regs *regs, unsigned arch,
		       size_t *size)
{
	unsigned cap = rt_regs_lowest(regs), lib_regs = 0;
	size_t lib_size = 0;
	const void *lib = rt_helper_cubin(arch, cap, &lib_size, &lib_regs);
	char err[2300] = "cannot unpack it";
	void *cubin = NULL;
	uint64_t t0 = rt_now_ns();
	struct rt_cache_key key;
	if (lib) {
		rt_cache_key(&key, ptx, lib, lib_size, arch, cap);
		if ((cubin = rt_cache_get(&key, size))) {
			if (verbose())
				rt_warn("a patched module linked with the helper library's sm_%u cubin, "
					"from gpux's cache in %.1f ms", arch, rt_ms_since(t0));
			return cubin;
		}
		struct rt_link_in in[] = { { CU_JIT_INPUT_PTX, ptx, strlen(ptx) + 1 },
					   { CU_JIT_INPUT_CUBIN, lib, lib_size } };
		cubin = rt_link(in, 2, 0, size, err, sizeof(err));
	}
	if (!cubin) {
		rt_link_failed(arch, err);
		return NULL;
	}
	if (verbose())
		rt_warn("linked a patched module with the helper library's sm_%u cubin (%u registers) "
			"in %.1f ms", arch, lib_regs, rt_ms_since(t0));
	rt_cache_put(&key, cubin, *size);
	return cubin;
}
