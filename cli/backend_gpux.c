/* gpux's own VM as a backend (backend.h): BEGIN, END and interval run
 * here, on the host object loaded into the controller's userspace BPF
 * VM. The maps only they use live here too; the kernel's maps they read
 * are copied in (per-CPU values merged) just before each of them runs. */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

#include "host_sec.h"
#include "vm_exec.h"

struct gpux_backend {
	struct backend b;
	struct vm_exec x;
};

static struct gpux_backend *gb(const struct backend *b)
{
	return (struct gpux_backend *)b;
}

/* The maps of others this VM reads, as their holders have them now. */
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
		free(e.kv);
	}
}

static int g_open(struct backend *b, struct diags *d)
{
	struct gpux_backend *g = gb(b);
	struct run *r = b->r;
	if (vm_exec_open(&g->x, &r->obj, &r->rs, d))
		return -1;
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
	if (vm_exec_wait_ns(&g->x) != 0)
		return;
	sync_reads(g);
	vm_exec_due(&g->x, d);
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
