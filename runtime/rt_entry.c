/* Context ends, launches, and the lookups that hand the hooks out:
 * dlsym and cuGetProcAddress. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt_hooks.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* ---------------- contexts ---------------- */

static void ending(CUcontext ctx, int dev)
{
	if (!rt_sess())
		return;
	pthread_mutex_lock(&rt_lock);
	rt_ctx_ending(ctx, dev);
	pthread_mutex_unlock(&rt_lock);
}

static void ended(int dev)
{
	if (!rt_sess())
		return;
	pthread_mutex_lock(&rt_lock);
	rt_ctx_ended(dev);
	pthread_mutex_unlock(&rt_lock);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	ending(ctx, -1);
	ctx_destroy_fn fn = REAL(H_CTX_DESTROY, "cuCtxDestroy_v2", ctx_destroy_fn);
	return fn ? fn(ctx) : NO_CUDA;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	ending(NULL, dev);
	dev_fn fn = REAL(H_PRIM_RELEASE, "cuDevicePrimaryCtxRelease_v2", dev_fn);
	CUresult rc = fn ? fn(dev) : NO_CUDA;
	ended(dev);
	return rc;
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	ending(NULL, dev);
	dev_fn fn = REAL(H_PRIM_RESET, "cuDevicePrimaryCtxReset_v2", dev_fn);
	CUresult rc = fn ? fn(dev) : NO_CUDA;
	ended(dev);
	return rc;
}

/* ---------------- launches ---------------- */

static inline void seen(void)
{
	RT_TRACE("launch");
	if (rt_sess())
		rt_launch_seen();
}

#define LAUNCH_ARGS CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, \
		    unsigned by, unsigned bz, unsigned shm, CUstream s
#define LAUNCH_PASS f, gx, gy, gz, bx, by, bz, shm, s

CUresult cuLaunchKernel(LAUNCH_ARGS, void **p, void **e)
{
	seen();
	launch_fn fn = REAL(H_LAUNCH, "cuLaunchKernel", launch_fn);
	return fn ? fn(LAUNCH_PASS, p, e) : NO_CUDA;
}

CUresult cuLaunchKernel_ptsz(LAUNCH_ARGS, void **p, void **e);
CUresult cuLaunchKernel_ptsz(LAUNCH_ARGS, void **p, void **e)
{
	seen();
	launch_fn fn = REAL(H_LAUNCH_PT, "cuLaunchKernel_ptsz", launch_fn);
	return fn ? fn(LAUNCH_PASS, p, e) : NO_CUDA;
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **p, void **e)
{
	seen();
	launch_ex_fn fn = REAL(H_LAUNCH_EX, "cuLaunchKernelEx", launch_ex_fn);
	return fn ? fn(c, f, p, e) : NO_CUDA;
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **p, void **e);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **p, void **e)
{
	seen();
	launch_ex_fn fn = REAL(H_LAUNCH_EX_PT, "cuLaunchKernelEx_ptsz", launch_ex_fn);
	return fn ? fn(c, f, p, e) : NO_CUDA;
}

CUresult cuLaunchCooperativeKernel(LAUNCH_ARGS, void **p)
{
	seen();
	coop_fn fn = REAL(H_COOP, "cuLaunchCooperativeKernel", coop_fn);
	return fn ? fn(LAUNCH_PASS, p) : NO_CUDA;
}

CUresult cuLaunchCooperativeKernel_ptsz(LAUNCH_ARGS, void **p);
CUresult cuLaunchCooperativeKernel_ptsz(LAUNCH_ARGS, void **p)
{
	seen();
	coop_fn fn = REAL(H_COOP_PT, "cuLaunchCooperativeKernel_ptsz", coop_fn);
	return fn ? fn(LAUNCH_PASS, p) : NO_CUDA;
}

/* Graph kernels are the patched functions themselves (the program got
 * them from patched modules); only a new context needs setting up. */
CUresult cuGraphLaunch(CUgraphExec g, CUstream s)
{
	seen();
	graph_fn fn = REAL(H_GRAPH, "cuGraphLaunch", graph_fn);
	return fn ? fn(g, s) : NO_CUDA;
}

CUresult cuGraphLaunch_ptsz(CUgraphExec g, CUstream s);
CUresult cuGraphLaunch_ptsz(CUgraphExec g, CUstream s)
{
	seen();
	graph_fn fn = REAL(H_GRAPH_PT, "cuGraphLaunch_ptsz", graph_fn);
	return fn ? fn(g, s) : NO_CUDA;
}

/* ---------------- lookups ---------------- */

CUresult gpux_cuGetProcAddress_v1(const char *sym, void **pfn, int ver, cuuint64_t flags)
	__asm__("cuGetProcAddress");
CUresult gpux_cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
				  CUdriverProcAddressQueryResult *st)
	__asm__("cuGetProcAddress_v2");

static const char *hooked_name(const char *sym, int ver, cuuint64_t flags, char *buf,
			       size_t len);

static void hook_result(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
	char name[96];
	const char *n = hooked_name(sym, ver, flags, name, sizeof(name));
	void *w = n ? rt_hook_for(n, *pfn) : NULL;
	RT_TRACE("cuGetProcAddress(%s, %d, %llu)%s%s", sym, ver, (unsigned long long)flags,
		 w ? " -> hook " : "", w ? n : "");
	if (w)
		*pfn = w;
}

CUresult gpux_cuGetProcAddress_v1(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
	gpa_fn fn = REAL(H_GPA, "cuGetProcAddress", gpa_fn);
	CUresult rc = fn ? fn(sym, pfn, ver, flags) : NO_CUDA;
	if (rc == CUDA_SUCCESS && pfn && *pfn && sym)
		hook_result(sym, pfn, ver, flags);
	return rc;
}

CUresult gpux_cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
				  CUdriverProcAddressQueryResult *st)
{
	gpa2_fn fn = REAL(H_GPA2, "cuGetProcAddress_v2", gpa2_fn);
	CUresult rc = fn ? fn(sym, pfn, ver, flags, st) : NO_CUDA;
	if (rc == CUDA_SUCCESS && pfn && *pfn && sym)
		hook_result(sym, pfn, ver, flags);
	return rc;
}

struct hook {
	const char *name;
	enum hook_id id;
	void *fn;
};

static const struct hook hooks[] = {
	{ "cuGetProcAddress", H_GPA, (void *)gpux_cuGetProcAddress_v1 },
	{ "cuGetProcAddress_v2", H_GPA2, (void *)gpux_cuGetProcAddress_v2 },
	{ "cuModuleLoadData", H_LOAD, (void *)cuModuleLoadData },
	{ "cuModuleLoad", H_LOAD_FILE, (void *)cuModuleLoad },
	{ "cuModuleLoadDataEx", H_LOAD_EX, (void *)cuModuleLoadDataEx },
	{ "cuModuleLoadFatBinary", H_LOAD_FAT, (void *)cuModuleLoadFatBinary },
	{ "cuLibraryLoadData", H_LIB_LOAD, (void *)cuLibraryLoadData },
	{ "cuLinkAddData", H_LINK_ADD, (void *)gpux_cuLinkAddData_v1 },
	{ "cuLinkAddData_v2", H_LINK_ADD2, (void *)cuLinkAddData_v2 },
	{ "cuModuleUnload", H_MOD_UNLOAD, (void *)cuModuleUnload },
	{ "cuLibraryUnload", H_LIB_UNLOAD, (void *)cuLibraryUnload },
	{ "cuCtxDestroy_v2", H_CTX_DESTROY, (void *)cuCtxDestroy_v2 },
	{ "cuDevicePrimaryCtxRelease_v2", H_PRIM_RELEASE, (void *)cuDevicePrimaryCtxRelease_v2 },
	{ "cuDevicePrimaryCtxReset_v2", H_PRIM_RESET, (void *)cuDevicePrimaryCtxReset_v2 },
	{ "cuLaunchKernel", H_LAUNCH, (void *)cuLaunchKernel },
	{ "cuLaunchKernel_ptsz", H_LAUNCH_PT, (void *)cuLaunchKernel_ptsz },
	{ "cuLaunchKernelEx", H_LAUNCH_EX, (void *)cuLaunchKernelEx },
	{ "cuLaunchKernelEx_ptsz", H_LAUNCH_EX_PT, (void *)cuLaunchKernelEx_ptsz },
	{ "cuLaunchCooperativeKernel", H_COOP, (void *)cuLaunchCooperativeKernel },
	{ "cuLaunchCooperativeKernel_ptsz", H_COOP_PT, (void *)cuLaunchCooperativeKernel_ptsz },
	{ "cuGraphLaunch", H_GRAPH, (void *)cuGraphLaunch },
	{ "cuGraphLaunch_ptsz", H_GRAPH_PT, (void *)cuGraphLaunch_ptsz },
};
#define NHOOKS (sizeof(hooks) / sizeof(hooks[0]))

static const struct hook *find_hook(const char *name)
{
	for (size_t i = 0; i < NHOOKS; i++)
		if (!strcmp(hooks[i].name, name))
			return &hooks[i];
	return NULL;
}

void *rt_hook_for(const char *name, void *real_fn)
{
	const struct hook *h = find_hook(name);
	if (!h)
		return NULL;
	/* never record a hook of ours as libcuda's function */
	for (size_t i = 0; real_fn && i < NHOOKS; i++)
		if (hooks[i].fn == real_fn)
			return h->fn;
	if (real_fn)
		__atomic_store_n(&rt_real_fn[h->id], real_fn, __ATOMIC_RELEASE);
	return h->fn;
}

/* The symbol cuGetProcAddress(sym, ver, flags) returns, as our table
 * names it: per-thread-stream variants and the _v2 of versioned calls
 * (same arguments as the originals, so either may stand behind them). */
static const char *hooked_name(const char *sym, int ver, cuuint64_t flags, char *buf,
			       size_t len)
{
	if (strncmp(sym, "cu", 2))
		return NULL;
	if (!strcmp(sym, "cuGetProcAddress"))
		return ver >= 12000 ? "cuGetProcAddress_v2" : "cuGetProcAddress";
	if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
		snprintf(buf, len, "%s_ptsz", sym);
		if (find_hook(buf))
			return buf;
	}
	snprintf(buf, len, "%s_v2", sym);
	if (find_hook(buf))
		return buf;
	return find_hook(sym) ? sym : NULL;
}

/* The C library's dlsym, shadowed: lookups of hooked driver entry
 * points get the hook (libcuda's function is remembered behind it). */
void *dlsym(void *handle, const char *name)
{
	void *p = rt_real_dlsym(handle, name);
	if (!p || name[0] != 'c' || name[1] != 'u')
		return p;
	void *w = rt_hook_for(name, p);
	RT_TRACE("dlsym(%s)%s", name, w ? " -> hook" : "");
	return w ? w : p;
}
