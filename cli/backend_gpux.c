/* gpux's own VM as a backend (backend.h): BEGIN, END and interval run
 * here, on the host object loaded into the controller's userspace BPF
 * VM. The maps only they use live here too; the kernel's maps they read
 * are copied in (per-CPU values merged) just before each of them runs,
 * and of those they write, the elements the run added, changed or
 * deleted are written back right after it (before its records, so a
 * print after a write shows it). An interval's write of a key replaces
 * what kernel probes did to that key while it ran; other keys keep
 * theirs. */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_sec.h"
#include "vm_exec.h"

/* A written map as it was copied in: its elements, and a table of
 * their indexes by key (open addressing, 0 empty, else index + 1). */
struct copied {
	struct out_entries e;
	uint32_t *slot;
	size_t nslot;
	bool *kept; /* per element: still in the VM after the run */
};

struct gpux_backend {
	struct backend b;
	struct vm_exec x;
	struct copied *copied; /* per obj map; for the written ones */
	bool detached;         /* the run is over: no interval fires */
};

static struct gpux_backend *gb(const struct backend *b)
{
	return (struct gpux_backend *)b;
}

static uint64_t key_hash(const unsigned char *k, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ k[i]) * 1099511628211ull;
	return h;
}

static void copied_free(struct copied *c)
{
	free(c->e.kv);
	free(c->slot);
	free(c->kept);
	*c = (struct copied){ { 0 }, NULL, 0, NULL };
}

/* Indexes c's elements by key; false without memory (then nothing is
 * written back: the run's writes stay in the VM). */
static bool copied_index(struct copied *c)
{
	size_t es = c->e.ks + c->e.vs;
	c->nslot = 16;
	while (c->nslot < 2 * c->e.n)
		c->nslot *= 2;
	c->slot = calloc(c->nslot, sizeof(*c->slot));
	c->kept = calloc(c->e.n + 1, sizeof(*c->kept));
	if (!c->slot || !c->kept)
		return false;
	for (size_t i = 0; i < c->e.n; i++) {
		size_t at = key_hash(c->e.kv + i * es, c->e.ks) & (c->nslot - 1);
		while (c->slot[at])
			at = (at + 1) & (c->nslot - 1);
		c->slot[at] = (uint32_t)i + 1;
	}
	return true;
}

/* The element of key in c, or NULL. */
static const unsigned char *copied_find(const struct copied *c, const void *key, size_t *idx)
{
	size_t es = c->e.ks + c->e.vs;
	for (size_t at = key_hash(key, c->e.ks) & (c->nslot - 1); c->slot[at];
	     at = (at + 1) & (c->nslot - 1)) {
		const unsigned char *el = c->e.kv + (c->slot[at] - 1) * es;
		if (!memcmp(el, key, c->e.ks)) {
			*idx = c->slot[at] - 1;
			return el;
		}
	}
	return NULL;
}

/* The maps of others this VM reads, as their holders have them now;
 * those it writes, kept as copied to tell what a run changed. */
static void sync_reads(struct gpux_backend *g)
{
	struct run *r = g->b.r;
	for (int i = 0; i < r->obj.nmaps; i++) {
		const struct run_map *m = r->vm_reads[i] ? run_maps_obj(r, i) : NULL;
		if (!m || m->b == &g->b)
			continue;
		const struct host_map *hm = &r->obj.maps[i];
		struct vm_map *vm = vm_map_by_name(g->x.vm, hm->sym);
		struct out_entries e = { 0 };
		if (vm && m->b->ops->map_read(m->b, m->idx, &e) == 0) {
			vm_map_clear(g->x.vm, vm);
			size_t w = hm->key_size + hm->value_size;
			for (size_t k = 0; k < e.n; k++)
				vm_map_update(g->x.vm, vm, e.kv + k * w, e.kv + k * w + hm->key_size, 0);
		}
		struct copied *c = g->copied && r->vm_writes[i] ? &g->copied[i] : NULL;
		if (!c) {
			free(e.kv);
			continue;
		}
		copied_free(c);
		c->e = (struct out_entries){ e.kv, e.n, hm->key_size, hm->value_size };
		if (!copied_index(c))
			copied_free(c);
	}
}

struct writing {
	struct copied *c;
	const struct run_map *m;
	int failed;
};

/* A VM element that is new or changed since the copy goes to the holder. */
static int write_changed(void *arg, const void *key, const void *value)
{
	struct writing *w = arg;
	size_t idx;
	const unsigned char *was = copied_find(w->c, key, &idx);
	if (was)
		w->c->kept[idx] = true;
	if ((!was || memcmp(was + w->c->e.ks, value, w->c->e.vs)) &&
	    w->m->b->ops->map_write(w->m->b, w->m->idx, key, value))
		w->failed++;
	return 0;
}

/* After a run: what it changed in the maps it writes, written back (and
 * what it deleted, deleted there). */
static void write_back(void *arg)
{
	struct gpux_backend *g = arg;
	struct run *r = g->b.r;
	for (int i = 0; g->copied && i < r->obj.nmaps; i++) {
		struct copied *c = &g->copied[i];
		const struct run_map *m = r->vm_writes[i] ? run_maps_obj(r, i) : NULL;
		struct vm_map *vm = m ? vm_map_by_name(g->x.vm, r->obj.maps[i].sym) : NULL;
		if (!vm || !c->slot || !m->b->ops->map_write)
			continue;
		struct writing w = { c, m, 0 };
		vm_map_foreach(g->x.vm, vm, write_changed, &w);
		size_t es = c->e.ks + c->e.vs;
		for (size_t k = 0; k < c->e.n; k++)
			if (!c->kept[k] && m->b->ops->map_write(m->b, m->idx, c->e.kv + k * es, NULL))
				w.failed++;
		if (w.failed)
			fprintf(stderr, "gpux: WARNING: %d elements of @%s could not be written "
				"where its probes read it\n", w.failed, r->obj.maps[i].name);
		/* the holder has the VM's now: a later run before the next copy
		 * (intervals due together) is told apart from this one */
		struct out_entries now;
		int rc = out_map_read(g->x.vm, &r->obj.maps[i], &now);
		copied_free(c);
		c->e = now;
		if (rc || !copied_index(c))
			copied_free(c);
	}
}

static int g_open(struct backend *b, struct diags *d)
{
	struct gpux_backend *g = gb(b);
	struct run *r = b->r;
	if (vm_exec_open(&g->x, &r->obj, &r->rs, d))
		return -1;
	g->copied = calloc((size_t)r->obj.nmaps + 1, sizeof(*g->copied));
	if (!g->copied) {
		diag_error_nospan(d, "out of memory");
		return -1;
	}
	g->x.ran = write_back;
	g->x.ran_arg = g;
	return run_maps_add_owned(r, b, RUNNER_GPUX, d);
}

static int g_attached(const struct backend *b)
{
	return run_count_attach(b->r->prog, RUNNER_GPUX);
}

static int g_begin(struct backend *b, struct diags *d)
{
	sync_reads(gb(b));
	return vm_exec_section(&gb(b)->x, HOST_SEC_BEGIN, d);
}

static void g_end(struct backend *b, struct diags *d)
{
	sync_reads(gb(b));
	vm_exec_section(&gb(b)->x, HOST_SEC_END, d);
}

static int64_t g_wait_ns(const struct backend *b)
{
	return vm_exec_wait_ns(&gb(b)->x);
}

static void g_drain(struct backend *b, struct diags *d)
{
	struct gpux_backend *g = gb(b);
	if (g->detached || vm_exec_wait_ns(&g->x) != 0)
		return;
	sync_reads(g);
	vm_exec_due(&g->x, d);
}

static void g_detach(struct backend *b)
{
	gb(b)->detached = true;
}

static int g_map_read(struct backend *b, int idx, struct out_entries *e)
{
	return out_map_read(gb(b)->x.vm, &b->r->obj.maps[idx], e);
}

static int g_map_reset(struct backend *b, int idx, bool keep)
{
	if (keep)
		vm_exec_zero(&gb(b)->x, idx);
	else
		vm_exec_clear(&gb(b)->x, idx);
	return 0;
}

static void g_close(struct backend *b)
{
	struct gpux_backend *g = gb(b);
	for (int i = 0; g->copied && i < b->r->obj.nmaps; i++)
		copied_free(&g->copied[i]);
	free(g->copied);
	vm_exec_close(&gb(b)->x);
	free(b);
}

static const struct backend_ops gpux_ops = {
	.open = g_open,
	.attached = g_attached,
	.begin = g_begin,
	.end = g_end,
	.wait_ns = g_wait_ns,
	.drain = g_drain,
	.detach = g_detach,
	.map_read = g_map_read,
	.map_reset = g_map_reset,
	.close = g_close,
};

struct backend *gpux_backend_new(struct run *r, struct diags *d)
{
	struct gpux_backend *g = calloc(1, sizeof(*g));
	if (!g) {
		diag_error_nospan(d, "out of memory");
		return NULL;
	}
	g->b = (struct backend){ &gpux_ops, r };
	return &g->b;
}
