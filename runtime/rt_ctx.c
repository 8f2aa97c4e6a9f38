/* Per CUDA context: the session slot, device map storage laid out like
 * the slot's map areas (one copy makes a snapshot), the printf rings
 * (rt_ring.c), the clock offset, and the patched modules whose
 * descriptors point at all that. Called with rt_lock held. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpux_dev.h"

#include "rt_ctx_priv.h"

struct rt_ctx ctxs[MAX_CTX];
int nctx;
/* Any module patched in this process: launches need looking at. */
static int any_patched;
static int detached;
static bool atexit_done;


static void shutdown_hook(void)
{
	rt_kend_final(false); /* into the maps before their final snapshot */
	rt_drain_stop();
	pthread_mutex_lock(&rt_lock);
	rt_ctx_shutdown();
	pthread_mutex_unlock(&rt_lock);
}

static bool ok(CUresult rc, const char *what)
{
	if (rc == CUDA_SUCCESS)
		return true;
	rt_warn("%s failed: %s", what, rt_cu_err(rc));
	return false;
}

struct rt_ctx *rt_ctx_of(CUcontext c)
{
	for (int i = 0; i < nctx; i++)
		if (ctxs[i].ctx == c && !ctxs[i].dead && !ctxs[i].failed)
			return &ctxs[i];
	return NULL;
}

static struct rt_ctx *find(CUcontext c)
{
	for (int i = 0; i < nctx; i++)
		if (ctxs[i].ctx == c && (!ctxs[i].dead || ctxs[i].failed))
			return &ctxs[i];
	return NULL;
}

/* Device storage for the session's maps, zeroed on x's stream. */
static bool alloc_maps(struct rt_ctx *x)
{
	struct gpux_sess_hdr *h = rt_sess();
	struct gpux_sess_map *maps = gpux_sess_maps(h);
	x->store = 0;
	x->base = x->size = 0;
	if (!h->nmaps)
		return true;
	x->base = maps[0].area_off;
	x->size = maps[h->nmaps - 1].area_off + maps[h->nmaps - 1].area_size - x->base;
	return ok(rt_cu.MemAlloc(&x->store, x->size), "allocating device maps") &&
	       ok(rt_cu.MemsetD8Async(x->store, 0, x->size, x->stream), "clearing device maps");
}

static bool alloc_ctx(struct rt_ctx *x)
{
	if (!ok(rt_cu.StreamCreate(&x->stream, CU_STREAM_NON_BLOCKING), "creating a stream"))
		return false;
	if (!alloc_maps(x))
		return false;
	if (!ok(rt_cu.MemHostAlloc((void **)&x->host, HOSTCTL,
				   CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
		"allocating the control page"))
		return false;
	memset(x->host, 0, HOSTCTL);
	if (!ok(rt_cu.MemHostGetDevicePointer(&x->host_dev, x->host, 0), "mapping the control page"))
		return false;
	if (rt_cu.EventCreate && rt_cu.EventRecord && rt_cu.EventQuery && rt_cu.StreamIsCapturing &&
	    rt_cu.EventCreate(&x->done_ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
		x->done_ev = NULL; /* periodic snapshots only */
	return ok(rt_ring_alloc(x), "setting up the printf rings") &&
	       ok(rt_cu.StreamSynchronize(x->stream), "setting up maps");
}

struct rt_ctx *rt_ctx_current(void)
{
	CUcontext c = NULL;
	if (rt_cu.CtxGetCurrent(&c) != CUDA_SUCCESS || !c)
		return NULL;
	struct rt_ctx *x = find(c);
	if (x) /* a context whose setup failed stays untouched */
		return x->failed ? NULL : x;
	struct gpux_sess_hdr *h = rt_sess();
	if (nctx == MAX_CTX)
		return NULL;
	uint32_t idx = __atomic_fetch_add(&h->slots_used, 1, __ATOMIC_ACQ_REL);
	if (idx >= h->nslots) {
		rt_warn("no session slot left for another CUDA context (%u in use); "
			"its kernels run untouched", h->nslots);
		return NULL;
	}
	x = &ctxs[nctx];
	memset(x, 0, sizeof(*x));
	x->ctx = c;
	CUdevice dev = 0;
	rt_cu.CtxGetDevice(&dev);
	x->device = dev;
	x->primary = rt_is_primary(c, dev);
	if (!alloc_ctx(x)) {
		/* the slot stays FREE (the controller ignores it); what was
		 * allocated goes with the context */
		x->dead = x->failed = true;
		nctx++;
		return NULL;
	}
	x->slot = gpux_sess_slot_at(h, idx);
	x->slot->pid = (uint32_t)getpid();
	x->slot->device = (uint32_t)dev;
	if (h->flags & GPUX_SESS_VERBOSE) { /* which GPU `gpu` names, per process */
		char desc[200];
		rt_device_desc(dev, desc, sizeof(desc));
		rt_warn("pid %d: a CUDA context on gpu %d (%s)", (int)getpid(), (int)dev, desc);
	}
	__atomic_store_n(&x->slot->state, GPUX_SLOT_LIVE, __ATOMIC_RELEASE);
	__atomic_add_fetch(&nctx, 1, __ATOMIC_RELEASE);
	if (!atexit_done) {
		/* registered after cudart's own handler, so it runs first,
		 * while the driver still works */
		atexit(shutdown_hook);
		atexit_done = true;
		rt_crash_arm();
		rt_drain_start();
	}
	return x;
}

/* Maps of the generation old that the current one carries: their final
 * snapshot (old's slot was) into x's new storage. */
static void carry(struct rt_ctx *x, struct gpux_sess_hdr *old, struct gpux_sess_slot *was)
{
	struct gpux_sess_hdr *h = rt_sess();
	struct gpux_sess_map *maps = gpux_sess_maps(h), *om = gpux_sess_maps(old);
	for (uint32_t i = 0; i < h->nmaps; i++) {
		uint32_t c = maps[i].carry;
		if (!c || c > old->nmaps || om[c - 1].area_size != maps[i].area_size)
			continue;
		struct gpux_sess_map_area *a = gpux_sess_area(old, was, c - 1);
		size_t n = maps[i].area_size - sizeof(*a);
		ok(rt_cu.MemcpyHtoDAsync(x->store + (maps[i].area_off - x->base) + sizeof(*a), a + 1,
					 n, x->stream),
		   "carrying a map");
	}
}

/* fn(x, arg) for each context not dead, made current (the caller's is
 * put back after). */
static void each_ctx(void (*fn)(struct rt_ctx *x, void *arg), void *arg)
{
	if (!nctx)
		return; /* a generation may come before the program's first CUDA call */
	CUcontext prev = NULL;
	rt_cu.CtxGetCurrent(&prev);
	for (int i = 0; i < nctx; i++)
		if (!ctxs[i].dead && rt_cu.CtxSetCurrent(ctxs[i].ctx) == CUDA_SUCCESS)
			fn(&ctxs[i], arg);
	rt_cu.CtxSetCurrent(prev);
}

/* x gets a slot of the current generation, its maps carried from old's. */
static void move_ctx(struct rt_ctx *x, void *old)
{
	struct gpux_sess_hdr *h = rt_sess();
	struct gpux_sess_slot *was = x->slot;
	if (x->store)
		rt_cu.MemFree(x->store);
	x->nmods = x->nlibs = 0;
	memset(x->gone_drops, 0, sizeof(x->gone_drops));
	uint32_t idx = __atomic_fetch_add(&h->slots_used, 1, __ATOMIC_ACQ_REL);
	if (idx >= h->nslots || !alloc_maps(x) ||
	    (!x->rings && !ok(rt_ring_alloc(x), "setting up the printf rings"))) {
		x->dead = true; /* its kernels run untouched from now on */
		return;
	}
	carry(x, old, was);
	x->slot = gpux_sess_slot_at(h, idx);
	x->slot->pid = (uint32_t)getpid();
	x->slot->device = (uint32_t)x->device;
	if (!ok(rt_cu.StreamSynchronize(x->stream), "carrying maps")) {
		x->dead = true;
		return;
	}
	__atomic_store_n(&x->slot->state, GPUX_SLOT_LIVE, __ATOMIC_RELEASE);
}

void rt_ctx_move(struct gpux_sess_hdr *old)
{
	each_ctx(move_ctx, old);
	rt_ctx_poll(true, false); /* the carried maps, published */
}

/* The module's sites call nothing from its next launch on. */
static void set_off(struct rt_ctx *x, void *handle, global_fn get)
{
	static const uint32_t one = 1;
	CUdeviceptr d;
	size_t sz;
	if (get(&d, &sz, handle, GPUX_SYM_OFF) == CUDA_SUCCESS && sz == sizeof(one))
		rt_cu.MemcpyHtoDAsync(d, &one, sizeof(one), x->stream);
}

static void detach_ctx(struct rt_ctx *x, void *arg)
{
	(void)arg;
	for (int j = 0; j < x->nmods; j++)
		set_off(x, x->mods[j], rt_mod_global);
	for (int j = 0; j < x->nlibs; j++)
		set_off(x, x->libs[j], rt_lib_global);
	rt_sass_ctx_off(x);
	rt_cu.StreamSynchronize(x->stream);
}

bool rt_detached(void)
{
	return __atomic_load_n(&detached, __ATOMIC_ACQUIRE);
}

void rt_ctx_detach(void)
{
	if (__atomic_exchange_n(&detached, 1, __ATOMIC_ACQ_REL))
		return;
	__atomic_store_n(&rt_cev_wanted, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&any_patched, 0, __ATOMIC_RELEASE);
	each_ctx(detach_ctx, NULL);
	RT_TRACE("the controller is gone: probes off in %d contexts", nctx);
}

/* Points one module's descriptors, control block and clock at x. */
static bool setup(struct rt_ctx *x, void *handle, global_fn get)
{
	struct gpux_sess_hdr *h = rt_sess();
	struct gpux_sess_map *maps = gpux_sess_maps(h);
	CUdeviceptr d;
	size_t sz;
	if (get(&d, &sz, handle, GPUX_SYM_CTL) != CUDA_SUCCESS || sz != sizeof(struct gpux_ctl))
		return false;
	struct gpux_ctl ctl = { .exit_ptr = x->host_dev + H_EXIT, .ring_ptr = x->rings,
				.nrings = x->rings ? NRINGS : 0 };
	if (!ok(rt_cu.MemcpyHtoDAsync(d, &ctl, sizeof(ctl), x->stream), "writing the control block"))
		return false;
	for (uint32_t i = 0; i < h->nmaps; i++) {
		char name[32];
		snprintf(name, sizeof(name), GPUX_SYM_MAP "%u", i);
		if (get(&d, &sz, handle, name) != CUDA_SUCCESS || sz != GPUX_MAP_DESC_SIZE) {
			rt_warn("a patched module lacks %s", name);
			return false;
		}
		struct gpux_sess_map *m = &maps[i];
		CUdeviceptr table = x->store + (m->area_off - x->base) +
				    sizeof(struct gpux_sess_map_area);
		struct gpux_map_desc desc = {
			.state = table,
			.keys = table + GPUX_SHARD_KEYS(m->max_entries),
			.values = table + GPUX_SHARD_VALUES(m->max_entries, m->key_size),
			.key_size = m->key_size, .value_size = m->value_size,
			.max_entries = m->max_entries,
			.kind = (m->kind & GPUX_MAP_KIND_MASK) |
				(uint32_t)__builtin_ctz(gpux_sess_shards(m))
						       << GPUX_MAP_SHARD_SHIFT,
			.lhist_min = m->lhist_min, .lhist_step = m->lhist_step,
		};
		/* pageable source: the call returns once it is staged */
		if (!ok(rt_cu.MemcpyHtoDAsync(d, &desc, sizeof(desc), x->stream),
			"writing a map descriptor"))
			return false;
	}
	if (get(&d, &sz, handle, GPUX_SYM_CLOCK_OFF) == CUDA_SUCCESS && sz == sizeof(x->clock))
		ok(rt_cu.MemcpyHtoDAsync(d, &x->clock, sizeof(x->clock), x->stream),
		   "writing the clock");
	uint32_t gpu = (uint32_t)x->device;
	if (get(&d, &sz, handle, GPUX_SYM_GPU) == CUDA_SUCCESS && sz == sizeof(gpu))
		ok(rt_cu.MemcpyHtoDAsync(d, &gpu, sizeof(gpu), x->stream), "writing the device");
	if (rt_detached())
		set_off(x, handle, get);
	return ok(rt_cu.StreamSynchronize(x->stream), "setting up a module");
}

CUresult rt_lib_global(CUdeviceptr *d, size_t *sz, void *lib, const char *name)
{
	return rt_cu.LibraryGetGlobal(d, sz, (CUlibrary)lib, name);
}

CUresult rt_mod_global(CUdeviceptr *d, size_t *sz, void *mod, const char *name)
{
	return rt_cu.ModuleGetGlobal(d, sz, (CUmodule)mod, name);
}

CUresult rt_ctx_global(const struct rt_ctx *x, int i, const char *name, CUdeviceptr *d,
		       size_t *sz)
{
	if (i >= x->nmods + x->nlibs)
		return rt_sass_global(d, sz, (void *)x, name);
	return i < x->nmods ? rt_mod_global(d, sz, x->mods[i], name)
			    : rt_lib_global(d, sz, x->libs[i - x->nmods], name);
}

bool rt_ctx_setup_sass(struct rt_ctx *x)
{
	if (!setup(x, x, rt_sass_global))
		return false;
	x->slot->modules++;
	__atomic_store_n(&any_patched, 1, __ATOMIC_RELEASE);
	return true;
}

void rt_module_loaded(CUmodule mod)
{
	CUdeviceptr d;
	size_t sz;
	if (!rt_sess() || !rt_cu_ready() ||
	    rt_cu.ModuleGetGlobal(&d, &sz, mod, GPUX_SYM_CTL) != CUDA_SUCCESS)
		return; /* not ours */
	CUstreamCaptureMode mode = rt_relaxed_begin();
	struct rt_ctx *x = rt_ctx_current();
	CUfunction f;
	if (x && x->nmods < MAX_MODS) {
		if (!x->clock_done &&
		    rt_cu.ModuleGetFunction(&f, mod, GPUX_SYM_CLOCK_SAMPLE) == CUDA_SUCCESS)
			rt_clock_calibrate(x, f);
		if (setup(x, mod, rt_mod_global)) {
			x->mods[x->nmods++] = mod;
			x->slot->modules++;
			__atomic_store_n(&any_patched, 1, __ATOMIC_RELEASE);
		}
	}
	rt_relaxed_end(mode);
}

static bool lib_in(struct rt_ctx *x, CUlibrary lib)
{
	for (int i = 0; i < x->nlibs; i++)
		if (x->libs[i] == lib)
			return true;
	return false;
}

/* Every patched library, process-wide, for contexts created later. */
static CUlibrary all_libs[MAX_MODS];
static int nall_libs;
static volatile int libs_epoch; /* bumped when all_libs changes */

static void setup_lib(struct rt_ctx *x, CUlibrary lib)
{
	if (lib_in(x, lib) || x->nlibs == MAX_MODS)
		return;
	CUkernel k;
	CUfunction f;
	if (!x->clock_done && rt_cu.LibraryGetKernel(&k, lib, GPUX_SYM_CLOCK_SAMPLE) == CUDA_SUCCESS &&
	    rt_cu.KernelGetFunction(&f, k) == CUDA_SUCCESS)
		rt_clock_calibrate(x, f);
	if (setup(x, lib, rt_lib_global)) {
		x->libs[x->nlibs++] = lib;
		x->slot->modules++;
		__atomic_store_n(&any_patched, 1, __ATOMIC_RELEASE);
	}
}

void rt_library_loaded(CUlibrary lib)
{
	CUdeviceptr d;
	size_t sz;
	if (!rt_sess() || !rt_cu_ready())
		return;
	/* loads the library into the current context, if there is one */
	CUresult rc = rt_cu.LibraryGetGlobal(&d, &sz, lib, GPUX_SYM_CTL);
	if (rc == CUDA_ERROR_NOT_FOUND)
		return; /* not ours */
	if (nall_libs < MAX_MODS) {
		all_libs[nall_libs++] = lib;
		__atomic_add_fetch(&libs_epoch, 1, __ATOMIC_RELEASE);
	}
	CUstreamCaptureMode mode = rt_relaxed_begin();
	struct rt_ctx *x = rc == CUDA_SUCCESS ? rt_ctx_current() : NULL;
	if (x)
		setup_lib(x, lib);
	rt_relaxed_end(mode);
}

void rt_module_unloaded(CUmodule mod)
{
	for (int i = 0; i < nctx; i++)
		for (int j = 0; j < ctxs[i].nmods; j++)
			if (ctxs[i].mods[j] == mod) {
				rt_ctx_retire(&ctxs[i], mod, false);
				ctxs[i].mods[j] = ctxs[i].mods[--ctxs[i].nmods];
			}
}

void rt_library_unloaded(CUlibrary lib)
{
	for (int i = 0; i < nctx; i++)
		for (int j = 0; j < ctxs[i].nlibs; j++)
			if (ctxs[i].libs[j] == lib) {
				rt_ctx_retire(&ctxs[i], lib, true);
				ctxs[i].libs[j] = ctxs[i].libs[--ctxs[i].nlibs];
			}
	for (int j = 0; j < nall_libs; j++)
		if (all_libs[j] == lib)
			all_libs[j] = all_libs[--nall_libs];
}

void rt_launch_done(CUstream s, bool per_thread)
{
	if (!__atomic_load_n(&any_patched, __ATOMIC_ACQUIRE))
		return;
	CUcontext c = NULL;
	if (rt_cu.CtxGetCurrent(&c) != CUDA_SUCCESS || !c)
		return;
	int n = __atomic_load_n(&nctx, __ATOMIC_ACQUIRE);
	struct rt_ctx *x = NULL;
	for (int i = 0; i < n && !x; i++)
		if (ctxs[i].ctx == c && !ctxs[i].dead)
			x = &ctxs[i];
	int idle = 0;
	if (!x || !x->done_ev ||
	    !__atomic_compare_exchange_n(&x->pending, &idle, 1, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return;
	if (!s && per_thread)
		s = CU_STREAM_PER_THREAD;
	CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
	if (rt_cu.StreamIsCapturing(s, &cs) != CUDA_SUCCESS ||
	    cs != CU_STREAM_CAPTURE_STATUS_NONE ||
	    rt_cu.EventRecord(x->done_ev, s) != CUDA_SUCCESS)
		__atomic_store_n(&x->pending, 0, __ATOMIC_RELEASE);
}

void rt_launch_seen(void)
{
	/* fast path: this thread already checked this context and epoch */
	static __thread CUcontext seen_ctx;
	static __thread int seen_epoch = -1;
	int epoch = __atomic_load_n(&libs_epoch, __ATOMIC_ACQUIRE);
	if (!epoch)
		return;
	CUcontext c = NULL;
	if (rt_cu.CtxGetCurrent(&c) != CUDA_SUCCESS || (c == seen_ctx && epoch == seen_epoch))
		return;
	pthread_mutex_lock(&rt_lock);
	CUstreamCaptureMode mode = rt_relaxed_begin();
	struct rt_ctx *x = rt_ctx_current();
	for (int i = 0; x && i < nall_libs; i++)
		setup_lib(x, all_libs[i]);
	rt_relaxed_end(mode);
	pthread_mutex_unlock(&rt_lock);
	seen_ctx = c;
	seen_epoch = epoch;
}
