/* Device output descriptions and the printf rings (dev_print.h).
 *
 * A device printf record holds 8-byte words per lane; a kernel id among
 * them becomes its name. Each lane is rebuilt as the record out_printf
 * takes for a host printf (a host_rec_hdr, then the arguments at their
 * offsets, names inline as char arrays), so both print alike. */
#include "dev_print.h"

#include <stdlib.h>
#include <string.h>

#include "gpux_dev.h" /* struct gpux_rec_hdr */
#include "output.h"

/* ---- descriptions ---- */

static void init_map(struct dev_session *ds, int i)
{
	const struct dev_map_meta *meta = &ds->mod.map_meta[i];
	const struct dev_map *dm = &ds->mod.maps[i];
	struct host_map *hm = &ds->hmaps[i];
	struct arena *ar = &ds->prog->arena;
	hm->name = dm->name;
	hm->sym = dm->name;
	hm->max_entries = dm->max_entries;
	if (meta->agg != AGG_NONE)
		hm->value = TYPE_AGG(meta->agg);
	else if (meta->info->value.kind == TY_INT)
		hm->value = meta->info->value;
	else
		hm->value = TYPE_I64;
	hm->nkeys = meta->nkeys;
	hm->keys = arena_zalloc(ar, sizeof(*hm->keys) * (size_t)(meta->nkeys + 1));
	unsigned off = 0;
	for (int k = 0; k < meta->nkeys; k++) {
		bool str = meta->keys[k].kind == DEV_VAL_KERNEL;
		hm->keys[k] = (struct host_key){
			str ? TYPE_STR : TYPE_INT(64, meta->keys[k].is_signed), off,
			str ? DEV_STR_SIZE : 8 };
		off += hm->keys[k].size;
	}
	hm->key_size = off ? off : 8; /* a scalar map is one element at key 0 */
	hm->bucket = meta->agg == AGG_HIST || meta->agg == AGG_LHIST;
	if (hm->bucket)
		hm->key_size += 8;
	hm->lhist[0] = dm->lhist_min;
	hm->lhist[1] = dm->lhist_max;
	hm->lhist[2] = dm->lhist_step > 0 ? dm->lhist_step : 1;
	hm->value_size = meta->agg == AGG_AVG || meta->agg == AGG_STATS ? 16 : 8;
	ds->additive[i] = meta->additive;
}

static void init_fmt(struct dev_session *ds, const struct dev_printf *f)
{
	struct host_fmt *hf = &ds->fmts[f->id];
	hf->fmt = f->fmt;
	hf->nargs = f->nargs;
	hf->args = arena_zalloc(&ds->prog->arena, sizeof(*hf->args) * (size_t)(f->nargs + 1));
	unsigned off = sizeof(struct host_rec_hdr);
	for (int k = 0; k < f->nargs; k++) {
		bool str = f->args[k].kind == DEV_VAL_KERNEL;
		hf->args[k] = (struct host_fmt_arg){
			str ? TYPE_STR : TYPE_INT(64, f->args[k].is_signed), off,
			str ? DEV_STR_SIZE : 8 };
		off += hf->args[k].size;
	}
	hf->size = off;
	ds->lane_cap = off > ds->lane_cap ? off : ds->lane_cap;
}

void dev_output_init(struct dev_session *ds)
{
	struct arena *ar = &ds->prog->arena;
	int n = ds->mod.nmaps;
	ds->hmaps = arena_zalloc(ar, sizeof(*ds->hmaps) * (size_t)(n + 1));
	ds->additive = arena_zalloc(ar, sizeof(*ds->additive) * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		init_map(ds, i);
	/* by id: codegen numbers the formats 0.. in order */
	ds->fmts = arena_zalloc(ar, sizeof(*ds->fmts) * (size_t)(ds->mod.nfmts + 1));
	for (int i = 0; i < ds->mod.nfmts; i++)
		if (ds->mod.fmts[i].id >= 0 && ds->mod.fmts[i].id < ds->mod.nfmts)
			init_fmt(ds, &ds->mod.fmts[i]);
}

/* ---- printf rings ---- */

static const struct dev_printf *fmt_of(const struct dev_session *ds, uint32_t id)
{
	if (id >= (uint32_t)ds->mod.nfmts || !ds->fmts[id].fmt)
		return NULL;
	for (int i = 0; i < ds->mod.nfmts; i++)
		if (ds->mod.fmts[i].id == (int)id)
			return &ds->mod.fmts[i];
	return NULL;
}

/* One record (validated to lie inside the ring): a line per lane. */
static void print_record(struct dev_session *ds, const unsigned char *rec, uint32_t len)
{
	struct gpux_rec_hdr rh;
	memcpy(&rh, rec, sizeof(rh));
	const struct dev_printf *f = fmt_of(ds, rh.fmt);
	if (!f) {
		sess_corrupt(&ds->trust, "a printf record of an unknown format");
		return;
	}
	uint64_t lanes = (uint64_t)__builtin_popcount(rh.mask);
	if (rh.arg_size != f->arg_size || sizeof(rh) + lanes * rh.arg_size > len) {
		sess_corrupt(&ds->trust, "a printf record of the wrong size");
		return;
	}
	if (!ds->lane && !(ds->lane = malloc(ds->lane_cap)))
		return;
	const struct host_fmt *hf = &ds->fmts[f->id];
	const unsigned char *args = rec + sizeof(rh);
	for (int lane = 0; lane < 32; lane++) {
		if (!(rh.mask >> lane & 1))
			continue;
		memset(ds->lane, 0, hf->size);
		for (int k = 0; k < f->nargs; k++) {
			uint64_t w;
			memcpy(&w, args + 8 * k, 8);
			unsigned char *to = ds->lane + hf->args[k].offset;
			if (f->args[k].kind == DEV_VAL_KERNEL)
				dev_session_kernel(ds, w, (char *)to, DEV_STR_SIZE);
			else
				memcpy(to, &w, 8);
		}
		out_printf(ds->out, ds->json, hf, ds->lane, hf->size);
		if (ds->tap && ds->tap->printf)
			ds->tap->printf(ds->tap->ctx, hf, ds->lane, hf->size);
		args += rh.arg_size;
	}
}

/* Consumes slot i's complete records. The ring's positions are the
 * runtime's to write (head) and ours (tail, kept privately too, so a
 * runtime that scribbles on it cannot send us off the ring). */
static void drain_slot(struct dev_session *ds, uint32_t i)
{
	struct gpux_sess_slot *s = dev_session_slot(ds, i);
	unsigned char *ring = (unsigned char *)s + ds->ring_off;
	uint64_t size = ds->ring_size, tail = ds->tail[i];
	uint64_t head = __atomic_load_n(&s->ring_head, __ATOMIC_ACQUIRE);
	if (head - tail > size) { /* also catches head < tail */
		sess_corrupt(&ds->trust, "an event ring's head");
		return;
	}
	while (tail != head) {
		uint64_t pos = tail & (size - 1);
		struct gpux_rec_hdr rh;
		memcpy(&rh, ring + pos, sizeof(rh));
		if (rh.len < sizeof(rh) || rh.len % GPUX_REC_ALIGN || rh.len > head - tail ||
		    pos + rh.len > size) {
			/* nothing after it can be trusted */
			sess_corrupt(&ds->trust, "a malformed record in an event ring");
			tail = head;
			break;
		}
		if (rh.fmt != GPUX_SESS_FILLER)
			print_record(ds, ring + pos, rh.len);
		/* zeroed, as the device's own ring is: len != 0 marks a record */
		memset(ring + pos, 0, rh.len);
		tail += rh.len;
	}
	ds->tail[i] = tail;
	__atomic_store_n(&s->ring_tail, tail, __ATOMIC_RELEASE);
}

void dev_ring_drain(struct dev_session *ds)
{
	uint32_t n = dev_session_slots(ds);
	for (uint32_t i = 0; i < n; i++)
		if (dev_session_used(ds, i))
			drain_slot(ds, i);
	fflush(ds->out);
}
