/* cuda: events (rt.h): every traced process runs the session's host
 * programs (hobj, abi/session.h) in its own userspace BPF VM, loaded at the
 * first event. A program runs in the thread that made the CUDA call, so
 * its nsecs is the call's; the VM's lock serialises threads. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt_host_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host_rec.h"
#include "host_sec.h"

/* Every event until the first one shows what the session wants: the
 * session is mapped only in processes that use CUDA. */
uint32_t rt_cev_wanted = ~0u;
struct rt_host rt_h;

static int state; /* 0 not loaded, 1 running, -1 off */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static void forget(void)
{
	/* a fork's child starts over: the maps it inherited are its
	 * parent's, which the parent reports */
	state = 0;
	rt_h.vm = NULL; /* the parent's memory: left, never freed twice */
	memset(&rt_h, 0, sizeof(rt_h));
	rt_allocs_forget();
	pthread_mutex_init(&load_lock, NULL);
}

__attribute__((constructor)) static void host_init(void)
{
	pthread_atfork(NULL, NULL, forget);
}

static int event_of(const char *sec, const char **glob)
{
	static const char *const names[] = GPUX_CEV_NAMES;
	if (strncmp(sec, HOST_SEC_CUDA, strlen(HOST_SEC_CUDA)))
		return -1;
	sec += strlen(HOST_SEC_CUDA);
	for (int e = 0; e < GPUX_CEV_COUNT; e++) {
		size_t n = strlen(names[e]);
		if (!strncmp(sec, names[e], n) && (!sec[n] || sec[n] == ':')) {
			*glob = sec[n] ? sec + n + 1 : NULL;
			return e;
		}
	}
	return -1;
}

static bool programs(void)
{
	int glob_bits = 0;
	for (int i = 0; i < vm_prog_count(rt_h.vm); i++) {
		const char *glob;
		int e = event_of(vm_prog_section(rt_h.vm, i), &glob);
		if (e < 0)
			continue;
		struct host_ev *ev = &rt_h.ev[e];
		struct host_prog *p = realloc(ev->p, sizeof(*p) * (size_t)(ev->n + 1));
		if (!p)
			return false;
		ev->p = p;
		p[ev->n] = (struct host_prog){ i, glob ? strdup(glob) : NULL, -1 };
		if (glob && glob_bits < 31)
			p[ev->n].bit = glob_bits++;
		ev->n++;
	}
	if (glob_bits)
		rt_h.glob_ok = calloc(GPUX_SESS_MAX_NAMES, sizeof(uint32_t));
	return !glob_bits || rt_h.glob_ok;
}

/* A program changed (or may change) slot of shared device map dev_map:
 * logged for every context's next push. */
static void on_touch(void *arg, uint32_t slot)
{
	struct host_touch *t = &rt_h.log[rt_h.log_head % HOST_LOG];
	t->map = (uint32_t)(uintptr_t)arg;
	t->slot = slot;
	__atomic_store_n(&rt_h.log_head, rt_h.log_head + 1, __ATOMIC_RELEASE);
}

/* Device maps the VM shares: a zeroed table each, in the device's
 * layout; rt_push.c copies what programs change into each context. */
static bool binds(struct gpux_sess_hdr *h)
{
	char err[160];
	struct gpux_sess_hbind *b = gpux_sess_hbinds(h);
	rt_h.nbinds = h->nhbind < HOST_MAX_BINDS ? h->nhbind : HOST_MAX_BINDS;
	for (uint32_t i = 0; i < rt_h.nbinds; i++) {
		char sym[sizeof(b[i].sym) + 1];
		memcpy(sym, b[i].sym, sizeof(b[i].sym));
		sym[sizeof(b[i].sym)] = 0;
		rt_h.maps[i] = vm_map_by_name(rt_h.vm, sym);
		uint32_t d = b[i].dev_map;
		if (d == GPUX_SESS_NO_MAP || !rt_h.maps[i])
			continue;
		if (d >= h->nmaps || d >= HOST_MAX_BINDS)
			return false;
		const struct gpux_sess_map *m = &gpux_sess_maps(h)[d];
		uint64_t size = (GPUX_SHARD_BYTES(m->max_entries, m->key_size, m->value_size) +
				 4095) & ~4095ull;
		void *t = aligned_alloc(4096, size);
		if (!t)
			return false;
		memset(t, 0, size);
		if (vm_map_bind_dev(rt_h.vm, rt_h.maps[i], t, m->key_size, m->value_size,
				    m->max_entries, err, sizeof(err))) {
			free(t);
			rt_warn("cuda: probes: %s", err);
			return false;
		}
		if (b[i].mirror) { /* the device's: never pushed, refilled */
			rt_h.mirror_map[d] = rt_h.maps[i];
			rt_h.mirror[d] = b[i].mirror;
			rt_h.nmirrors++;
			continue;
		}
		rt_h.table[d] = t;
		rt_h.table_size[d] = size;
		vm_map_on_touch(rt_h.vm, rt_h.maps[i], on_touch, (void *)(uintptr_t)d);
		rt_h.nshared++;
	}
	return true;
}

static void claim_region(struct gpux_sess_hdr *h)
{
	uint32_t i = __atomic_fetch_add(&h->hosts_used, 1, __ATOMIC_ACQ_REL);
	if (i >= h->nhosts) {
		rt_warn("more than %u processes run cuda: probes; the maps of pid %d are lost",
			h->nhosts, (int)getpid());
		return;
	}
	rt_h.region = gpux_sess_host_at(h, i);
	rt_h.region->pid = (uint32_t)getpid();
	rt_actions_counts(rt_h.region->acts);
	__atomic_store_n(&rt_h.region->state, GPUX_SLOT_LIVE, __ATOMIC_RELEASE);
}

void rt_host_final(void)
{
	rt_kend_final(false); /* the completions still pending run first */
	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 1 || !rt_h.region)
		return;
	rt_host_records();
	rt_host_dump();
	__atomic_store_n(&rt_h.region->state, GPUX_SLOT_DONE, __ATOMIC_RELEASE);
}

static bool load(void)
{
	pthread_mutex_lock(&load_lock);
	if (state) {
		pthread_mutex_unlock(&load_lock);
		return state > 0;
	}
	struct gpux_sess_hdr *h = rt_sess();
	char err[256];
	bool ok = h && h->hobj_len &&
		  vm_load((char *)h + h->hobj_off, h->hobj_len, &rt_h.vm, err, sizeof(err)) == 0;
	if (h && h->hobj_len && !ok)
		rt_warn("cannot load the cuda: probes: %s", err);
	ok = ok && programs() && binds(h);
	if (ok) {
		rt_actions_attach(rt_h.vm);
		rt_cev_wanted = rt_detached() ? 0 : h->cev_mask; /* no controller: no events */
		rt_h.ring = vm_map_by_name(rt_h.vm, HOST_EVENTS_MAP) != NULL;
		claim_region(h);
		atexit(rt_host_final);
		/* periodic dumps and snap_req; the thread needs the driver's
		 * entry points, which a first event before any launch or
		 * module load has not resolved yet */
		if (rt_cu_ready())
			rt_drain_start();
	} else {
		rt_cev_wanted = 0;
	}
	__atomic_store_n(&state, ok ? 1 : -1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&load_lock);
	return ok;
}

static inline bool ready(void)
{
	int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
	return s > 0 || (s == 0 && load());
}

bool rt_cev_ready(void)
{
	/* gpux -p's probes start once every binding goes through the
	 * runtime, all at once (rt.h, rt_attach_binding) */
	return !rt_detached() && !rt_attach_binding() && ready();
}

/* The kernel id of the events a cuda:EVENT:GLOB may filter. */
static uint64_t kernel_id_of(enum gpux_cev ev, const void *ctx)
{
	if (ev == GPUX_CEV_LAUNCH)
		return ((const struct gpux_cev_launch *)ctx)->kernel_id;
	if (ev == GPUX_CEV_KERNEL_END)
		return ((const struct gpux_cev_kernel_end *)ctx)->kernel_id;
	return UINT64_MAX;
}

/* Whether kernel-filtered program p (cuda:launch:GLOB,
 * cuda:kernel_end:GLOB) matches the kernel, cached per kernel id. */
static bool matches(const struct host_prog *p, uint64_t id, const char *ptx_name)
{
	if (!ptx_name)
		return false;
	if (p->bit < 0 || id >= GPUX_SESS_MAX_NAMES)
		return rt_glob_matches(p->glob, ptx_name);
	uint32_t *w = &rt_h.glob_ok[id];
	uint32_t v = __atomic_load_n(w, __ATOMIC_RELAXED);
	if (!(v & (1u << 31))) {
		v = 1u << 31;
		for (int e = 0; e < GPUX_CEV_COUNT; e++) {
			const struct host_ev *ev = &rt_h.ev[e];
			for (int i = 0; i < ev->n; i++)
				if (ev->p[i].bit >= 0 && rt_glob_matches(ev->p[i].glob, ptx_name))
					v |= 1u << ev->p[i].bit;
		}
		__atomic_store_n(w, v, __ATOMIC_RELAXED);
	}
	return v >> p->bit & 1;
}

static void failed(int rc, int prog)
{
	if (rt_h.region)
		__atomic_add_fetch(&rt_h.region->failures, 1, __ATOMIC_RELAXED);
	if (rt_h.told)
		return;
	rt_h.told = true;
	char *msg = rt_h.region ? rt_h.region->error : (char[128]){ 0 };
	snprintf(msg, 128, "%s: %s (status %d)", vm_prog_section(rt_h.vm, prog),
		 vm_last_error(rt_h.vm), rc);
	if (!rt_h.region)
		rt_warn("cuda: probe stopped: %s", msg);
}

void rt_cev_fire(enum gpux_cev ev, const void *ctx, size_t size, const char *ptx_name)
{
	if ((unsigned)ev >= GPUX_CEV_COUNT || !rt_cev_ready() || rt_h.exited)
		return;
	const struct host_ev *e = &rt_h.ev[ev];
	bool ran = false;
	struct gpux_sess_hdr *h = rt_sess();
	if (h && (h->flags & GPUX_SESS_TIMELINE))
		rt_host_cev(ev, ctx, size);
	rt_actions_event(ev, ctx);
	/* after a synchronize, mirrors hold every kernel it waited for */
	if (ev == GPUX_CEV_SYNC && rt_h.nmirrors)
		rt_ctx_snap_current();
	for (int i = 0; i < e->n; i++) {
		const struct host_prog *p = &e->p[i];
		if (p->glob && !matches(p, kernel_id_of(ev, ctx), ptx_name))
			continue;
		int rc = vm_run_prog(rt_h.vm, p->idx, ctx, size, NULL);
		if (rc)
			failed(rc, p->idx);
		ran = true;
	}
	if (ran && rt_h.ring)
		rt_host_records();
}

void rt_host_poll(bool snap)
{
	if (snap && __atomic_load_n(&state, __ATOMIC_ACQUIRE) == 1)
		rt_host_dump();
}

void *rt_host_table(uint32_t dev_map)
{
	if (dev_map >= HOST_MAX_BINDS || !ready())
		return NULL;
	return rt_h.table[dev_map];
}
