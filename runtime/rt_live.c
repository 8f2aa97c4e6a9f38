/* Live sessions (GPUX_SESS_LIVE, the REPL): every module loads untouched
 * and its image is kept; a launch runs the function's namesake in a
 * module instrumented with the current generation's probes, loaded on
 * the first launch that needs it in each context, pointed at the
 * program's module variables (share_vars). The program's handles
 * stay its own, so its queries and attributes see the original; graphs
 * are set to the namesakes before their launches (rt_live_graph.c).
 * When the controller makes a new generation, the runtime thread waits
 * for the contexts' work, takes the final snapshots, unloads the
 * instrumented modules and moves on (rt_ctx_move carries the maps). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt_hooks.h"

#include "ptx_vars.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_RECS 1024
#define MAX_SWAPS 16  /* instrumented modules of a record: one per context */
#define FN_SLOTS 4096 /* the function cache, a power of two */
#define MAX_JIT 16    /* JIT options kept for a record's copies */

/* A module or library the program loaded, with what it was loaded from. */
struct rec {
	const void *handle;
	bool lib;
	const void *image;
	void *copy;
	bool checked;     /* vars read */
	struct ptx_var_list vars; /* its variables: slots of its copies' tables */
	bool vars_bad;    /* a copy could not share them: never swapped */
	unsigned njit;    /* the program's JIT options that shape code */
	CUjit_option jo[MAX_JIT];
	void *jv[MAX_JIT];
	struct swap {
		CUcontext ctx;
		CUmodule mod; /* NULL: nothing probed in it (or refused) */
	} swaps[MAX_SWAPS];
	int nswaps;
};

/* The program's function (or kernel) in a context -> what to launch. */
struct fn_ent {
	const void *f;
	CUcontext ctx;
	unsigned gen;
	CUfunction to;
};

static struct rec *recs[MAX_RECS];
static int nrecs;
static struct fn_ent fns[FN_SLOTS];
static pthread_mutex_t fn_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned gen = 1; /* bumped at every move; 0 is never current */
static int moving;       /* launches wait while the runtime moves on */
static int on = -1;

bool rt_live(void)
{
	int v = __atomic_load_n(&on, __ATOMIC_ACQUIRE);
	if (v < 0) {
		struct gpux_sess_hdr *h = rt_sess();
		v = h && (h->flags & GPUX_SESS_LIVE);
		__atomic_store_n(&on, v, __ATOMIC_RELEASE);
		if (v) {
			__atomic_add_fetch(&rt_sess_root()->runtimes, 1, __ATOMIC_ACQ_REL);
			rt_drain_start(); /* it moves the process to new generations */
		}
	}
	return v;
}

/* Whether JIT option o shapes the code and has a value, not a pointer,
 * so that a copy of the module compiles as the original did (FTZ and
 * precise division change results; registers, occupancy). Logs and the
 * options that point at the caller's memory are left out. */
static bool shapes_code(CUjit_option o)
{
	/* 30-33 (position-independent code, CTAs per SM, threads per block,
	 * directives overridden) by value: an older cuda.h does not name them */
	if ((int)o >= 30 && (int)o <= 33)
		return true;
	switch (o) {
	case CU_JIT_MAX_REGISTERS:
	case CU_JIT_THREADS_PER_BLOCK:
	case CU_JIT_OPTIMIZATION_LEVEL:
	case CU_JIT_TARGET_FROM_CUCONTEXT:
	case CU_JIT_TARGET:
	case CU_JIT_FALLBACK_STRATEGY:
	case CU_JIT_GENERATE_DEBUG_INFO:
	case CU_JIT_GENERATE_LINE_INFO:
	case CU_JIT_CACHE_MODE:
	case CU_JIT_FTZ:
	case CU_JIT_PREC_DIV:
	case CU_JIT_PREC_SQRT:
	case CU_JIT_FMA:
		return true;
	default:
		return false;
	}
}

/* A record of handle loaded from image (kept), or NULL. */
static struct rec *new_rec(const void *handle, bool lib, const void *image, size_t size,
			   unsigned n, const CUjit_option *opt, void *const *val)
{
	struct rec *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	for (unsigned i = 0; opt && val && i < n && r->njit < MAX_JIT; i++)
		if (shapes_code(opt[i])) {
			r->jo[r->njit] = opt[i];
			r->jv[r->njit++] = val[i];
		}
	r->handle = handle;
	r->lib = lib;
	r->image = rt_image_keep(image, size, &r->copy);
	return r;
}

/* Adds r under rt_lock; false (r freed, said once) when it cannot be. */
static bool add_rec(struct rec *r)
{
	if (r && r->image && nrecs < MAX_RECS) {
		recs[nrecs++] = r;
		return true;
	}
	static int told;
	if (!told++)
		rt_warn("a module cannot be kept for live probes; its kernels run untouched");
	if (r)
		free(r->copy);
	free(r);
	return false;
}

void rt_live_loaded(const void *handle, bool lib, const void *image, size_t size, unsigned n,
		    const CUjit_option *opt, void *const *val)
{
	if (!handle || !image || !rt_live())
		return;
	struct rec *r = new_rec(handle, lib, image, size, n, opt, val);
	pthread_mutex_lock(&rt_lock);
	add_rec(r);
	pthread_mutex_unlock(&rt_lock);
}

static void unload_swaps(struct rec *r, CUcontext only, bool all)
{
	mod_unload_fn un = REAL(H_MOD_UNLOAD, "cuModuleUnload", mod_unload_fn);
	for (int i = 0; i < r->nswaps;) {
		if (!all && r->swaps[i].ctx != only) {
			i++;
			continue;
		}
		if (r->swaps[i].mod) {
			rt_module_unloaded(r->swaps[i].mod);
			if (un)
				un(r->swaps[i].mod);
		}
		r->swaps[i] = r->swaps[--r->nswaps];
	}
}

void rt_live_unloaded(const void *handle)
{
	if (!rt_live())
		return;
	pthread_mutex_lock(&rt_lock);
	for (int i = 0; i < nrecs; i++)
		if (recs[i]->handle == handle) {
			unload_swaps(recs[i], NULL, true);
			ptx_var_list_free(&recs[i]->vars);
			free(recs[i]->copy);
			free(recs[i]);
			recs[i] = recs[--nrecs];
			break;
		}
	pthread_mutex_unlock(&rt_lock);
	__atomic_add_fetch(&gen, 1, __ATOMIC_ACQ_REL); /* its handles may come back */
}

/* The module f is a function of, or (a library's kernel) its library. */
static void handle_of(const void *f, CUmodule *m, CUlibrary *l)
{
	typedef CUresult (*fn_mod_fn)(CUmodule *, CUfunction);
	typedef CUresult (*k_lib_fn)(CUlibrary *, CUkernel);
	static fn_mod_fn fn_mod;
	static k_lib_fn k_lib;
	if (!fn_mod) {
		fn_mod = (fn_mod_fn)rt_cuda_sym("cuFuncGetModule");
		k_lib = (k_lib_fn)rt_cuda_sym("cuKernelGetLibrary");
	}
	*m = NULL;
	*l = NULL;
	if (fn_mod && fn_mod(m, (CUfunction)f) != CUDA_SUCCESS)
		*m = NULL;
	if (!*m && k_lib && k_lib(l, (CUkernel)f) != CUDA_SUCCESS)
		*l = NULL;
}

/* The record f came from: a module's function, a library's kernel, or a
 * function a library loaded into this context. */
static struct rec *rec_of(const void *f)
{
	typedef CUresult (*lib_mod_fn)(CUmodule *, CUlibrary);
	static lib_mod_fn lib_mod;
	if (!lib_mod)
		lib_mod = (lib_mod_fn)rt_cuda_sym("cuLibraryGetModule");
	CUmodule m;
	CUlibrary l;
	handle_of(f, &m, &l);
	for (int i = 0; i < nrecs; i++) {
		struct rec *r = recs[i];
		if (r->handle == (m ? (const void *)m : (const void *)l))
			return r;
		CUmodule lm;
		if (m && r->lib && lib_mod && lib_mod(&lm, (CUlibrary)r->handle) == CUDA_SUCCESS &&
		    lm == m)
			return r;
	}
	return NULL;
}

/* gpux -p: f's module was loaded before the runtime came; its image is
 * looked for among the fatbins the program's objects register
 * (rt_attach_images.c). A module without one is said once. Under
 * rt_lock. */
static struct rec *adopt(const void *f, const char *kernel)
{
	enum { TOLD = 256 };
	static const void *told[TOLD];
	static int ntold;
	CUmodule m;
	CUlibrary l;
	handle_of(f, &m, &l);
	const void *handle = m ? (const void *)m : (const void *)l;
	if (!handle)
		return NULL;
	for (int i = 0; i < ntold; i++)
		if (told[i] == handle)
			return NULL;
	const void *image = rt_attach_image_of(kernel);
	struct rec *r = image ? new_rec(handle, !m, image, 0, 0, NULL, NULL) : NULL;
	if (r && add_rec(r)) {
		RT_TRACE("attach: %s's module loaded before the attach, from a registered fatbin",
			 kernel);
		return r;
	}
	if (ntold < TOLD)
		told[ntold++] = handle;
	if (!image) {
		char buf[256];
		rt_warn("a module loaded before gpux attached has no PTX gpux can find (SASS-only "
			"kernels, as PyTorch's and cuBLAS's, are patched only in programs gpux "
			"starts; a module loaded from memory leaves no image); its kernels run "
			"untouched, %s among them",
			rt_demangle(kernel, buf, sizeof(buf)));
	}
	return NULL;
}

/* Points copy's table at the variables of r's module in the current
 * context, so that its kernels use the program's. */
static bool share_vars(struct rec *r, CUmodule copy)
{
	CUdeviceptr tab;
	size_t n = r->vars.n, bytes;
	CUresult rc = rt_cu.ModuleGetGlobal(&tab, &bytes, copy, PTX_VARS_TABLE);
	if (rc == CUDA_ERROR_NOT_FOUND && !n)
		return true; /* nothing to share */
	if (rc != CUDA_SUCCESS || bytes != n * sizeof(uint64_t))
		return false;
	uint64_t *addr = malloc(bytes);
	bool ok = addr != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		CUdeviceptr d;
		size_t sz; /* asked for: cuLibraryGetGlobal does not say it may be NULL */
		ok = (r->lib ? rt_cu.LibraryGetGlobal(&d, &sz, (CUlibrary)r->handle, r->vars.name[i])
			     : rt_cu.ModuleGetGlobal(&d, &sz, (CUmodule)r->handle,
						     r->vars.name[i])) == CUDA_SUCCESS;
		addr[i] = d;
	}
	/* complete before the launch that needs it, whatever its stream */
	CUstream s = NULL;
	CUstreamCaptureMode mode = rt_relaxed_begin();
	ok = ok && rt_cu.StreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS;
	ok = ok && rt_cu.MemcpyHtoDAsync(tab, addr, bytes, s) == CUDA_SUCCESS;
	ok = ok && rt_cu.StreamSynchronize(s) == CUDA_SUCCESS;
	if (s)
		rt_cu.StreamDestroy(s);
	rt_relaxed_end(mode);
	free(addr);
	return ok;
}

/* The rewritten module of r in context c, loaded on first need. */
static CUmodule swap_of(struct rec *r, CUcontext c)
{
	for (int i = 0; i < r->nswaps; i++)
		if (r->swaps[i].ctx == c)
			return r->swaps[i].mod;
	if (r->nswaps == MAX_SWAPS)
		return NULL;
	CUmodule mod = NULL;
	if (!r->checked) {
		r->checked = true;
		r->vars_bad = rt_image_vars(r->image, 0, &r->vars) != 0;
	}
	const char *ptx = r->vars_bad ? NULL
				      : rt_image_patch(r->image, 0,
						       r->njit ? RT_AS_LIVE_JIT : RT_AS_LIVE);
	if (ptx && rt_load_patched(&mod, ptx, r->njit, r->jo, r->jv) == CUDA_SUCCESS) {
		if (share_vars(r, mod)) {
			rt_module_loaded(mod);
		} else {
			static int told;
			if (!told++)
				rt_warn("cannot point a module's live copy at its variables; its "
					"kernels run untouched");
			mod_unload_fn un = REAL(H_MOD_UNLOAD, "cuModuleUnload", mod_unload_fn);
			if (un)
				un(mod);
			mod = NULL;
		}
	} else {
		mod = NULL;
	}
	r->swaps[r->nswaps++] = (struct swap){ c, mod };
	return mod;
}

/* What the program set on f that a launch depends on, set on to. */
static void copy_attrs(const void *f, CUfunction to)
{
	typedef CUresult (*get_fn)(int *, CUfunction_attribute, CUfunction);
	typedef CUresult (*set_fn)(CUfunction, CUfunction_attribute, int);
	get_fn get = REAL(H_FN_GET_ATTR, "cuFuncGetAttribute", get_fn);
	set_fn set = REAL(H_FN_SET_ATTR, "cuFuncSetAttribute", set_fn);
	static const CUfunction_attribute a[] = {
		CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
		CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
	};
	for (size_t i = 0; get && set && i < sizeof(a) / sizeof(a[0]); i++) {
		int v;
		if (get(&v, a[i], (CUfunction)f) == CUDA_SUCCESS && v > 0)
			set(to, a[i], v);
	}
}

static CUfunction resolve(const void *f, CUcontext c)
{
	struct rt_kname kn = rt_launch_name((CUfunction)f);
	if (!kn.ptx || !*kn.ptx || !rt_sess()->nprobes)
		return (CUfunction)f;
	pthread_mutex_lock(&rt_lock);
	CUfunction to = (CUfunction)f;
	struct rec *r = rt_detached() ? NULL : rec_of(f);
	if (!r && !rt_detached() && rt_attached_late())
		r = adopt(f, kn.ptx);
	CUmodule m = r ? swap_of(r, c) : NULL;
	CUfunction g;
	if (m && rt_cu.ModuleGetFunction(&g, m, kn.ptx) == CUDA_SUCCESS) {
		copy_attrs(f, g);
		to = g;
	}
	pthread_mutex_unlock(&rt_lock);
	return to;
}

void rt_live_enter(void)
{
	if (!rt_live())
		return;
	struct gpux_sess_hdr *r = rt_sess_root();
	__atomic_add_fetch(&r->inflight, 1, __ATOMIC_ACQ_REL);
	while ((__atomic_load_n(&r->pause, __ATOMIC_ACQUIRE) ||
		__atomic_load_n(&moving, __ATOMIC_ACQUIRE)) && !rt_detached()) {
		__atomic_sub_fetch(&r->inflight, 1, __ATOMIC_ACQ_REL);
		struct timespec t = { 0, 200000 };
		nanosleep(&t, NULL);
		__atomic_add_fetch(&r->inflight, 1, __ATOMIC_ACQ_REL);
	}
}

void rt_live_leave(void)
{
	if (rt_live())
		__atomic_sub_fetch(&rt_sess_root()->inflight, 1, __ATOMIC_ACQ_REL);
}

CUfunction rt_live_fn(CUfunction f)
{
	if (!rt_live() || !f || rt_detached() || !rt_cu_ready())
		return f;
	CUcontext c = NULL;
	if (rt_cu.CtxGetCurrent(&c) != CUDA_SUCCESS || !c)
		return f;
	unsigned g = __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
	static __thread struct fn_ent last;
	if (last.f == f && last.ctx == c && last.gen == g)
		return last.to;
	size_t h = (((uintptr_t)f >> 4) ^ ((uintptr_t)c >> 6)) & (FN_SLOTS - 1);
	pthread_mutex_lock(&fn_lock);
	struct fn_ent e = fns[h];
	pthread_mutex_unlock(&fn_lock);
	if (e.f != f || e.ctx != c || e.gen != g) {
		e = (struct fn_ent){ f, c, g, resolve(f, c) };
		pthread_mutex_lock(&fn_lock);
		fns[h] = e;
		pthread_mutex_unlock(&fn_lock);
	}
	last = e;
	return e.to;
}

bool rt_live_capturing(CUstream s, bool pt)
{
	return rt_live() && rt_capturing(s, pt);
}

unsigned rt_live_gen(void)
{
	return __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
}

void rt_live_failed(CUfunction f, CUfunction to, CUresult rc)
{
	static int told;
	if (!told++)
		rt_warn("a launch of an instrumented kernel failed (%s); it ran untouched",
			rt_cu_err(rc));
	CUcontext c = NULL;
	rt_cu.CtxGetCurrent(&c);
	size_t h = (((uintptr_t)f >> 4) ^ ((uintptr_t)c >> 6)) & (FN_SLOTS - 1);
	pthread_mutex_lock(&fn_lock);
	if (fns[h].f == f && fns[h].to == to)
		fns[h].to = f;
	pthread_mutex_unlock(&fn_lock);
	__atomic_add_fetch(&gen, 1, __ATOMIC_ACQ_REL);
}

void rt_live_poll(void)
{
	if (!rt_live())
		return;
	struct gpux_sess_hdr *next = rt_sess_next();
	if (!next)
		return;
	/* no launch goes in with a function about to be unloaded: hold new
	 * ones, let those going in finish (other processes' too, briefly) */
	__atomic_store_n(&moving, 1, __ATOMIC_RELEASE);
	struct gpux_sess_hdr *root = rt_sess_root();
	for (int t = 0; t < 1000 && __atomic_load_n(&root->inflight, __ATOMIC_ACQUIRE); t++) {
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
	rt_live_graph_restore(); /* before rt_lock: see rt_live_graph.c */
	pthread_mutex_lock(&rt_lock);
	struct gpux_sess_hdr *old = rt_sess();
	rt_ctx_finish_all(); /* waits for every context's work */
	for (int i = 0; i < nrecs; i++)
		unload_swaps(recs[i], NULL, true);
	rt_image_forget();
	rt_sess_move(next, false);
	__atomic_add_fetch(&gen, 1, __ATOMIC_ACQ_REL);
	rt_ctx_move(old);
	__atomic_fetch_add(&old->moved, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&rt_lock);
	__atomic_store_n(&moving, 0, __ATOMIC_RELEASE);
	RT_TRACE("live: moved to the next generation (%u probes)", next->nprobes);
}
