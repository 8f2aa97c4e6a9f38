/* Kernels without PTX to rewrite (PyTorch's own, cuBLAS, cuDNN, NCCL,
 * cubins of unknown origin), probed through NVIDIA's Compute Sanitizer
 * patching API, which inserts calls into SASS.
 *
 *  - At the program's first cuInit, when the session has kernel entry,
 *    exit or access probes, libsanitizer-public.so is opened and
 *    subscribed to: it must be before the driver starts.
 *  - A module loaded untouched whose kernels a probe fires in is patched,
 *    once per context (a library with no context current, or used in
 *    another, at its first launch there): the context's patch module is
 *    made ready first (rt_sass_ctx.c); then the module's block enter,
 *    block exit and global access points call the callbacks.
 *  - Each kernel's first launch in a context gives it its record (struct
 *    gpux_sass_kernel): name id and which probes fire in it.
 * Nothing here may change what the program computes: any failure leaves
 * the module untouched and is said once. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt_sass_priv.h"
#include "rt_hooks.h"

#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel_list.h"

struct rt_san rt_san;

#define NAMED_KERNELS 3

static int state;         /* 0 off, 1 ready, -1 unavailable (rt_sass_why) */
char rt_sass_why[512];
static void *subscriber;
__thread bool rt_in_sass; /* the Sanitizer or gpux's own loads are running */
int rt_sass_active;       /* a module was loaded with the Sanitizer on:
			   * first launches are looked at */

struct ptx_probe rt_sass_probes[GPUX_SASS_MAX_PROBES];
int rt_sass_nprobes;
static bool kinds[PTX_SITE_COUNT]; /* the patch points the session's probes need */

const char *rt_san_err(int rc)
{
	const char *s = NULL;
	if (rt_san.GetResultString)
		rt_san.GetResultString(rc, &s);
	return s ? s : "Sanitizer error";
}

static void no_callback(void *ud, int domain, int cbid, const void *data)
{
	(void)ud, (void)domain, (void)cbid, (void)data;
}

static void *open_library(void)
{
	const char *env = getenv("GPUX_SANITIZER_LIB");
	if (env && *env)
		return dlopen(env, RTLD_NOW | RTLD_GLOBAL);
	static const char *const homes[] = { "CUDA_HOME", "CUDA_PATH" };
	for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]); i++) {
		const char *v = getenv(homes[i]);
		char path[1100];
		void *h;
		if (v && *v) {
			snprintf(path, sizeof(path), "%s/compute-sanitizer/libsanitizer-public.so", v);
			if ((h = dlopen(path, RTLD_NOW | RTLD_GLOBAL)))
				return h;
		}
	}
	void *h = dlopen("/usr/local/cuda/compute-sanitizer/libsanitizer-public.so",
			 RTLD_NOW | RTLD_GLOBAL);
	static const char *const wheels[] = { "nvidia/cu*/lib/libsanitizer-public.so",
					      "nvidia/cuda_sanitizer_api/*/libsanitizer-public.so" };
	return h ? h : rt_dlopen_wheel(wheels, sizeof(wheels) / sizeof(wheels[0]));
}

static bool load_probes(void)
{
	struct gpux_sess_hdr *h = rt_sess();
	const struct gpux_sess_probe *p = gpux_sess_probes(h);
	for (uint32_t i = 0; i < h->nprobes && i < GPUX_SASS_MAX_PROBES; i++) {
		rt_sass_probes[i] = (struct ptx_probe){ .kind = (enum ptx_site_kind)p[i].site,
						.glob = p[i].glob, .func = p[i].func,
						.only = p[i].only };
		if (p[i].site < PTX_SITE_COUNT)
			kinds[sass_ptx_point(&rt_sass_probes[i])] = true;
		rt_sass_nprobes = (int)i + 1;
	}
	return kinds[PTX_SITE_KERNEL_ENTRY] || kinds[PTX_SITE_KERNEL_EXIT] ||
	       kinds[PTX_SITE_ACCESS];
}

static void init_once(void)
{
	const char *env = getenv("GPUX_SASS");
	struct gpux_sess_hdr *h = rt_sess();
	if (!h || rt_live() || (env && !strcmp(env, "0")) || !load_probes())
		return;
	if (h->nprobes > GPUX_SASS_MAX_PROBES) {
		snprintf(rt_sass_why, sizeof(rt_sass_why), "more than %d probes", GPUX_SASS_MAX_PROBES);
		state = -1;
		return;
	}
	rt_in_sass = true;
	void *lib = open_library();
	rt_in_sass = false;
	if (!lib) {
		snprintf(rt_sass_why, sizeof(rt_sass_why),
			 "no Compute Sanitizer library (set GPUX_SANITIZER_LIB)");
		state = -1;
		return;
	}
	*(void **)&rt_san.Subscribe = rt_real_dlsym(lib, "sanitizerSubscribe");
	*(void **)&rt_san.AddPatches = rt_real_dlsym(lib, "sanitizerAddPatches");
	*(void **)&rt_san.PatchInstructions = rt_real_dlsym(lib, "sanitizerPatchInstructions");
	*(void **)&rt_san.PatchModule = rt_real_dlsym(lib, "sanitizerPatchModule");
	*(void **)&rt_san.SetCallbackData = rt_real_dlsym(lib, "sanitizerSetCallbackData");
	*(void **)&rt_san.GetResultString = rt_real_dlsym(lib, "sanitizerGetResultString");
	int rc = -1;
	rt_in_sass = true;
	if (rt_san.Subscribe && rt_san.AddPatches && rt_san.PatchInstructions && rt_san.PatchModule &&
	    rt_san.SetCallbackData)
		rc = rt_san.Subscribe(&subscriber, no_callback, NULL);
	rt_in_sass = false;
	if (rc != SAN_OK) {
		snprintf(rt_sass_why, sizeof(rt_sass_why), "the Compute Sanitizer library %s",
			 rc == -1 ? "lacks the patching API" : "refused a subscriber");
		state = -1;
		return;
	}
	state = 1;
}

void rt_sass_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	if (!rt_in_sass) /* the Sanitizer's own start may call cuInit */
		pthread_once(&once, init_once);
}

bool rt_sass_can(void)
{
	return state > 0 && !rt_live();
}

const char *rt_sass_why_not(void)
{
	return state < 0 ? rt_sass_why : NULL;
}

/* ---- launches seen: (function, context), open addressing ---- */

/* A CUkernel is one handle in every context, and each context needs its
 * own record: the key is the pair. Readers take no lock: a writer (under
 * rt_lock) stores the context, then the function. */
#define SEEN_CAP (1u << 16)
struct seen_ent {
	void *f, *ctx;
};
static struct seen_ent *seen;
static unsigned nseen;

static unsigned seen_slot(const void *f, const void *c)
{
	uint64_t v = ((uint64_t)(uintptr_t)f ^ ((uint64_t)(uintptr_t)c << 7)) *
		     0x9e3779b97f4a7c15ull;
	return (unsigned)(v >> 48) & (SEEN_CAP - 1);
}

static bool seen_has(const void *f, const void *c)
{
	struct seen_ent *t = __atomic_load_n(&seen, __ATOMIC_ACQUIRE);
	if (!t)
		return false;
	for (unsigned i = seen_slot(f, c), k = 0; k < SEEN_CAP; i = (i + 1) & (SEEN_CAP - 1), k++) {
		void *v = __atomic_load_n(&t[i].f, __ATOMIC_ACQUIRE);
		if (!v)
			return false;
		if (v == f && __atomic_load_n(&t[i].ctx, __ATOMIC_RELAXED) == c)
			return true;
	}
	return false;
}

/* Under rt_lock; when full, first launches keep taking the slow path. */
static void seen_add(void *f, void *c)
{
	if (!seen) {
		struct seen_ent *t = calloc(SEEN_CAP, sizeof(*t));
		if (!t)
			return;
		__atomic_store_n(&seen, t, __ATOMIC_RELEASE);
	}
	if (nseen >= SEEN_CAP / 4 * 3)
		return;
	unsigned i = seen_slot(f, c);
	while (seen[i].f && !(seen[i].f == f && seen[i].ctx == c))
		i = (i + 1) & (SEEN_CAP - 1);
	if (seen[i].f)
		return;
	__atomic_store_n(&seen[i].ctx, c, __ATOMIC_RELAXED);
	__atomic_store_n(&seen[i].f, f, __ATOMIC_RELEASE);
	nseen++;
}

/* Handles may come back once their module or context is gone. */
static void seen_clear(void)
{
	for (unsigned i = 0; seen && i < SEEN_CAP; i++)
		__atomic_store_n(&seen[i].f, NULL, __ATOMIC_RELEASE);
	nseen = 0;
}

/* ---- modules ---- */

/* Whether probe i fires in kernel name (its PTX name) through SASS. */
static bool fires_in(int i, const char *name)
{
	enum ptx_site_kind k = rt_sass_probes[i].kind;
	return (k == PTX_SITE_KERNEL_ENTRY || k == PTX_SITE_KERNEL_EXIT || k == PTX_SITE_ACCESS) &&
	       rt_glob_matches(rt_sass_probes[i].glob, name);
}

static bool kernel_probed(const char *name)
{
	for (int i = 0; i < rt_sass_nprobes; i++)
		if (fires_in(i, name))
			return true;
	return false;
}

/* One line per file (a library's thousands of modules are one line),
 * or per module of no file naming its probed kernels; with -v, a line
 * per kernel as it first runs (rt_sass_launch_slow: a library holds
 * thousands a job never launches). */
static void report(const void *image, const struct gpux_names *k)
{
	static struct gpux_names told;
	const char *file = rt_image_file(image);
	if (file && gpux_names_has(&told, file))
		return;
	if (file) {
		gpux_names_add(&told, file, strlen(file), 0);
		rt_warn("%s: kernels without PTX probed through SASS patching (Compute "
			"Sanitizer): kernel_entry, kernel_exit, access fire there; func_entry, "
			"func_exit do not", file);
		return;
	}
	char list[600] = "", dn[512];
	size_t len = 0;
	for (size_t i = 0; i < k->n && i < NAMED_KERNELS && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
					rt_demangle(k->name[i], dn, sizeof(dn)));
	/* names last: a line too long for the session's message is cut there */
	const char *what = image ? "a cubin without PTX" : "no PTX";
	if (k->n == 1)
		rt_warn("kernel %s probed through SASS patching (%s)", list, what);
	else
		rt_warn("%zu kernels probed through SASS patching (%s): %s%s", k->n, what, list,
			k->n > NAMED_KERNELS ? ", ..." : "");
}

/* The probed kernels of m (names into k); false when none. */
static bool probed_kernels(CUmodule m, struct gpux_names *k)
{
	unsigned n = 0;
	if (!rt_cu.ModuleGetFunctionCount || !rt_cu.ModuleEnumerateFunctions ||
	    !rt_cu.FuncGetName || rt_cu.ModuleGetFunctionCount(&n, m) != CUDA_SUCCESS || !n)
		return false;
	CUfunction *fns = calloc(n, sizeof(*fns));
	if (!fns || rt_cu.ModuleEnumerateFunctions(fns, n, m) != CUDA_SUCCESS) {
		free(fns);
		return false;
	}
	for (unsigned i = 0; i < n; i++) {
		const char *name = NULL;
		if ((rt_cu.FuncGetName(&name, fns[i]) == CUDA_SUCCESS ||
		     (rt_cu.KernelGetName &&
		      rt_cu.KernelGetName(&name, (CUkernel)fns[i]) == CUDA_SUCCESS)) &&
		    name && kernel_probed(name))
			gpux_names_add(k, name, strlen(name), GPUX_SYM_ENTRY);
	}
	free(fns);
	return k->n > 0;
}

static void say_failed(void)
{
	static bool told;
	if (!told)
		rt_warn("SASS patching failed (%s); kernels without PTX run untouched", rt_sass_why);
	told = true;
}

/* Modules seen, patched or not, each in its context (a module handle
 * is per context and may come back once its context is gone), and the
 * libraries loaded untouched, whose module in each context is taken at
 * its first launch there. Under rt_lock. */
struct mod_rec {
	CUmodule m;
	CUcontext ctx;
	bool patched;
};
static struct mod_rec *mods;
static size_t nmods, capmods;
struct lib_rec {
	CUlibrary lib;
	const void *image;
};
static struct lib_rec *libs;
static size_t nlibs, caplibs;

static struct mod_rec *mod_find(CUmodule m, CUcontext c)
{
	for (size_t i = 0; i < nmods; i++)
		if (mods[i].m == m && mods[i].ctx == c)
			return &mods[i];
	return NULL;
}

static void mod_add(CUmodule m, CUcontext c, bool patched)
{
	if (nmods == capmods) {
		size_t cap = capmods ? 2 * capmods : 64;
		struct mod_rec *v = realloc(mods, cap * sizeof(*v));
		if (!v)
			return; /* looked at again at a later first launch */
		mods = v;
		capmods = cap;
	}
	mods[nmods++] = (struct mod_rec){ m, c, patched };
}

static const void *lib_image(CUlibrary lib)
{
	for (size_t i = 0; i < nlibs; i++)
		if (libs[i].lib == lib)
			return libs[i].image;
	return NULL;
}

static void lib_add(CUlibrary lib, const void *image)
{
	if (nlibs == caplibs) {
		size_t cap = caplibs ? 2 * caplibs : 64;
		struct lib_rec *v = realloc(libs, cap * sizeof(*v));
		if (!v)
			return;
		libs = v;
		caplibs = cap;
	}
	libs[nlibs++] = (struct lib_rec){ lib, image };
}

/* Module m of the current context c, once: patched when a probe fires
 * in its kernels and it is not gpux's own. rt_lock held, rt_in_sass
 * set. */
static void consider(CUmodule m, CUcontext c, const void *image)
{
	CUdeviceptr d;
	size_t sz;
	struct gpux_names k = { 0 };
	struct rt_ctx *x;
	bool patched = false;
	if (mod_find(m, c))
		return;
	if (rt_cu.ModuleGetGlobal(&d, &sz, m, GPUX_SYM_CTL) == CUDA_SUCCESS ||
	    !probed_kernels(m, &k) || !(x = rt_ctx_current()))
		goto out; /* ours, or nothing to probe */
	RT_TRACE("sass: module %p: %zu probed kernels", (void *)m, k.n);
	if (!rt_sass_ctx_ready(x)) {
		say_failed();
		goto out;
	}
	static const struct {
		enum ptx_site_kind kind;
		int insn;
		const char *cb;
	} points[] = {
		{ PTX_SITE_KERNEL_ENTRY, SAN_BLOCK_ENTER, GPUX_SASS_CB_ENTER },
		{ PTX_SITE_KERNEL_EXIT, SAN_BLOCK_EXIT, GPUX_SASS_CB_EXIT },
		{ PTX_SITE_ACCESS, SAN_GLOBAL_ACCESS, GPUX_SASS_CB_ACCESS },
	};
	int rc = SAN_OK;
	for (size_t i = 0; rc == SAN_OK && i < sizeof(points) / sizeof(points[0]); i++)
		if (kinds[points[i].kind])
			rc = rt_san.PatchInstructions(points[i].insn, m, points[i].cb);
	if (rc == SAN_OK)
		rc = rt_san.PatchModule(m);
	if (rc != SAN_OK) {
		snprintf(rt_sass_why, sizeof(rt_sass_why),
			 "the Sanitizer could not patch a module (%s)", rt_san_err(rc));
		rt_warn("SASS patching failed (%s); its kernels run untouched", rt_sass_why);
		goto out;
	}
	RT_TRACE("sass: module %p patched (%zu probed kernels)", (void *)m, k.n);
	patched = true;
	__atomic_store_n(&rt_sass_active, 1, __ATOMIC_RELEASE);
	report(image, &k);
out:
	mod_add(m, c, patched);
	gpux_names_free(&k);
}

void rt_sass_loaded(void *handle, bool lib, const void *image)
{
	if (!rt_sass_can() || rt_in_sass || !rt_cu_ready())
		return;
	CUmodule m = handle;
	CUcontext c = NULL;
	pthread_mutex_lock(&rt_lock);
	rt_in_sass = true;
	CUstreamCaptureMode mode = rt_relaxed_begin();
	if (lib)
		lib_add(handle, image);
	/* a library with no context current: its first launch takes it */
	if (rt_cu.CtxGetCurrent(&c) == CUDA_SUCCESS && c &&
	    (!lib || (rt_cu.LibraryGetModule &&
		      rt_cu.LibraryGetModule(&m, (CUlibrary)handle) == CUDA_SUCCESS)))
		consider(m, c, image);
	__atomic_store_n(&rt_sass_active, 1, __ATOMIC_RELEASE);
	rt_relaxed_end(mode);
	rt_in_sass = false;
	pthread_mutex_unlock(&rt_lock);
}

/* Forgets what it knew of module m in every context (lib: of library
 * m's modules) and of functions, whose handles may come back. */
void rt_sass_unloaded(void *handle, bool lib)
{
	if (!__atomic_load_n(&rt_sass_active, __ATOMIC_ACQUIRE))
		return;
	CUmodule m = handle;
	pthread_mutex_lock(&rt_lock);
	if (lib) {
		for (size_t i = 0; i < nlibs; i++)
			if (libs[i].lib == handle)
				libs[i] = libs[--nlibs];
		if (!rt_cu.LibraryGetModule ||
		    rt_cu.LibraryGetModule(&m, (CUlibrary)handle) != CUDA_SUCCESS)
			m = NULL;
	}
	for (size_t i = 0; m && i < nmods;)
		if (mods[i].m == m)
			mods[i] = mods[--nmods];
		else
			i++;
	seen_clear();
	pthread_mutex_unlock(&rt_lock);
}

void rt_sass_ctx_gone(CUcontext c)
{
	for (size_t i = 0; i < nmods;)
		if (mods[i].ctx == c)
			mods[i] = mods[--nmods];
		else
			i++;
	seen_clear();
}

/* ---- launches ---- */

void rt_sass_launch_slow(CUfunction f)
{
	CUcontext c = NULL;
	if (!f || rt_in_sass || rt_cu.CtxGetCurrent(&c) != CUDA_SUCCESS || !c ||
	    seen_has(f, c))
		return;
	pthread_mutex_lock(&rt_lock);
	rt_in_sass = true;
	CUstreamCaptureMode mode = rt_relaxed_begin();
	CUmodule m = NULL;
	CUfunction g = NULL;
	struct rt_ctx *x = NULL;
	const char *name = NULL; /* the driver's, as the PTX has it */
	/* a CUkernel launched as a function (cudart does): the Sanitizer
	 * takes its function in this context */
	bool kernel = false;
	if (rt_cu.FuncGetName && rt_cu.FuncGetName(&name, f) == CUDA_SUCCESS)
		g = f;
	else if (rt_cu.KernelGetName && rt_cu.KernelGetName(&name, (CUkernel)f) == CUDA_SUCCESS &&
		 !(kernel = rt_cu.KernelGetFunction(&g, (CUkernel)f) == CUDA_SUCCESS))
		g = NULL;
	if (g && rt_cu.FuncGetModule && rt_cu.FuncGetModule(&m, g) != CUDA_SUCCESS)
		m = NULL;
	/* a library's kernel: its module in this context, taken now if the
	 * library was loaded with none current, or in another */
	CUlibrary lib = NULL;
	if (kernel && rt_cu.KernelGetLibrary &&
	    rt_cu.KernelGetLibrary(&lib, (CUkernel)f) == CUDA_SUCCESS && !m &&
	    rt_cu.LibraryGetModule && rt_cu.LibraryGetModule(&m, lib) != CUDA_SUCCESS)
		m = NULL;
	if (m)
		consider(m, c, lib ? lib_image(lib) : NULL);
	struct mod_rec *r = m ? mod_find(m, c) : NULL;
	RT_TRACE("sass: launch of %p: function %p, module %p%s", (void *)f, (void *)g, (void *)m,
		 r && r->patched ? " (patched)" : "");
	if (r && r->patched && (x = rt_ctx_current()) && x->sass > 0) {
		struct gpux_sass_kernel rec = { 0 };
		for (int i = 0; name && i < rt_sass_nprobes; i++)
			if (fires_in(i, name))
				rec.mask[i / 64] |= 1ull << (i % 64);
		for (int w = 0; w < GPUX_SASS_MAX_PROBES / 64; w++)
			rec.on |= rec.mask[w] != 0;
		rec.kernel_id = rec.on ? rt_name_id(name) : UINT32_MAX;
		if (rec.on && (rt_sess()->flags & GPUX_SESS_VERBOSE)) {
			char dn[512];
			rt_warn("kernel %s: probed through SASS patching",
				rt_demangle(name, dn, sizeof(dn)));
		}
		CUdeviceptr d = rt_sass_new_record(x);
		if (d && rt_cu.MemcpyHtoDAsync(d, &rec, sizeof(rec), x->stream) == CUDA_SUCCESS &&
		    rt_cu.StreamSynchronize(x->stream) == CUDA_SUCCESS) {
			int rc = rt_san.SetCallbackData(g, (const void *)(uintptr_t)d);
			RT_TRACE("sass: %s: record %#llx, probes %#llx: %d", name,
				 (unsigned long long)d, (unsigned long long)rec.mask[0], rc);
		}
	}
	seen_add(f, c);
	rt_relaxed_end(mode);
	rt_in_sass = false;
	pthread_mutex_unlock(&rt_lock);
}

