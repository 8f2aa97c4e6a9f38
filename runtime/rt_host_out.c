/* What the traced process's VM sends the controller (rt_host_priv.h):
 * its records through the host region's ring, its maps as dumps. */
#include "rt_host_priv.h"

#include <string.h>
#include <time.h>

#include "host_rec.h"

static void ring_put(const void *data, size_t len)
{
	struct gpux_sess_host *r = rt_h.region;
	if (!r)
		return;
	const uint64_t size = GPUX_SESS_HRING_SIZE;
	uint64_t need = (sizeof(struct gpux_sess_hrec) + len + 7) & ~7ull;
	uint64_t head = r->ring_head, tail = __atomic_load_n(&r->ring_tail, __ATOMIC_ACQUIRE);
	uint64_t off = head % size, pad = off + need > size ? size - off : 0;
	unsigned char *ring = (unsigned char *)r + r->ring_off;
	if (need > size || head - tail + pad + need > size) {
		__atomic_add_fetch(&r->ring_drops, 1, __ATOMIC_RELAXED);
		return;
	}
	if (pad) {
		struct gpux_sess_hrec f = { (uint32_t)pad, GPUX_SESS_FILLER };
		memcpy(ring + off, &f, sizeof(f));
		off = 0;
	}
	struct gpux_sess_hrec h = { (uint32_t)need, (uint32_t)len };
	memcpy(ring + off, &h, sizeof(h));
	memcpy(ring + off + sizeof(h), data, len);
	__atomic_store_n(&r->ring_head, head + pad + need, __ATOMIC_RELEASE);
}

#define ROOM_WAIT_NS 500000000ull /* then the controller is taken not to be reading */

void rt_host_room(void)
{
	static bool stalled; /* callers are serialized (CUPTI's delivery lock) */
	struct gpux_sess_host *r = rt_h.region;
	if (!r)
		return;
	uint64_t waited = 0;
	for (;;) {
		uint64_t used = __atomic_load_n(&r->ring_head, __ATOMIC_RELAXED) -
				__atomic_load_n(&r->ring_tail, __ATOMIC_ACQUIRE);
		if (used <= GPUX_SESS_HRING_SIZE / 2) {
			stalled = false;
			return;
		}
		/* a controller that stopped reading does not slow every burst */
		if (stalled || waited >= ROOM_WAIT_NS || rt_h.exited || rt_detached()) {
			stalled = true;
			return;
		}
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL); /* it reads every 5 ms */
		waited += 1000000;
	}
}

static int on_record(void *arg, const void *data, size_t len)
{
	(void)arg;
	struct host_rec_hdr h;
	if (len < sizeof(h) || rt_h.exited)
		return 0;
	memcpy(&h, data, sizeof(h));
	struct vm_map *m = h.id < rt_h.nbinds ? rt_h.maps[h.id] : NULL;
	switch (h.kind) {
	case HOST_REC_CLEAR:
		if (m)
			vm_map_clear(rt_h.vm, m);
		return 0;
	case HOST_REC_ZERO:
		if (m)
			vm_map_zero(rt_h.vm, m);
		return 0;
	case HOST_REC_PRINT:
		rt_host_dump(); /* the controller prints what it holds */
		break;
	case HOST_REC_EXIT:
		rt_h.exited = true;
		break;
	}
	ring_put(data, len);
	return 0;
}

void rt_host_records(void)
{
	vm_ring_drain(rt_h.vm, on_record, NULL);
}

void rt_host_cev(enum gpux_cev ev, const void *ctx, size_t size)
{
	struct {
		struct host_rec_hdr h;
		struct host_rec_cev c;
		unsigned char ctx[sizeof(struct gpux_cev_launch)];
	} r;
	if (size != gpux_cev_size(ev) || size > sizeof(r.ctx) || !rt_h.region)
		return;
	uint64_t pt = vm_task_pid_tgid();
	r.h = (struct host_rec_hdr){ HOST_REC_CEV, (uint32_t)ev };
	r.c = (struct host_rec_cev){ .ns = rt_now_ns(), .pid = (uint32_t)(pt >> 32),
				     .tid = (uint32_t)pt, .gpu = (uint32_t)rt_actions_gpu() };
	vm_task_comm(r.c.comm);
	memcpy(r.ctx, ctx, size);
	vm_lock(rt_h.vm); /* the ring's one writer at a time, as in rt_host_records */
	ring_put(&r, sizeof(r.h) + sizeof(r.c) + size);
	vm_unlock(rt_h.vm);
}

struct dump {
	unsigned char *p, *end;
	uint32_t ks, vs, count;
	bool full;
};

static int put(void *arg, const void *key, const void *value)
{
	struct dump *d = arg;
	if (d->p + d->ks + d->vs > d->end) {
		d->full = true;
		return 1;
	}
	memcpy(d->p, key, d->ks);
	memcpy(d->p + d->ks, value, d->vs);
	d->p += d->ks + d->vs;
	d->count++;
	return 0;
}

/* The maps the controller merges: the device tables it reads from the
 * device snapshots instead. */
void rt_host_dump(void)
{
	struct gpux_sess_host *r = rt_h.region;
	struct gpux_sess_hdr *h = rt_sess();
	if (!r || !h)
		return;
	struct gpux_sess_hbind *b = gpux_sess_hbinds(h);
	__atomic_add_fetch(&r->seq, 1, __ATOMIC_ACQ_REL); /* odd: writing */
	struct dump d = { (unsigned char *)r + r->dump_off, NULL, 0, 0, 0, false };
	d.end = d.p + h->dump_size - 4;
	for (uint32_t i = 0; i < rt_h.nbinds && !d.full; i++) {
		if (!rt_h.maps[i] || b[i].dev_map != GPUX_SESS_NO_MAP)
			continue;
		struct vm_map_info info;
		vm_map_info(rt_h.vm, rt_h.maps[i], &info);
		if (d.p + 8 > d.end)
			break;
		unsigned char *hdr = d.p;
		d.p += 8;
		d.ks = info.key_size;
		d.vs = info.value_size;
		d.count = 0;
		vm_map_foreach(rt_h.vm, rt_h.maps[i], put, &d);
		memcpy(hdr, &i, 4);
		memcpy(hdr + 4, &d.count, 4);
	}
	uint32_t end = UINT32_MAX;
	memcpy(d.p, &end, 4);
	__atomic_add_fetch(&r->seq, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&r->dumps, 1, __ATOMIC_RELEASE);
}
