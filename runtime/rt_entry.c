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
	rt_kend_ctx_ending(ctx, dev); /* cuda:kernel_end's events go first */
	if (ctx)
		rt_live_graph_ctx_gone(ctx, dev);
	if (!rt_sess())
		return;
	pthread_mutex_lock(&rt_lock);
	rt_ctx_ending(ctx, dev);
	pthread_mutex_unlock(&rt_lock);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	ending(ctx, -1);
	ctx_destroy_fn fn = REAL(H_CTX_DESTROY, "cuCtxDestroy_v2", ctx_destroy_fn);
	CUresult rc = fn ? fn(ctx) : NO_CUDA;
	if (rc == CUDA_SUCCESS)
		rt_original_ctx_gone(ctx);
	rt_launch_names_forget(); /* its functions' handles may come back */
	return rc;
}

/* A release may destroy the primary context, and its pinned memory with
 * it: the lock is held across the call so the runtime thread cannot
 * touch that memory between the release and rt_ctx_ended. */
static CUresult primary_end(enum hook_id id, const char *sym, CUdevice dev)
{
	dev_fn fn = REAL(id, sym, dev_fn);
	CUresult rc;
	rt_kend_ctx_ending(NULL, dev);
	if (!rt_sess()) {
		rc = fn ? fn(dev) : NO_CUDA;
	} else {
		pthread_mutex_lock(&rt_lock);
		rt_ctx_ending(NULL, dev);
		rc = fn ? fn(dev) : NO_CUDA;
		rt_ctx_ended(dev);
		pthread_mutex_unlock(&rt_lock);
		/* the primary context may be gone: its originals went with it */
		if (rc == CUDA_SUCCESS && id == H_PRIM_RESET)
			rt_original_ctx_gone(NULL);
		unsigned fl;
		int active = 0;
		if (rc == CUDA_SUCCESS && rt_cu.DevicePrimaryCtxGetState &&
		    (rt_cu.DevicePrimaryCtxGetState(dev, &fl, &active) != CUDA_SUCCESS || !active))
			rt_live_graph_ctx_gone(NULL, dev);
	}
	rt_launch_names_forget(); /* the context may be gone, and its functions */
	return rc;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	return primary_end(H_PRIM_RELEASE, "cuDevicePrimaryCtxRelease_v2", dev);
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	return primary_end(H_PRIM_RESET, "cuDevicePrimaryCtxReset_v2", dev);
}

/* The Compute Sanitizer must subscribe before the driver starts. The
 * next cuInit in lookup order is called (libcuda's, or another
 * interposer's preloaded after this one). */
CUresult cuInit(unsigned flags)
{
	rt_sass_init();
	init_fn fn = (init_fn)rt_real_dlsym(RTLD_NEXT, "cuInit");
	if (!fn || fn == cuInit)
		fn = REAL(H_INIT, "cuInit", init_fn);
	CUresult rc = fn ? fn(flags) : NO_CUDA;
	if (rc == CUDA_SUCCESS)
		rt_saw_cuda();
	return rc;
}

/* ---------------- launches ---------------- */

static inline void seen(CUfunction f)
{
	RT_TRACE("launch");
	if (rt_sess()) {
		rt_saw_cuda();
		rt_launch_seen();
		rt_sass_launch(f);
	}
}

/* After a successful launch: a completion point for the snapshots. */
static inline CUresult done(CUresult rc, CUstream s, bool per_thread)
{
	if (rc == CUDA_SUCCESS && rt_sess())
		rt_launch_done(s, per_thread);
	return rc;
}

#define LAUNCH_ARGS CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, \
		    unsigned by, unsigned bz, unsigned shm, CUstream s
#define LAUNCH_PASS f, gx, gy, gz, bx, by, bz, shm, s

/* cuda:launch fires before the launch (it may fail still); then what
 * cuda: programs wrote into maps the kernel reads goes ahead of it on
 * its stream. */
#define LAUNCH_EV(pt, p, e)                                           \
	do {                                                          \
		if (rt_cev_on(GPUX_CEV_LAUNCH))                       \
			rt_launch_ev(LAUNCH_PASS, p, e);              \
		rt_host_push(s, pt);                                  \
	} while (0)

/* cuda:kernel_end: events on the launch's stream right around it
 * (after cuda:launch's copies), a ticket (or -1) between them. */
#define KEND_ON (rt_cev_on(GPUX_CEV_KERNEL_END) || rt_live_top())
#define KEND(pt) (KEND_ON ? rt_kend_before(LAUNCH_PASS, pt) : -1)
#define KEND_EX(c, pt)                                                               \
	(KEND_ON && (c)                                                               \
		 ? rt_kend_before(f, (c)->gridDimX, (c)->gridDimY, (c)->gridDimZ,     \
				  (c)->blockDimX, (c)->blockDimY, (c)->blockDimZ,     \
				  (c)->sharedMemBytes, (c)->hStream, pt)              \
		 : -1)

static inline CUresult kend(int ticket, CUresult rc)
{
	if (ticket >= 0)
		rt_kend_after(ticket, rc);
	return rc;
}

static inline void launch_ex_ev(const CUlaunchConfig *c, CUfunction f, bool pt, void **p,
				void **e)
{
	if (rt_cev_on(GPUX_CEV_LAUNCH) && c)
		rt_launch_ev(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,
			     c->blockDimY, c->blockDimZ, c->sharedMemBytes, c->hStream, p, e);
	rt_host_push(c ? c->hStream : NULL, pt);
}

/* Live sessions: after rt_live_enter (before the kernel_end events, so
 * that a held launch's time is not the hold's), rc = CALL(g) for the
 * current generation's namesake g of f; if that launch fails,
 * rc = CALL(f) (said once). A launch into a stream being captured stays
 * f (the graph's launches swap it) and is not run: not counted. A launch
 * that went in counts for :top with its threads. */
#define LIVE(rc, CALL, THREADS, S, PT)                                       \
	do {                                                                 \
		bool cap_ = rt_live_capturing(S, PT);                        \
		CUfunction g_ = cap_ ? f : rt_live_fn(f);                    \
		rc = CALL(g_);                                               \
		if (rc != CUDA_SUCCESS && g_ != f) {                         \
			rt_live_failed(f, g_, rc);                           \
			rc = CALL(f);                                        \
		}                                                            \
		rt_live_leave();                                             \
		if (rc == CUDA_SUCCESS && !cap_)                             \
			rt_live_count(f, THREADS);                           \
	} while (0)
#define THREADS ((uint64_t)gx * gy * gz * bx * by * bz)
#define THREADS_EX                                                                  \
	(c ? (uint64_t)c->gridDimX * c->gridDimY * c->gridDimZ * c->blockDimX *    \
		     c->blockDimY * c->blockDimZ                                    \
	   : 0)
#define CALL_LAUNCH(g) (fn ? fn(g, gx, gy, gz, bx, by, bz, shm, s, p, e) : NO_CUDA)
#define CALL_EX(g) (fn ? fn(c, g, p, e) : NO_CUDA)
#define CALL_COOP(g) (fn ? fn(g, gx, gy, gz, bx, by, bz, shm, s, p) : NO_CUDA)

CUresult cuLaunchKernel(LAUNCH_ARGS, void **p, void **e)
{
	seen(f);
	LAUNCH_EV(false, p, e);
	rt_live_enter();
	int k = KEND(false);
	launch_fn fn = REAL(H_LAUNCH, "cuLaunchKernel", launch_fn);
	CUresult rc;
	LIVE(rc, CALL_LAUNCH, THREADS, s, false);
	return done(kend(k, rc), s, false);
}

CUresult cuLaunchKernel_ptsz(LAUNCH_ARGS, void **p, void **e);
CUresult cuLaunchKernel_ptsz(LAUNCH_ARGS, void **p, void **e)
{
	seen(f);
	LAUNCH_EV(true, p, e);
	rt_live_enter();
	int k = KEND(true);
	launch_fn fn = REAL(H_LAUNCH_PT, "cuLaunchKernel_ptsz", launch_fn);
	CUresult rc;
	LIVE(rc, CALL_LAUNCH, THREADS, s, true);
	return done(kend(k, rc), s, true);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **p, void **e)
{
	seen(f);
	launch_ex_ev(c, f, false, p, e);
	rt_live_enter();
	int k = KEND_EX(c, false);
	launch_ex_fn fn = REAL(H_LAUNCH_EX, "cuLaunchKernelEx", launch_ex_fn);
	CUresult rc;
	LIVE(rc, CALL_EX, THREADS_EX, c ? c->hStream : NULL, false);
	return done(kend(k, rc), c ? c->hStream : NULL, false);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **p, void **e);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **p, void **e)
{
	seen(f);
	launch_ex_ev(c, f, true, p, e);
	rt_live_enter();
	int k = KEND_EX(c, true);
	launch_ex_fn fn = REAL(H_LAUNCH_EX_PT, "cuLaunchKernelEx_ptsz", launch_ex_fn);
	CUresult rc;
	LIVE(rc, CALL_EX, THREADS_EX, c ? c->hStream : NULL, true);
	return done(kend(k, rc), c ? c->hStream : NULL, true);
}

CUresult cuLaunchCooperativeKernel(LAUNCH_ARGS, void **p)
{
	seen(f);
	LAUNCH_EV(false, p, NULL);
	rt_live_enter();
	int k = KEND(false);
	coop_fn fn = REAL(H_COOP, "cuLaunchCooperativeKernel", coop_fn);
	CUresult rc;
	LIVE(rc, CALL_COOP, THREADS, s, false);
	return done(kend(k, rc), s, false);
}

CUresult cuLaunchCooperativeKernel_ptsz(LAUNCH_ARGS, void **p);
CUresult cuLaunchCooperativeKernel_ptsz(LAUNCH_ARGS, void **p)
{
	seen(f);
	LAUNCH_EV(true, p, NULL);
	rt_live_enter();
	int k = KEND(true);
	coop_fn fn = REAL(H_COOP_PT, "cuLaunchCooperativeKernel_ptsz", coop_fn);
	CUresult rc;
	LIVE(rc, CALL_COOP, THREADS, s, true);
	return done(kend(k, rc), s, true);
}

/* Graph kernels are the patched functions themselves (the program got
 * them from patched modules); in a live session they are set to the
 * current generation's before the launch (rt_live_graph.c). Otherwise
 * only a new context needs setting up, and the launch is a completion
 * point like any other. No cuda:launch: the graph's kernels are not
 * launches the program makes one by one. */
static CUresult graph_launch(enum hook_id id, const char *sym, CUgraphExec g, CUstream s,
			     bool pt)
{
	seen(NULL);
	rt_host_push(s, pt);
	graph_fn fn = REAL(id, sym, graph_fn);
	if (((rt_cev_ready() && rt_cev_on(GPUX_CEV_KERNEL_END)) || rt_live_top()) &&
	    !rt_attach_binding() && rt_cupti_on())
		rt_cupti_launch(s, pt); /* its kernels' records name this stream */
	rt_live_enter();
	rt_live_graph_prepare(g);
	CUresult rc = fn ? fn(g, s) : NO_CUDA;
	rt_live_leave();
	if (rc == CUDA_SUCCESS) {
		rt_live_graph_launched(g);
		if (rt_cev_on(GPUX_CEV_GRAPH_LAUNCH))
			rt_graph_ev_launched(g, s);
	}
	return done(rc, s, pt);
}

CUresult cuGraphLaunch(CUgraphExec g, CUstream s)
{
	return graph_launch(H_GRAPH, "cuGraphLaunch", g, s, false);
}

CUresult cuGraphLaunch_ptsz(CUgraphExec g, CUstream s);
CUresult cuGraphLaunch_ptsz(CUgraphExec g, CUstream s)
{
	return graph_launch(H_GRAPH_PT, "cuGraphLaunch_ptsz", g, s, true);
}

/* ---------------- lookups ---------------- */

CUresult gpux_cuGetProcAddress_v1(const char *sym, void **pfn, int ver, cuuint64_t flags)
	__asm__("cuGetProcAddress");
CUresult gpux_cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
				  CUdriverProcAddressQueryResult *st)
	__asm__("cuGetProcAddress_v2");

static const char *hooked_name(const char *sym, int ver, cuuint64_t flags);

static void hook_result(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
	const char *n = hooked_name(sym, ver, flags);
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

/* base and since as in rt_api.c; where an older variant takes the same
 * arguments, since is 0 (either may stand behind it). */
#define E(NAME, BASE, SINCE, PT, ID, FN) { NAME, BASE, SINCE, PT, ID, (void *)FN }
static const struct rt_hook hooks[] = {
	E("cuInit", "cuInit", 0, false, H_INIT, cuInit),
	E("cuGetProcAddress", "cuGetProcAddress", 0, false, H_GPA, gpux_cuGetProcAddress_v1),
	E("cuGetProcAddress_v2", "cuGetProcAddress", 12000, false, H_GPA2,
	  gpux_cuGetProcAddress_v2),
	E("cuModuleLoadData", "cuModuleLoadData", 0, false, H_LOAD, cuModuleLoadData),
	E("cuModuleLoad", "cuModuleLoad", 0, false, H_LOAD_FILE, cuModuleLoad),
	E("cuModuleLoadDataEx", "cuModuleLoadDataEx", 0, false, H_LOAD_EX, cuModuleLoadDataEx),
	E("cuModuleLoadFatBinary", "cuModuleLoadFatBinary", 0, false, H_LOAD_FAT,
	  cuModuleLoadFatBinary),
	E("cuLibraryLoadData", "cuLibraryLoadData", 0, false, H_LIB_LOAD, cuLibraryLoadData),
	E("cuLinkAddData", "cuLinkAddData", 0, false, H_LINK_ADD, gpux_cuLinkAddData_v1),
	E("cuLinkAddData_v2", "cuLinkAddData", 6050, false, H_LINK_ADD2, cuLinkAddData_v2),
	E("cuModuleUnload", "cuModuleUnload", 0, false, H_MOD_UNLOAD, cuModuleUnload),
	E("cuLibraryUnload", "cuLibraryUnload", 0, false, H_LIB_UNLOAD, cuLibraryUnload),
	E("cuCtxDestroy_v2", "cuCtxDestroy", 0, false, H_CTX_DESTROY, cuCtxDestroy_v2),
	E("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease", 0, false, H_PRIM_RELEASE,
	  cuDevicePrimaryCtxRelease_v2),
	E("cuDevicePrimaryCtxReset_v2", "cuDevicePrimaryCtxReset", 0, false, H_PRIM_RESET,
	  cuDevicePrimaryCtxReset_v2),
	E("cuLaunchKernel", "cuLaunchKernel", 0, false, H_LAUNCH, cuLaunchKernel),
	E("cuLaunchKernel_ptsz", "cuLaunchKernel", 0, true, H_LAUNCH_PT, cuLaunchKernel_ptsz),
	E("cuLaunchKernelEx", "cuLaunchKernelEx", 0, false, H_LAUNCH_EX, cuLaunchKernelEx),
	E("cuLaunchKernelEx_ptsz", "cuLaunchKernelEx", 0, true, H_LAUNCH_EX_PT,
	  cuLaunchKernelEx_ptsz),
	E("cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel", 0, false, H_COOP,
	  cuLaunchCooperativeKernel),
	E("cuLaunchCooperativeKernel_ptsz", "cuLaunchCooperativeKernel", 0, true, H_COOP_PT,
	  cuLaunchCooperativeKernel_ptsz),
	E("cuGraphLaunch", "cuGraphLaunch", 0, false, H_GRAPH, cuGraphLaunch),
	E("cuGraphLaunch_ptsz", "cuGraphLaunch", 0, true, H_GRAPH_PT, cuGraphLaunch_ptsz),
};
#undef E

static const size_t nhooks = sizeof(hooks) / sizeof(hooks[0]);

/* Every hook: ours above and rt_api.c's. */
static const struct {
	const struct rt_hook *v;
	const size_t *n;
} tables[] = { { hooks, &nhooks }, { rt_api_hooks, &rt_api_nhooks },
		{ rt_original_hooks, &rt_original_nhooks }, { rt_graph_hooks, &rt_graph_nhooks } };
#define NTABLES (sizeof(tables) / sizeof(tables[0]))

#define EACH_HOOK(h)                                                                   \
	for (size_t t_ = 0; t_ < NTABLES; t_++)                                        \
		for (const struct rt_hook *h = tables[t_].v; h < tables[t_].v + *tables[t_].n; h++)

static const struct rt_hook *find_hook(const char *name)
{
	EACH_HOOK(h)
		if (!strcmp(h->name, name))
			return h;
	return NULL;
}

void rt_hooks_each(void (*fn)(const struct rt_hook *h, void *arg), void *arg)
{
	EACH_HOOK(h)
		fn(h, arg);
}

void *rt_hook_gpa(const char *sym, void *real_fn, int ver, cuuint64_t flags)
{
	const char *n = hooked_name(sym, ver, flags);
	return n ? rt_hook_for(n, real_fn) : NULL;
}

void *rt_hook_for(const char *name, void *real_fn)
{
	const struct rt_hook *h = find_hook(name);
	if (!h)
		return NULL;
	/* never record a hook of ours as libcuda's function */
	if (real_fn)
		EACH_HOOK(x)
			if (x->fn == real_fn)
				return h->fn;
	if (real_fn)
		__atomic_store_n(&rt_real_fn[h->id], real_fn, __ATOMIC_RELEASE);
	return h->fn;
}

/* The symbol cuGetProcAddress(sym, ver, flags) returns, as our table
 * names it: of the variants of base sym whose arguments are those of
 * version ver, the newest, and of those the per-thread-stream one if the
 * flags ask for it. None (say, the 32-bit cuMemcpyHtoD of CUDA 2.0): not
 * hooked, the driver's function goes to the program untouched. A full
 * name (cuLaunchKernel_ptsz) is taken as it is. */
static const char *hooked_name(const char *sym, int ver, cuuint64_t flags)
{
	if (strncmp(sym, "cu", 2))
		return NULL;
	bool pt = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	const struct rt_hook *best = NULL;
	EACH_HOOK(h) {
		if (strcmp(h->base, sym) || h->since > ver || (h->pt && !pt))
			continue;
		if (!best || h->since > best->since || (h->since == best->since && h->pt))
			best = h;
	}
	if (best)
		return best->name;
	return find_hook(sym) ? sym : NULL;
}

/* Lookups in a handle: those of hooked driver entry points get the
 * hook (libcuda's function is remembered behind it). */
__attribute__((visibility("hidden"))) void *rt_dlsym_handle(void *handle, const char *name);
void *rt_dlsym_handle(void *handle, const char *name)
{
	void *p = rt_real_dlsym(handle, name);
	if (!p && handle == RTLD_DEFAULT && strstr(name, "nvJitLink")) {
		/* loaded RTLD_LOCAL by its caller: not in our global scope */
		static const char *const libs[] = { "libnvJitLink.so.13", "libnvJitLink.so.12" };
		for (size_t i = 0; !p && i < 2; i++) {
			void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
			p = h ? rt_real_dlsym(h, name) : NULL;
		}
	}
	if (p && (name[0] == 'n' || name[0] == '_') && strstr(name, "nvJitLink")) {
		void *w = rt_nvjitlink_hook(name, p);
		RT_TRACE("dlsym(%s)%s", name, w ? " -> hook" : "");
		if (w)
			return w;
	}
	if (!p || name[0] != 'c' || name[1] != 'u')
		return p;
	void *w = rt_hook_for(name, p);
	RT_TRACE("dlsym(%s)%s", name, w ? " -> hook" : "");
	return w ? w : p;
}

/* The real dlsym, for the stub below: resolved on its first call, which
 * may come from ASan's start-up, before its shadow memory exists. */
__attribute__((visibility("hidden"))) void *(*rt_dlsym_next)(void *, const char *);
__attribute__((visibility("hidden"), used, no_sanitize("address", "undefined")))
void *(*rt_dlsym_resolve(void))(void *, const char *);
void *(*rt_dlsym_resolve(void))(void *, const char *)
{
	static const char *const vers[] = { "GLIBC_2.34", "GLIBC_2.2.5" };
	void *(*f)(void *, const char *) = NULL;
	for (size_t i = 0; !f && i < 2; i++)
		f = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", vers[i]);
	__atomic_store_n(&rt_dlsym_next, f, __ATOMIC_RELEASE);
	return f;
}

/* Whether a RTLD_DEFAULT lookup is of a name we hook: cu* or
 * one with nvJitLink in it (cuda.core finds nvJitLink's functions with
 * RTLD_DEFAULT). Runs on every such lookup, ASan's start-up included:
 * no calls, no instrumentation. */
__attribute__((visibility("hidden"), used, no_sanitize("address", "undefined")))
int rt_dlsym_hooked_name(const char *name);
int rt_dlsym_hooked_name(const char *name)
{
	if (name[0] == 'c' && name[1] == 'u')
		return 1;
	static const char pat[] = "nvJitLink";
	for (const char *p = name; *p; p++) {
		size_t k = 0;
		while (pat[k] && p[k] == pat[k])
			k++;
		if (!pat[k])
			return 1;
	}
	return 0;
}

/* dlsym, shadowed. glibc resolves RTLD_NEXT (and RTLD_DEFAULT's local
 * scope) from dlsym's return address, so those lookups jump to the real
 * dlsym with the caller's return address untouched (RTLD_DEFAULT ones
 * only when the name is not one we hook); lookups in a handle, and
 * RTLD_DEFAULT ones of hooked names, go to rt_dlsym_handle. */
#if defined(__x86_64__)
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym, @function\n"
	"dlsym:\n"
	"	cmpq $-1, %rdi\n"          /* RTLD_NEXT: always the real one */
	"	je 1f\n"
	"	testq %rdi, %rdi\n"        /* RTLD_DEFAULT */
	"	jne rt_dlsym_handle\n"
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	subq $8, %rsp\n"
	"	movq %rsi, %rdi\n"
	"	call rt_dlsym_hooked_name\n"
	"	addq $8, %rsp\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	testl %eax, %eax\n"
	"	jne rt_dlsym_handle\n"
	"1:	movq rt_dlsym_next(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jne 2f\n"
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	subq $8, %rsp\n"
	"	call rt_dlsym_resolve\n"
	"	addq $8, %rsp\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	testq %rax, %rax\n"
	"	je 3f\n"
	"2:	jmp *%rax\n"
	"3:	ret\n"
	".size dlsym, .-dlsym\n");
#else
/* Elsewhere a plain C dlsym: RTLD_NEXT then resolves after this library,
 * not after its caller (an interposer preloaded after gpux's runtime
 * would find itself). */
void *dlsym(void *handle, const char *name)
{
	return rt_dlsym_handle(handle, name);
}
#endif
