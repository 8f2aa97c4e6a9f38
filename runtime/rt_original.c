/* Function-attribute and occupancy queries about an instrumented kernel
 * are answered by the kernel the program loaded: programs size their
 * launches from them (cooperative launches at the occupancy limit,
 * block sizes from cudaOccupancyMaxPotentialBlockSize), and the
 * instrumented code's registers, local memory and binary version are not
 * theirs to see. On the first such query for a function of a patched
 * module (or library) the original image is loaded beside it, its
 * function of the same name found, and every query of that function
 * goes there; attributes the program sets (dynamic shared memory, carve
 * out, cache preference) are set on both. When any step fails the query
 * goes to the instrumented function, as without gpux. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt_hooks.h"

#include <stdlib.h>
#include <string.h>

/* A patched module or library the program holds. */
struct orig_mod {
	const void *handle;    /* CUmodule or CUlibrary */
	bool library;
	CUcontext ctx;         /* a module's context */
	const void *image;     /* the program's image */
	void *orig;            /* its original, loaded on first need */
	bool failed;           /* loading it failed: not tried again */
	struct orig_mod *next;
};

#define MAX_SETS 8
/* A function queried or configured: its original, and what the program
 * set on it (replayed when the original is loaded). */
struct orig_fn {
	const void *f;          /* the program's CUfunction or CUkernel */
	struct orig_mod *mod;   /* NULL: not instrumented */
	CUfunction o;           /* NULL until loaded */
	int nsets;
	struct { int attr, val, dev; } sets[MAX_SETS]; /* attr -1: cache config */
	struct orig_fn *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct orig_mod *mods;
static struct orig_fn *fns;

static void *sym(const char *name)
{
	return rt_cuda_sym(name);
}

void rt_original_note(const void *handle, bool library, const char *patched)
{
	const void *image;
	if (!handle || !patched || !rt_image_original(patched, &image))
		return;
	struct orig_mod *m = calloc(1, sizeof(*m));
	if (!m)
		return;
	m->handle = handle;
	m->library = library;
	m->image = image;
	if (!library)
		rt_cu.CtxGetCurrent(&m->ctx);
	pthread_mutex_lock(&lock);
	m->next = mods;
	__atomic_store_n(&mods, m, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
}

static void unload(struct orig_mod *m, bool ctx_alive)
{
	if (!m->orig || !ctx_alive)
		return;
	if (m->library) {
		CUresult (*fn)(CUlibrary) = sym("cuLibraryUnload");
		if (fn)
			fn(m->orig);
	} else {
		CUresult (*fn)(CUmodule) = sym("cuModuleUnload");
		if (fn)
			fn(m->orig);
	}
}

/* Drops the modules that match (and their functions); under lock. */
static void drop(bool (*match)(const struct orig_mod *, const void *), const void *arg,
		 bool ctx_alive)
{
	for (struct orig_fn **p = &fns; *p;) {
		struct orig_fn *f = *p;
		if (f->mod && match(f->mod, arg)) {
			*p = f->next;
			free(f);
		} else {
			p = &f->next;
		}
	}
	/* functions not instrumented are forgotten too: handles come back */
	for (struct orig_fn **p = &fns; *p;) {
		struct orig_fn *f = *p;
		if (!f->mod) {
			*p = f->next;
			free(f);
		} else {
			p = &f->next;
		}
	}
	for (struct orig_mod **p = &mods; *p;) {
		struct orig_mod *m = *p;
		if (match(m, arg)) {
			__atomic_store_n(p, m->next, __ATOMIC_RELEASE);
			unload(m, ctx_alive);
			free(m);
		} else {
			p = &m->next;
		}
	}
}

static bool by_handle(const struct orig_mod *m, const void *h)
{
	return m->handle == h;
}

static bool by_ctx(const struct orig_mod *m, const void *ctx)
{
	return !m->library && (!ctx || m->ctx == ctx);
}

void rt_original_unloaded(const void *handle)
{
	pthread_mutex_lock(&lock);
	drop(by_handle, handle, true);
	pthread_mutex_unlock(&lock);
}

void rt_original_ctx_gone(CUcontext ctx)
{
	pthread_mutex_lock(&lock);
	drop(by_ctx, ctx, false);
	pthread_mutex_unlock(&lock);
}

static struct orig_mod *find_mod(const void *handle, bool library)
{
	for (struct orig_mod *m = mods; m; m = m->next)
		if (m->handle == handle && m->library == library)
			return m;
	return NULL;
}

/* The patched module or library f (a CUfunction or a CUkernel) is in. */
static struct orig_mod *mod_of(const void *f)
{
	CUresult (*get_mod)(CUmodule *, CUfunction) = sym("cuFuncGetModule");
	CUresult (*get_lib)(CUlibrary *, CUkernel) = sym("cuKernelGetLibrary");
	CUmodule mod;
	CUlibrary lib;
	struct orig_mod *m = NULL;
	if (get_mod && get_mod(&mod, (CUfunction)f) == CUDA_SUCCESS)
		m = find_mod(mod, false);
	if (!m && get_lib && get_lib(&lib, (CUkernel)f) == CUDA_SUCCESS)
		m = find_mod(lib, true);
	return m;
}

static const char *name_of(const void *f)
{
	CUresult (*fname)(const char **, CUfunction) = sym("cuFuncGetName");
	CUresult (*kname)(const char **, CUkernel) = sym("cuKernelGetName");
	const char *n = NULL;
	if (fname && fname(&n, (CUfunction)f) == CUDA_SUCCESS && n)
		return n;
	if (kname && kname(&n, (CUkernel)f) == CUDA_SUCCESS && n)
		return n;
	return NULL;
}

static void replay(struct orig_fn *e, int i);

/* Loads e's original function (under lock). The driver's own loaders,
 * not our hooks: the image must load as the program gave it. */
static void load(struct orig_fn *e)
{
	struct orig_mod *m = e->mod;
	const char *name = name_of(e->f);
	if (!name)
		return;
	if (!m->orig && !m->failed) {
		CUresult rc = CUDA_ERROR_NOT_FOUND;
		if (m->library) {
			lib_load_fn fn = REAL(H_LIB_LOAD, "cuLibraryLoadData", lib_load_fn);
			if (fn)
				rc = fn((CUlibrary *)&m->orig, m->image, NULL, NULL, 0, NULL, NULL, 0);
		} else {
			load_fn fn = REAL(H_LOAD, "cuModuleLoadData", load_fn);
			if (fn)
				rc = fn((CUmodule *)&m->orig, m->image);
		}
		m->failed = rc != CUDA_SUCCESS;
		if (m->failed) {
			m->orig = NULL;
			rt_warn("cannot load a module's original kernels (%s): occupancy and "
				"attribute queries see the instrumented ones", rt_cu_err(rc));
			return;
		}
	}
	if (!m->orig)
		return;
	if (m->library) {
		CUkernel k;
		if (rt_cu.LibraryGetKernel(&k, m->orig, name) == CUDA_SUCCESS)
			e->o = (CUfunction)k;
	} else if (rt_cu.ModuleGetFunction(&e->o, m->orig, name) != CUDA_SUCCESS) {
		e->o = NULL;
	}
	for (int i = 0; e->o && i < e->nsets; i++)
		replay(e, i);
}

static struct orig_fn *entry(const void *f)
{
	for (struct orig_fn *e = fns; e; e = e->next)
		if (e->f == f)
			return e;
	struct orig_fn *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->f = f;
	e->mod = mod_of(f);
	e->next = fns;
	fns = e;
	return e;
}

/* The original of f, or f. */
static CUfunction orig(CUfunction f)
{
	if (!f || !rt_sess() || !__atomic_load_n(&mods, __ATOMIC_ACQUIRE))
		return f; /* no patched module: nothing to look up */
	pthread_mutex_lock(&lock);
	struct orig_fn *e = entry(f);
	if (e && e->mod && !e->o)
		load(e);
	CUfunction o = e && e->o ? e->o : f;
	pthread_mutex_unlock(&lock);
	return o;
}

/* ---- what the program sets, on both ---- */

typedef CUresult (*fn_set_attr_fn)(CUfunction, CUfunction_attribute, int);
typedef CUresult (*fn_set_cache_fn)(CUfunction, CUfunc_cache);
typedef CUresult (*k_set_attr_fn)(CUfunction_attribute, int, CUkernel, CUdevice);
typedef CUresult (*k_set_cache_fn)(CUkernel, CUfunc_cache, CUdevice);

static void replay(struct orig_fn *e, int i)
{
	int attr = e->sets[i].attr, val = e->sets[i].val, dev = e->sets[i].dev;
	if (dev < 0 && attr >= 0) {
		fn_set_attr_fn fn = sym("cuFuncSetAttribute");
		if (fn)
			fn(e->o, (CUfunction_attribute)attr, val);
	} else if (dev < 0) {
		fn_set_cache_fn fn = sym("cuFuncSetCacheConfig");
		if (fn)
			fn(e->o, (CUfunc_cache)val);
	} else if (attr >= 0) {
		k_set_attr_fn fn = sym("cuKernelSetAttribute");
		if (fn)
			fn((CUfunction_attribute)attr, val, (CUkernel)e->o, dev);
	} else {
		k_set_cache_fn fn = sym("cuKernelSetCacheConfig");
		if (fn)
			fn((CUkernel)e->o, (CUfunc_cache)val, dev);
	}
}

/* After the program set attr (-1: the cache config) to val on f
 * successfully: remembered, and set on the original if it is loaded. */
static void set(const void *f, int attr, int val, int dev)
{
	if (!f || !rt_sess() || !__atomic_load_n(&mods, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&lock);
	struct orig_fn *e = entry(f);
	if (e && e->mod) {
		int i = 0;
		while (i < e->nsets && !(e->sets[i].attr == attr && e->sets[i].dev == dev))
			i++;
		if (i < MAX_SETS) {
			e->sets[i].attr = attr;
			e->sets[i].val = val;
			e->sets[i].dev = dev;
			if (i == e->nsets)
				e->nsets++;
			if (e->o)
				replay(e, i);
		}
	}
	pthread_mutex_unlock(&lock);
}

CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
	fn_set_attr_fn fn = REAL(H_FN_SET_ATTR, "cuFuncSetAttribute", fn_set_attr_fn);
	CUresult rc = fn ? fn(f, a, v) : NO_CUDA;
	if (rc == CUDA_SUCCESS)
		set(f, (int)a, v, -1);
	return rc;
}

CUresult cuFuncSetCacheConfig(CUfunction f, CUfunc_cache c)
{
	fn_set_cache_fn fn = REAL(H_FN_SET_CACHE, "cuFuncSetCacheConfig", fn_set_cache_fn);
	CUresult rc = fn ? fn(f, c) : NO_CUDA;
	if (rc == CUDA_SUCCESS)
		set(f, -1, (int)c, -1);
	return rc;
}

CUresult cuKernelSetAttribute(CUfunction_attribute a, int v, CUkernel k, CUdevice d)
{
	k_set_attr_fn fn = REAL(H_K_SET_ATTR, "cuKernelSetAttribute", k_set_attr_fn);
	CUresult rc = fn ? fn(a, v, k, d) : NO_CUDA;
	if (rc == CUDA_SUCCESS)
		set(k, (int)a, v, d);
	return rc;
}

CUresult cuKernelSetCacheConfig(CUkernel k, CUfunc_cache c, CUdevice d)
{
	k_set_cache_fn fn = REAL(H_K_SET_CACHE, "cuKernelSetCacheConfig", k_set_cache_fn);
	CUresult rc = fn ? fn(k, c, d) : NO_CUDA;
	if (rc == CUDA_SUCCESS)
		set(k, -1, (int)c, d);
	return rc;
}

/* ---- the queries, asked of the original ---- */

typedef CUresult (*fn_get_attr_fn)(int *, CUfunction_attribute, CUfunction);
typedef CUresult (*k_get_attr_fn)(int *, CUfunction_attribute, CUkernel, CUdevice);
typedef CUresult (*occ_blocks_fn)(int *, CUfunction, int, size_t);
typedef CUresult (*occ_blocks_fl_fn)(int *, CUfunction, int, size_t, unsigned);
typedef CUresult (*occ_size_fn)(int *, int *, CUfunction, CUoccupancyB2DSize, size_t, int);
typedef CUresult (*occ_size_fl_fn)(int *, int *, CUfunction, CUoccupancyB2DSize, size_t, int,
				   unsigned);
typedef CUresult (*occ_smem_fn)(size_t *, CUfunction, int, int);
typedef CUresult (*occ_cluster_fn)(int *, CUfunction, const CUlaunchConfig *);

CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
	fn_get_attr_fn fn = REAL(H_FN_GET_ATTR, "cuFuncGetAttribute", fn_get_attr_fn);
	return fn ? fn(v, a, orig(f)) : NO_CUDA;
}

CUresult cuKernelGetAttribute(int *v, CUfunction_attribute a, CUkernel k, CUdevice d)
{
	k_get_attr_fn fn = REAL(H_K_GET_ATTR, "cuKernelGetAttribute", k_get_attr_fn);
	CUfunction o = orig((CUfunction)k);
	return fn ? fn(v, a, (CUkernel)o, d) : NO_CUDA;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int bs, size_t smem)
{
	occ_blocks_fn fn = REAL(H_OCC_BLOCKS, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
				occ_blocks_fn);
	return fn ? fn(n, orig(f), bs, smem) : NO_CUDA;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, CUfunction f, int bs, size_t smem, unsigned fl)
{
	occ_blocks_fl_fn fn = REAL(H_OCC_BLOCKS_FL,
				   "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
				   occ_blocks_fl_fn);
	return fn ? fn(n, orig(f), bs, smem, fl) : NO_CUDA;
}

CUresult cuOccupancyMaxPotentialBlockSize(int *g, int *b, CUfunction f, CUoccupancyB2DSize cb, size_t smem,
			   int lim)
{
	occ_size_fn fn = REAL(H_OCC_SIZE, "cuOccupancyMaxPotentialBlockSize", occ_size_fn);
	return fn ? fn(g, b, orig(f), cb, smem, lim) : NO_CUDA;
}

CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *g, int *b, CUfunction f, CUoccupancyB2DSize cb,
			      size_t smem, int lim, unsigned fl)
{
	occ_size_fl_fn fn = REAL(H_OCC_SIZE_FL, "cuOccupancyMaxPotentialBlockSizeWithFlags",
				 occ_size_fl_fn);
	return fn ? fn(g, b, orig(f), cb, smem, lim, fl) : NO_CUDA;
}

CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *s, CUfunction f, int nb, int bs)
{
	occ_smem_fn fn = REAL(H_OCC_SMEM, "cuOccupancyAvailableDynamicSMemPerBlock", occ_smem_fn);
	return fn ? fn(s, orig(f), nb, bs) : NO_CUDA;
}

CUresult cuOccupancyMaxPotentialClusterSize(int *n, CUfunction f, const CUlaunchConfig *c)
{
	occ_cluster_fn fn = REAL(H_OCC_CLUSTER_SIZE, "cuOccupancyMaxPotentialClusterSize",
				 occ_cluster_fn);
	return fn ? fn(n, orig(f), c) : NO_CUDA;
}

CUresult cuOccupancyMaxActiveClusters(int *n, CUfunction f, const CUlaunchConfig *c)
{
	occ_cluster_fn fn = REAL(H_OCC_CLUSTERS, "cuOccupancyMaxActiveClusters", occ_cluster_fn);
	return fn ? fn(n, orig(f), c) : NO_CUDA;
}

/* exported too, for programs linked against libcuda */
#define E(FN, BASE, ID) { BASE, BASE, 0, false, ID, (void *)FN }
const struct rt_hook rt_original_hooks[] = {
	E(cuFuncGetAttribute, "cuFuncGetAttribute", H_FN_GET_ATTR),
	E(cuKernelGetAttribute, "cuKernelGetAttribute", H_K_GET_ATTR),
	E(cuFuncSetAttribute, "cuFuncSetAttribute", H_FN_SET_ATTR),
	E(cuFuncSetCacheConfig, "cuFuncSetCacheConfig", H_FN_SET_CACHE),
	E(cuKernelSetAttribute, "cuKernelSetAttribute", H_K_SET_ATTR),
	E(cuKernelSetCacheConfig, "cuKernelSetCacheConfig", H_K_SET_CACHE),
	E(cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor", H_OCC_BLOCKS),
	E(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
	  H_OCC_BLOCKS_FL),
	E(cuOccupancyMaxPotentialBlockSize, "cuOccupancyMaxPotentialBlockSize", H_OCC_SIZE),
	E(cuOccupancyMaxPotentialBlockSizeWithFlags, "cuOccupancyMaxPotentialBlockSizeWithFlags", H_OCC_SIZE_FL),
	E(cuOccupancyAvailableDynamicSMemPerBlock, "cuOccupancyAvailableDynamicSMemPerBlock", H_OCC_SMEM),
	E(cuOccupancyMaxPotentialClusterSize, "cuOccupancyMaxPotentialClusterSize", H_OCC_CLUSTER_SIZE),
	E(cuOccupancyMaxActiveClusters, "cuOccupancyMaxActiveClusters", H_OCC_CLUSTERS),
};
#undef E
const size_t rt_original_nhooks = sizeof(rt_original_hooks) / sizeof(rt_original_hooks[0]);
