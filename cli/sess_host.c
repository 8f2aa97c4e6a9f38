/* cuda: probes in a device session (sess_host.h). */
#include "sess_host.h"

#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "cuda_events.h"
#include "map_place.h"
#include "output.h"

bool sess_host_wanted(const struct program *prog)
{
	for (const struct node *p = prog->probes; p; p = p->next)
		for (const struct node *a = p->u.probe.attach; a; a = a->next)
			if (!strcmp(a->u.attach.provider, "cuda"))
				return true;
	return false;
}

bool sess_host_any(const struct program *prog)
{
	for (const struct node *p = prog->probes; p; p = p->next)
		if (map_place_vm_probe(p))
			return true;
	return sess_host_wanted(prog);
}

static uint32_t event_mask(const struct program *prog)
{
	static const char *const names[] = GPUX_CEV_NAMES;
	uint32_t mask = 0;
	for (const struct node *p = prog->probes; p; p = p->next)
		for (const struct node *a = p->u.probe.attach; a; a = a->next) {
			const struct attach *at = &a->u.attach;
			if (strcmp(at->provider, "cuda"))
				continue;
			for (int e = 0; e < at->nevents; e++)
				for (int k = 0; k < GPUX_CEV_COUNT; k++)
					if (!strcmp(at->events[e]->name, names[k]))
						mask |= 1u << k;
		}
	return mask;
}

struct resets {
	struct sess_host *sh;
	struct diags *diags;
	int bad;
};

/* clear(@m) and zero(@m) of a map held by gdev: or cuda: probes work
 * through a baseline: only for maps whose values add up. */
static void check_reset(struct node *n, void *arg)
{
	struct resets *r = arg;
	if (n->kind == N_CALL && (!strcmp(n->u.call.name, "clear") || !strcmp(n->u.call.name, "zero")) &&
	    n->u.call.args && n->u.call.args->kind == N_MAP) {
		const char *name = n->u.call.args->u.map.name;
		const struct host_obj *o = &r->sh->obj;
		for (int i = 0; i < o->nmaps; i++)
			if (r->sh->remote[i] && !strcmp(o->maps[i].name, name) &&
			    !map_base_supported(&o->maps[i])) {
				diag_error(r->diags, n->span, "%s(@%s): gdev: or cuda: probes hold "
					   "@%s; BEGIN, END and interval can clear or zero only their "
					   "count, sum, avg, stats, hist and lhist maps",
					   n->u.call.name, name, name);
				r->bad = 1;
			}
	}
	ast_visit_children(n, check_reset, arg);
}

int sess_host_compile(struct sess_host *sh, struct program *prog, const struct options *o,
		      struct diags *diags)
{
	memset(sh, 0, sizeof(*sh));
	if (compile_host_obj(prog, o, &sh->obj, diags))
		return -1;
	sh->have_obj = true;
	sh->cuda = sess_host_wanted(prog);
	size_t n = (size_t)sh->obj.nmaps + 1;
	sh->remote = calloc(n, sizeof(*sh->remote));
	sh->dev = malloc(n * sizeof(*sh->dev));
	if (!sh->remote || !sh->dev) {
		diag_error_nospan(diags, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		sh->dev[i] = -1;
	if (map_place(prog, &sh->obj, sh->remote, NULL,
		      "gdev: or cuda: probes, which keep it in the traced program", diags))
		return -1;
	struct resets r = { sh, diags, 0 };
	for (struct node *p = prog->probes; p; p = p->next)
		if (map_place_vm_probe(p))
			ast_visit_children(p, check_reset, &r);
	return r.bad ? -1 : 0;
}

/* The device map of the same name, or GPUX_SESS_NO_MAP. */
static uint32_t device_map(const struct dev_session *ds, const char *name)
{
	for (int j = 0; j < ds->mod.nmaps; j++)
		if (!strcmp(ds->mod.map_meta[j].info->name, name))
			return (uint32_t)j;
	return GPUX_SESS_NO_MAP;
}

void sess_host_spec(struct sess_host *sh, const struct dev_session *ds,
		    struct gpux_sess_spec *spec)
{
	const struct host_obj *o = &sh->obj;
	for (int i = 0; i < o->nmaps; i++) {
		uint32_t j = device_map(ds, o->maps[i].name);
		sh->dev[i] = j == GPUX_SESS_NO_MAP ? -1 : (int)j;
	}
	if (!sh->cuda)
		return; /* BEGIN/END/interval run here: the processes need nothing */
	struct gpux_sess_hbind *b = arena_zalloc(&ds->prog->arena, sizeof(*b) * (size_t)(o->nmaps + 1));
	uint64_t dump = 8;
	for (int i = 0; i < o->nmaps; i++) {
		const struct host_map *hm = &o->maps[i];
		snprintf(b[i].sym, sizeof(b[i].sym), "%s", hm->sym);
		b[i].dev_map = hm->device ? (uint32_t)sh->dev[i] : GPUX_SESS_NO_MAP;
		if (b[i].dev_map == GPUX_SESS_NO_MAP)
			dump += 8 + (uint64_t)hm->max_entries * (hm->key_size + hm->value_size);
	}
	spec->hobj = o->elf;
	spec->hobj_len = o->size;
	spec->hbind = b;
	spec->nhbind = (uint32_t)o->nmaps;
	spec->dump_size = (dump + 4095) & ~4095ull;
	spec->cev_mask = event_mask(ds->prog);
}

static int print_cb(void *ctx, int map, uint64_t top, uint64_t div)
{
	return sess_host_print(ctx, map, top, div);
}

/* Records of BEGIN/END/interval: those of cuda: probes never carry a
 * clear or zero (the traced process did it to its own maps). */
static void clear_cb(void *ctx, int map)
{
	struct sess_host *sh = ctx;
	if (sess_host_reset(sh, map, false))
		sh->rs.failed = 1;
}

static void zero_cb(void *ctx, int map)
{
	struct sess_host *sh = ctx;
	if (sess_host_reset(sh, map, true))
		sh->rs.failed = 1;
}

int sess_host_open(struct sess_host *sh, struct dev_session *ds, struct diags *diags)
{
	sh->ds = ds;
	sh->rs = (struct rec_state){ .out = ds->out, .json = ds->json, .obj = &sh->obj };
	sh->rs.maps = (struct rec_maps){ print_cb, clear_cb, zero_cb, sh };
	sh->hosts_off = ds->h->hosts_off;
	sh->host_size = ds->h->host_size;
	sh->nhosts = ds->h->nhosts < GPUX_SESS_MAX_HOSTS ? ds->h->nhosts : GPUX_SESS_MAX_HOSTS;
	sh->dump_size = ds->h->dump_size;
	sh->dump = malloc(sh->dump_size ? sh->dump_size : 1);
	if (!sh->dump) {
		diag_error_nospan(diags, "out of memory");
		return -1;
	}
	return vm_exec_open(&sh->x, &sh->obj, &sh->rs, diags);
}

void sess_host_close(struct sess_host *sh)
{
	if (sh->x.vm)
		vm_exec_close(&sh->x);
	free(sh->dump);
	free(sh->remote);
	free(sh->dev);
	map_base_free(&sh->bases);
	sh->dump = NULL;
	sh->remote = NULL;
	sh->dev = NULL;
	if (sh->have_obj)
		compile_host_obj_free(&sh->obj);
	sh->have_obj = false;
}

uint32_t sess_host_regions(const struct sess_host *sh)
{
	uint32_t n = __atomic_load_n(&sh->ds->h->hosts_used, __ATOMIC_ACQUIRE);
	return n < sh->nhosts ? n : sh->nhosts;
}

struct gpux_sess_host *sess_host_region(const struct sess_host *sh, uint32_t i)
{
	return (struct gpux_sess_host *)((char *)sh->ds->h + sh->hosts_off + i * sh->host_size);
}

/* ---- records ---- */

static void drain_one(struct sess_host *sh, uint32_t i)
{
	struct gpux_sess_host *r = sess_host_region(sh, i);
	const uint64_t size = GPUX_SESS_HRING_SIZE;
	const unsigned char *ring = (const unsigned char *)r + SESS_HOST_RING_OFF;
	uint64_t head = __atomic_load_n(&r->ring_head, __ATOMIC_ACQUIRE), t = sh->tail[i];
	if (head - t > size)
		t = head; /* not a ring we can follow: skip what is there */
	while (t < head) {
		struct gpux_sess_hrec hr;
		uint64_t off = t % size;
		memcpy(&hr, ring + off, sizeof(hr));
		if (hr.len < sizeof(hr) || hr.len % 8 || off + hr.len > size || hr.len > head - t) {
			if (!sh->warned)
				fputs("gpux: WARNING: a malformed record from a cuda: probe was skipped\n",
				      stderr);
			sh->warned = true;
			t = head;
			break;
		}
		if (hr.kind != GPUX_SESS_FILLER && hr.kind <= hr.len - sizeof(hr))
			rec_handle(&sh->rs, ring + off + sizeof(hr), hr.kind);
		t += hr.len;
	}
	sh->tail[i] = t;
	__atomic_store_n(&r->ring_tail, t, __ATOMIC_RELEASE);
}

void sess_host_drain(struct sess_host *sh)
{
	if (!sh->have_obj)
		return;
	uint32_t n = sess_host_regions(sh);
	for (uint32_t i = 0; i < n; i++)
		drain_one(sh, i);
	fflush(sh->ds->out);
}
