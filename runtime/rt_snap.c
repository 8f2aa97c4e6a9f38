/* Snapshots of a context's device maps into its session slot, the
 * printf ring forwarded into the slot's event ring, exit() noticed, and
 * the end of a context or the process. Called with rt_lock held. */
#include "rt_ctx_priv.h"
#include "rt_host_priv.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gpux_dev.h"

#define H_DROPS 64 /* pinned scratch: descriptor and ring drop counters */
#define MAX_DROPS ((HOSTCTL - H_DROPS) / 8)

/* Queues copies of map `map`'s drop counter in every module of x into
 * the pinned scratch; returns the next free scratch index. */
static int queue_drops(struct rt_ctx *x, uint32_t map, int at, int *counted)
{
	char name[32];
	snprintf(name, sizeof(name), GPUX_SYM_MAP "%u", map);
	uint64_t *dr = (uint64_t *)(x->host + H_DROPS);
	int n = rt_ctx_units(x);
	*counted = 0;
	for (int i = 0; i < n && at < MAX_DROPS; i++) {
		CUdeviceptr d;
		size_t sz;
		if (rt_ctx_global(x, i, name, &d, &sz) != CUDA_SUCCESS)
			continue;
		dr[at] = 0;
		if (rt_cu.MemcpyDtoHAsync(&dr[at], d + offsetof(struct gpux_map_desc, drops), 8,
					  x->stream) == CUDA_SUCCESS) {
			at++;
			++*counted;
		}
	}
	return at;
}

void rt_ctx_retire(struct rt_ctx *x, void *h, bool lib)
{
	struct gpux_sess_hdr *hd = rt_sess();
	uint64_t *dr = (uint64_t *)(x->host + H_DROPS);
	CUcontext prev = NULL;
	rt_cu.CtxGetCurrent(&prev);
	if (x->dead || rt_cu.CtxSetCurrent(x->ctx) != CUDA_SUCCESS)
		return;
	for (uint32_t m = 0; m < hd->nmaps && m < 64; m++) {
		char name[32];
		CUdeviceptr d;
		size_t sz;
		snprintf(name, sizeof(name), GPUX_SYM_MAP "%u", m);
		if ((lib ? rt_lib_global : rt_mod_global)(&d, &sz, h, name) != CUDA_SUCCESS)
			continue;
		dr[0] = 0;
		if (rt_cu.MemcpyDtoHAsync(&dr[0], d + offsetof(struct gpux_map_desc, drops), 8,
					  x->stream) == CUDA_SUCCESS &&
		    rt_cu.StreamSynchronize(x->stream) == CUDA_SUCCESS)
			x->gone_drops[m] += dr[0];
	}
	rt_cu.CtxSetCurrent(prev);
}

/* What a snapshot copies from the store, as byte ranges from its start:
 * each map whole, except an array keyed by kernel id, of which only the
 * state words and values of the rows below the ids in use (the keys of
 * an array are never written). Ranges less than a line apart are joined
 * into one copy. They are packed in the pinned staging (at: where), so
 * that it is as large as what is copied, not as the store. Used under
 * rt_lock. */
#define MAX_RANGES 4096
static struct {
	uint64_t off, len, at;
} ranges[MAX_RANGES];

static int add_range(int n, uint64_t off, uint64_t len)
{
	if (n > 0) {
		uint64_t end = ranges[n - 1].off + ranges[n - 1].len;
		if (off >= end && off - end < 128) {
			ranges[n - 1].len = off + len - ranges[n - 1].off;
			return n;
		}
	}
	if (n < 0 || n == MAX_RANGES)
		return -1;
	ranges[n].off = off;
	ranges[n].len = len;
	ranges[n].at = n ? ranges[n - 1].at + ranges[n - 1].len : 0;
	return n + 1;
}

static int plan_copies(const struct rt_ctx *x, struct gpux_sess_hdr *h)
{
	uint32_t used = __atomic_load_n(&rt_sess_root()->names_used, __ATOMIC_ACQUIRE);
	const struct gpux_sess_map *maps = gpux_sess_maps(h);
	int n = 0;
	for (uint32_t m = 0; m < h->nmaps && n >= 0; m++) {
		const struct gpux_sess_map *mp = &maps[m];
		uint64_t at = mp->area_off - x->base;
		uint32_t rows = used < mp->max_entries ? used : mp->max_entries;
		if (mp->rows != GPUX_SESS_ROWS_KERNELS || rows == mp->max_entries) {
			n = add_range(n, at, mp->area_size);
			continue;
		}
		uint64_t one = GPUX_SHARD_BYTES(mp->max_entries, mp->key_size, mp->value_size);
		at += sizeof(struct gpux_sess_map_area);
		for (uint32_t k = 0; k < gpux_sess_shards(mp) && rows && n >= 0; k++) {
			uint64_t t = at + k * one;
			n = add_range(n, t, (uint64_t)rows * 4);
			n = add_range(n, t + GPUX_SHARD_VALUES(mp->max_entries, mp->key_size),
				      (uint64_t)rows * mp->value_size);
		}
	}
	if (n < 0) { /* too many pieces: the whole store */
		ranges[0].off = ranges[0].at = 0;
		ranges[0].len = x->size;
		n = 1;
	}
	return n;
}

/* Pinned staging of at least need bytes (growing by doubling, at most
 * the store's size). */
static bool staging_for(struct rt_ctx *x, uint64_t need)
{
	if (need <= x->staging_size)
		return true;
	uint64_t size = 2 * x->staging_size > need ? 2 * x->staging_size : need;
	size = size < x->size ? size : x->size;
	void *p = NULL;
	if (rt_cu.MemHostAlloc(&p, size, 0) != CUDA_SUCCESS) {
		static bool told;
		if (!told)
			rt_warn("cannot allocate %llu bytes of map staging: maps not copied",
				(unsigned long long)size);
		told = true;
		return false;
	}
	if (x->staging)
		rt_cu.MemFreeHost(x->staging);
	x->staging = p;
	x->staging_size = size;
	return true;
}

static void snapshot(struct rt_ctx *x, bool final)
{
	struct gpux_sess_hdr *h = rt_sess();
	CUcontext prev = NULL;
	rt_cu.CtxGetCurrent(&prev);
	if (rt_cu.CtxSetCurrent(x->ctx) != CUDA_SUCCESS)
		return;
	if (final)
		rt_cu.CtxSynchronize();
	int nr = x->size ? plan_copies(x, h) : 0;
	bool copied = !nr || staging_for(x, ranges[nr - 1].at + ranges[nr - 1].len);
	for (int i = 0; i < nr && copied; i++)
		copied = rt_cu.MemcpyDtoHAsync((char *)x->staging + ranges[i].at,
					       x->store + ranges[i].off, ranges[i].len,
					       x->stream) == CUDA_SUCCESS;
	int at = 0, per_map[64] = { 0 };
	for (uint32_t m = 0; m < h->nmaps && m < 64; m++)
		at = queue_drops(x, m, at, &per_map[m]);
	uint64_t *dr = (uint64_t *)(x->host + H_DROPS);
	bool ring_words = rt_ring_queue_words(x);
	if (rt_cu.StreamSynchronize(x->stream) != CUDA_SUCCESS || !copied) {
		rt_cu.CtxSetCurrent(prev);
		return;
	}
	struct gpux_sess_slot *s = x->slot;
	__atomic_add_fetch(&s->seq, 1, __ATOMIC_ACQ_REL); /* odd: writing */
	for (int i = 0; i < nr; i++)
		memcpy((char *)s + x->base + ranges[i].off, (char *)x->staging + ranges[i].at,
		       ranges[i].len);
	for (uint32_t m = 0; m < h->nmaps; m++) {
		const void *t = rt_host_table(m);
		if (t) /* the VM's table: host memory the device reads */
			memcpy(gpux_area_table(gpux_sess_area(h, s, m), &gpux_sess_maps(h)[m], 0), t,
			       GPUX_SHARD_BYTES(gpux_sess_maps(h)[m].max_entries,
						gpux_sess_maps(h)[m].key_size,
						gpux_sess_maps(h)[m].value_size));
	}
	int k = 0;
	for (uint32_t m = 0; m < h->nmaps; m++) {
		uint64_t sum = 0;
		for (int j = 0; m < 64 && j < per_map[m]; j++)
			sum += dr[k++];
		if (m < 64)
			sum += x->gone_drops[m];
		gpux_sess_area(h, s, m)->drops = sum;
	}
	if (ring_words)
		x->dev_drops = rt_ring_drops(x);
	__atomic_store_n(&s->ring_drops, x->dev_drops + x->fwd_drops, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->seq, 1, __ATOMIC_RELEASE);
	s->snapshots++;
	x->last_snap_ns = rt_now_ns();
	rt_host_mirror();
	rt_cu.CtxSetCurrent(prev);
}

void rt_ctx_snap_current(void)
{
	CUcontext c = NULL;
	if (!rt_cu_ready() || rt_cu.CtxGetCurrent(&c) != CUDA_SUCCESS || !c)
		return;
	pthread_mutex_lock(&rt_lock);
	struct rt_ctx *x = rt_ctx_of(c);
	if (x && !x->dead && x->store)
		snapshot(x, false);
	pthread_mutex_unlock(&rt_lock);
}

/* The printf rings forwarded, and exit() noticed. */
static void drain(struct rt_ctx *x)
{
	rt_ring_drain(x);
	if (__atomic_load_n((uint32_t *)(x->host + H_EXIT), __ATOMIC_ACQUIRE))
		__atomic_store_n(&rt_sess()->exit, 1, __ATOMIC_RELEASE);
}

/* A completion point passed (its event is done) and the last snapshot
 * is at least COMPLETION_NS old: a snapshot is due. The limit keeps a
 * launch-heavy program from copying its maps a thousand times a second. */
#define COMPLETION_NS 10000000ull

static bool completed(struct rt_ctx *x)
{
	if (!x->done_ev || !__atomic_load_n(&x->pending, __ATOMIC_ACQUIRE))
		return false;
	if (rt_now_ns() - x->last_snap_ns < COMPLETION_NS)
		return false;
	CUcontext prev = NULL;
	rt_cu.CtxGetCurrent(&prev);
	bool done = rt_cu.CtxSetCurrent(x->ctx) == CUDA_SUCCESS &&
		    rt_cu.EventQuery(x->done_ev) == CUDA_SUCCESS;
	rt_cu.CtxSetCurrent(prev);
	if (done)
		__atomic_store_n(&x->pending, 0, __ATOMIC_RELEASE);
	return done;
}

void rt_ctx_poll(bool snap, bool final)
{
	for (int i = 0; i < nctx; i++) {
		struct rt_ctx *x = &ctxs[i];
		if (x->dead)
			continue;
		drain(x);
		rt_clock_poll(x);
		if (snap || completed(x))
			snapshot(x, final);
		if (final)
			drain(x);
	}
}

static void finish(struct rt_ctx *x)
{
	snapshot(x, true);
	drain(x);
	rt_sass_finish(x);
	uint64_t read = 0;
	for (int k = 0; k < NRINGS; k++)
		read += x->tails[k];
	RT_TRACE("context %d done: %llu snapshots, %llu printf bytes read, drops %llu device + "
		 "%llu forwarding", x->device, (unsigned long long)x->slot->snapshots,
		 (unsigned long long)read, (unsigned long long)x->dev_drops,
		 (unsigned long long)x->fwd_drops);
	__atomic_store_n(&x->slot->state, GPUX_SLOT_DONE, __ATOMIC_RELEASE);
}

static struct rt_ctx *by(CUcontext ctx, int dev)
{
	for (int i = 0; i < nctx; i++)
		if (!ctxs[i].dead && (dev >= 0 ? ctxs[i].primary && ctxs[i].device == dev
						: ctxs[i].ctx == ctx))
			return &ctxs[i];
	return NULL;
}

void rt_ctx_ending(CUcontext ctx, int dev)
{
	struct rt_ctx *x = by(ctx, dev);
	if (!x)
		return;
	if (dev >= 0) { /* a primary release may leave the context alive */
		snapshot(x, true);
		drain(x);
		return;
	}
	finish(x);
	x->dead = true; /* its memory goes with it */
}

void rt_ctx_ended(int dev)
{
	struct rt_ctx *x = by(NULL, dev);
	unsigned flags;
	int active = 1;
	if (!x || rt_cu.DevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || active)
		return;
	__atomic_store_n(&x->slot->state, GPUX_SLOT_DONE, __ATOMIC_RELEASE);
	x->dead = true;
	rt_sass_ctx_gone(x->ctx);
}

void rt_ctx_shutdown(void)
{
	for (int i = 0; i < nctx; i++)
		if (!ctxs[i].dead) {
			finish(&ctxs[i]);
			ctxs[i].dead = true;
		}
}

void rt_ctx_finish_all(void)
{
	for (int i = 0; i < nctx; i++)
		if (!ctxs[i].dead)
			finish(&ctxs[i]); /* the final snapshot synchronizes */
}

void rt_ctx_forget(void)
{
	nctx = 0;
}
