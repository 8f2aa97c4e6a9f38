/* cuda: probes in a device session (sess_host.h). */
#include "sess_host.h"

#include <stdlib.h>
#include <string.h>

#include "cuda_events.h"
#include "host_rec.h"
#include "output.h"

static uint32_t event_mask(const struct program *prog)
{
	static const char *const names[] = GPUX_CEV_NAMES;
	uint32_t mask = 0;
	for (const struct node *p = prog->probes; p; p = p->next)
		for (const struct node *a = p->u.probe.attach; a; a = a->next) {
			const struct attach *at = &a->u.attach;
			if (!provider_in_target_vm(at->prov))
				continue;
			for (int e = 0; e < at->nevents; e++)
				for (int k = 0; k < GPUX_CEV_COUNT; k++)
					if (!strcmp(at->events[e]->name, names[k]))
						mask |= 1u << k;
		}
	return mask;
}

static bool has_cuda(const struct program *prog)
{
	for (const struct node *p = prog->probes; p; p = p->next)
		for (const struct node *a = p->u.probe.attach; a; a = a->next)
			if (provider_in_target_vm(a->u.attach.prov))
				return true;
	return false;
}

int sess_host_init(struct sess_host *sh, struct program *prog, const struct host_obj *obj,
		   struct rec_state *rs, const bool *remote, struct diags *diags)
{
	memset(sh, 0, sizeof(*sh));
	sh->rs = rs;
	if (!obj || !obj->size)
		return 0;
	sh->obj = obj;
	sh->cuda = has_cuda(prog);
	size_t n = (size_t)obj->nmaps + 1;
	sh->remote = calloc(n, sizeof(*sh->remote));
	sh->dev = malloc(n * sizeof(*sh->dev));
	if (!sh->remote || !sh->dev) {
		diag_error_nospan(diags, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		sh->dev[i] = -1;
		sh->remote[i] = i < (size_t)obj->nmaps && remote[i];
	}
	if (sess_kid_init(sh)) {
		diag_error_nospan(diags, "out of memory");
		return -1;
	}
	return 0;
}

/* The device map of the same name, or GPUX_SESS_NO_MAP. */
static uint32_t device_map(const struct dev_session *ds, const char *name)
{
	for (int j = 0; j < ds->mod.nmaps; j++)
		if (!strcmp(ds->mod.map_meta[j].info->name, name))
			return (uint32_t)j;
	return GPUX_SESS_NO_MAP;
}

/* How the runtime folds the device's copies of a mirrored map. */
static uint32_t merge_of(const struct dev_session *ds, int j)
{
	switch (ds->mod.map_meta[j].agg) {
	case AGG_COUNT: case AGG_SUM: return GPUX_MERGE_ADD;
	case AGG_MIN: return GPUX_MERGE_MIN;
	case AGG_MAX: return GPUX_MERGE_MAX;
	default: return ds->mod.map_meta[j].additive ? GPUX_MERGE_ADD : GPUX_MERGE_LAST;
	}
}

void sess_host_spec(struct sess_host *sh, const struct dev_session *ds,
		    struct gpux_sess_spec *spec)
{
	const struct host_obj *o = sh->obj;
	if (!o)
		return;
	for (int i = 0; i < o->nmaps; i++) {
		uint32_t j = device_map(ds, o->maps[i].name);
		sh->dev[i] = j == GPUX_SESS_NO_MAP ? -1 : (int)j;
	}
	if (!sh->cuda)
		return; /* no cuda: probes: the processes need nothing */
	struct gpux_sess_hbind *b = arena_zalloc(&ds->prog->arena, sizeof(*b) * (size_t)(o->nmaps + 1));
	uint64_t dump = 8;
	bool mirrors = false;
	for (int i = 0; i < o->nmaps; i++) {
		const struct host_map *hm = &o->maps[i];
		snprintf(b[i].sym, sizeof(b[i].sym), "%s", hm->sym);
		b[i].dev_map = hm->device ? (uint32_t)sh->dev[i] : GPUX_SESS_NO_MAP;
		if (hm->mirror && sh->dev[i] >= 0) {
			b[i].mirror = merge_of(ds, sh->dev[i]);
			mirrors = true;
		}
		if (b[i].dev_map == GPUX_SESS_NO_MAP)
			dump += 8 + (uint64_t)hm->max_entries * (hm->key_size + hm->value_size);
	}
	spec->hobj = o->elf;
	spec->hobj_len = o->size;
	spec->hbind = b;
	spec->nhbind = (uint32_t)o->nmaps;
	spec->dump_size = (dump + 4095) & ~4095ull;
	spec->cev_mask = event_mask(ds->prog);
	/* the runtime learns the allocations from these events */
	if (o->tracks_allocs)
		spec->cev_mask |= 1u << GPUX_CEV_MALLOC | 1u << GPUX_CEV_FREE;
	/* a synchronize refreshes the mirrors */
	if (mirrors)
		spec->cev_mask |= 1u << GPUX_CEV_SYNC;
}

int sess_host_open(struct sess_host *sh, struct dev_session *ds, struct diags *diags)
{
	sh->ds = ds;
	if (!sh->obj)
		return 0;
	const struct gpux_sess_hdr *plan = &ds->trust.plan;
	sh->hosts_off = plan->hosts_off;
	sh->host_size = plan->host_size;
	sh->nhosts = plan->nhosts < GPUX_SESS_MAX_HOSTS ? plan->nhosts : GPUX_SESS_MAX_HOSTS;
	sh->dump_size = plan->dump_size;
	sh->dump = malloc(sh->dump_size ? sh->dump_size : 1);
	sh->rec = malloc(GPUX_SESS_HRING_SIZE);
	if (!sh->dump || !sh->rec) {
		diag_error_nospan(diags, "out of memory");
		return -1;
	}
	char err[256];
	if (vm_load(sh->obj->elf, sh->obj->size, &sh->vm, err, sizeof(err))) {
		diag_error_nospan(diags, "cannot load the host programs: %s", err);
		return -1;
	}
	return 0;
}

void sess_host_close(struct sess_host *sh)
{
	vm_free(sh->vm);
	sh->vm = NULL;
	free(sh->dump);
	free(sh->rec);
	sess_kid_free(sh);
	free(sh->remote);
	free(sh->dev);
	map_base_free(&sh->bases);
	sh->dump = NULL;
	sh->rec = NULL;
	sh->remote = NULL;
	sh->dev = NULL;
	sh->obj = NULL;
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

/* A timeline event's strings, escaped in place (rec: struct
 * host_rec_cev, then event ev's context). */
static void cev_text(unsigned char *rec, uint32_t ev)
{
	struct host_rec_cev *c = (struct host_rec_cev *)rec;
	unsigned char *x = rec + sizeof(*c);
	sess_text_field(c->comm, sizeof(c->comm));
	if (ev == GPUX_CEV_LAUNCH)
		sess_text_field(((struct gpux_cev_launch *)x)->kernel, GPUX_CEV_STR);
	else if (ev == GPUX_CEV_KERNEL_END)
		sess_text_field(((struct gpux_cev_kernel_end *)x)->kernel, GPUX_CEV_STR);
	else if (ev == GPUX_CEV_MEMCPY)
		sess_text_field(((struct gpux_cev_memcpy *)x)->kind, GPUX_CEV_STR);
}

/* A record of a cuda: probe as the traced program wrote it, into
 * sh->rec: the kinds a cuda: probe makes (and the runtime, for a
 * timeline), of a size they have, with
 * every string escaped (sess_trust.h). False (reported) for any other:
 * a record never names a command to run, a file to read or an address
 * to watch. */
static bool clean_record(struct sess_host *sh, const unsigned char *src, uint32_t len)
{
	const struct host_obj *o = sh->obj;
	struct host_rec_hdr h;
	if (len < sizeof(h))
		goto bad;
	memcpy(sh->rec, src, len);
	memcpy(&h, sh->rec, sizeof(h));
	switch (h.kind) {
	case HOST_REC_PRINTF: {
		if (h.id >= (unsigned)o->nfmts || len != o->fmts[h.id].size)
			goto bad;
		const struct host_fmt *f = &o->fmts[h.id];
		if (f->kind == HOST_FMT_CAT || f->kind == HOST_FMT_SYSTEM)
			goto bad; /* sema refuses them in cuda: probes */
		/* escaped, not reported: str() and comm may hold any bytes */
		for (int k = 0; k < f->nargs; k++)
			if (f->args[k].type.kind == TY_STR &&
			    f->args[k].offset + (uint64_t)f->args[k].size <= len)
				sess_text_field((char *)sh->rec + f->args[k].offset, f->args[k].size);
		return true;
	}
	case HOST_REC_JOIN:
		if (h.id >= (unsigned)o->nfmts || len < HOST_JOIN_BYTES)
			goto bad;
		for (int k = 0; k < HOST_JOIN_MAX; k++)
			sess_text_field((char *)sh->rec + 16 + k * HOST_JOIN_STR, HOST_JOIN_STR);
		return true;
	case HOST_REC_EXIT: case HOST_REC_PRINT: case HOST_REC_CLEAR: case HOST_REC_ZERO:
	case HOST_REC_TIME:
		return true;
	case HOST_REC_HELPER_ERR: /* -k: a site the compiler made, and a value */
		if (h.id >= (unsigned)o->nsites || len < 16)
			goto bad;
		return true;
	case HOST_REC_CEV: /* a timeline's event, whole: its strings escaped */
		if (!(sh->ds->h->flags & GPUX_SESS_TIMELINE) || !gpux_cev_size(h.id) ||
		    len != sizeof(h) + sizeof(struct host_rec_cev) + gpux_cev_size(h.id))
			goto bad;
		cev_text(sh->rec + sizeof(h), h.id);
		return true;
	default:
		break;
	}
bad:
	sess_corrupt(&sh->ds->trust, "a record of a cuda: probe no probe makes");
	return false;
}

static void drain_one(struct sess_host *sh, uint32_t i)
{
	struct gpux_sess_host *r = sess_host_region(sh, i);
	const uint64_t size = GPUX_SESS_HRING_SIZE;
	const unsigned char *ring = (const unsigned char *)r + SESS_HOST_RING_OFF;
	uint64_t head = __atomic_load_n(&r->ring_head, __ATOMIC_ACQUIRE), t = sh->tail[i];
	if (head - t > size) {
		sess_corrupt(&sh->ds->trust, "a cuda: probe's ring head");
		t = head; /* not a ring we can follow: skip what is there */
	}
	while (t < head) {
		struct gpux_sess_hrec hr;
		uint64_t off = t % size;
		memcpy(&hr, ring + off, sizeof(hr));
		if (hr.len < sizeof(hr) || hr.len % 8 || off + hr.len > size || hr.len > head - t) {
			sess_corrupt(&sh->ds->trust, "a malformed record of a cuda: probe");
			t = head;
			break;
		}
		uint32_t n = hr.len - (uint32_t)sizeof(hr);
		if (hr.kind != GPUX_SESS_FILLER && hr.kind <= n &&
		    clean_record(sh, ring + off + sizeof(hr), hr.kind))
			rec_handle(sh->rs, sh->rec, hr.kind);
		t += hr.len;
	}
	sh->tail[i] = t;
	__atomic_store_n(&r->ring_tail, t, __ATOMIC_RELEASE);
}

void sess_host_drain(struct sess_host *sh)
{
	if (!sh->obj)
		return;
	uint32_t n = sess_host_regions(sh);
	for (uint32_t i = 0; i < n; i++)
		drain_one(sh, i);
	fflush(sh->ds->out);
}
