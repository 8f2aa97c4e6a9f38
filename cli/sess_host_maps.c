/* The maps of cuda: probes (sess_host.h): each traced process dumps its
 * VM's maps into its host region; the controller folds every region's
 * dump into its own VM, by each map's aggregation, and prints from it. */
#include "sess_host.h"
#include "bytes.h"

#include <stdlib.h>
#include <string.h>

#include "cuda_events.h"
#include "dev_print.h"
#include "output.h"
#include "umaps.h"

/* Folds src into dst, two processes' values of one map (plain values:
 * the last process's). */
static void fold(const struct host_map *hm, unsigned char *dst, const unsigned char *src)
{
	enum agg_kind agg = hm->value.kind == TY_AGG ? hm->value.agg : AGG_NONE;
	gpux_merge_values((enum gpux_sess_merge)agg_merge(agg, false), 1, dst, src, hm->value_size);
}

/* A consistent copy of region r's dump into sh->dump (seqlock), or
 * false if the writer kept it busy. */
static bool copy_dump(struct sess_host *sh, struct gpux_sess_host *r)
{
	const unsigned char *src = (const unsigned char *)r + SESS_HOST_RING_OFF + GPUX_SESS_HRING_SIZE;
	for (int tries = 0; tries < 100; tries++) {
		uint32_t s = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			continue;
		memcpy(sh->dump, src, sh->dump_size);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&r->seq, __ATOMIC_RELAXED) == s)
			return true;
	}
	return false;
}

/* A dumped element as the traced program wrote it, made safe to fold
 * and print: strings escaped, counts checked (one that cannot have been
 * counted is reported). False: leave it out. */
static bool clean_element(struct sess_host *sh, const struct host_map *hm, unsigned char *k,
			  unsigned char *v)
{
	struct sess_trust *t = &sh->ds->trust;
	/* escaped, not reported: str() and comm may hold any bytes */
	for (int i = 0; i < hm->nkeys; i++)
		if (hm->keys[i].type.kind == TY_STR && !(hm->kernel_id_keys & (1u << i)) &&
		    hm->keys[i].offset + (uint64_t)hm->keys[i].size <= hm->key_size)
			sess_text_field((char *)k + hm->keys[i].offset, hm->keys[i].size);
	sess_kid_canon(sh, hm, k); /* one kernel, one key, whichever process */
	if (hm->value_str && hm->value_str <= hm->value_size)
		sess_text_field((char *)v, hm->value_str);
	enum agg_kind agg = hm->value.kind == TY_AGG ? hm->value.agg : AGG_NONE;
	if (agg == AGG_COUNT || hm->bucket)
		return sess_count_ok(t, (uint64_t)rd64(v), SESS_MAX_HOST_COUNT,
				     "a count in a cuda: probe's map");
	if (agg == AGG_AVG || agg == AGG_STATS)
		return sess_count_ok(t, (uint64_t)rd64(v + 8), SESS_MAX_HOST_COUNT,
				     "a count in a cuda: probe's map");
	return true;
}

/* Folds the dump in sh->dump (the traced program's, copied) into the
 * maps of vmaps: per map, u32 index and u32 count, then the elements;
 * any index or count the object does not allow ends it (reported). */
static void merge_dump(struct sess_host *sh, struct vm_map **vmaps)
{
	const struct host_obj *o = sh->obj;
	unsigned char *p = sh->dump, *end = sh->dump + sh->dump_size;
	unsigned char *cur = malloc(UMAP_MAX_VALUE);
	while (cur && p + 8 <= end) {
		uint32_t map, count;
		memcpy(&map, p, 4);
		if (map == UINT32_MAX)
			break;
		memcpy(&count, p + 4, 4);
		p += 8;
		const struct host_map *hm = map < (uint32_t)o->nmaps ? &o->maps[map] : NULL;
		size_t ks = hm ? hm->key_size : 0, vs = hm ? hm->value_size : 0;
		if (!hm || !ks || vs > UMAP_MAX_VALUE || count > hm->max_entries ||
		    count > (size_t)(end - p) / (ks + vs)) {
			sess_corrupt(&sh->ds->trust, "a cuda: probe's map dump");
			break;
		}
		if (!vmaps[map]) { /* not the map being collected */
			p += count * (ks + vs);
			continue;
		}
		for (uint32_t k = 0; k < count; k++, p += ks + vs) {
			if (!clean_element(sh, hm, p, p + ks))
				continue;
			if (vm_map_lookup(sh->vm, vmaps[map], p, cur) == 0) {
				fold(hm, cur, p + ks);
				vm_map_update(sh->vm, vmaps[map], p, cur, 0);
			} else {
				vm_map_update(sh->vm, vmaps[map], p, p + ks, 0);
			}
		}
	}
	free(cur);
}

/* Written by cuda: probes in the traced processes (not a device map). */
static bool is_cuda_map(const struct sess_host *sh, int map)
{
	return sh->cuda && sh->remote[map] && sh->dev[map] < 0;
}

/* The controller's VM copy of cuda: map `map` := the fold of every
 * region's last dump of it (the other maps of a dump are skipped). */
static void collect(struct sess_host *sh, int map)
{
	const struct host_obj *o = sh->obj;
	struct vm_map **vmaps = calloc((size_t)o->nmaps + 1, sizeof(*vmaps));
	if (!vmaps)
		return;
	if (is_cuda_map(sh, map) && (vmaps[map] = vm_map_by_name(sh->vm, o->maps[map].sym)))
		vm_map_clear(sh->vm, vmaps[map]);
	uint32_t n = sess_host_regions(sh);
	for (uint32_t i = 0; i < n; i++) {
		struct gpux_sess_host *r = sess_host_region(sh, i);
		if (!sess_host_used(sh, i) || !__atomic_load_n(&r->dumps, __ATOMIC_ACQUIRE))
			continue;
		if (copy_dump(sh, r))
			merge_dump(sh, vmaps);
	}
	free(vmaps);
}

/* A cuda: map's elements merged over the processes (e->kv malloc'd). */
static int cuda_entries(struct sess_host *sh, int map, struct out_entries *e)
{
	collect(sh, map);
	int rc = out_map_read(sh->vm, &sh->obj->maps[map], e);
	if (rc == 0 && sess_kid_widen(sh, map, e)) {
		free(e->kv);
		*e = (struct out_entries){ 0 };
		rc = -1;
	}
	return rc;
}

int sess_host_entries(struct sess_host *sh, int map, struct out_entries *e)
{
	*e = (struct out_entries){ 0 };
	if (!sh->obj || map < 0 || map >= sh->obj->nmaps)
		return -1;
	const struct host_map *hm = &sh->obj->maps[map];
	int rc = sh->dev[map] >= 0 ? dev_map_entries(sh->ds, sh->dev[map], e)
				   : cuda_entries(sh, map, e);
	if (rc == 0)
		map_base_apply(&sh->bases, hm->name, e);
	return rc;
}

int sess_host_reset(struct sess_host *sh, int map, bool keep)
{
	if (!sh->obj || map < 0 || map >= sh->obj->nmaps || !sh->remote[map])
		return -1;
	struct out_entries e;
	int rc = sh->dev[map] >= 0 ? dev_map_entries(sh->ds, sh->dev[map], &e)
				   : cuda_entries(sh, map, &e);
	if (rc == 0)
		rc = map_base_take(&sh->bases, sh->obj->maps[map].name, &e, keep);
	free(e.kv);
	return rc;
}

/* Memory actions of one process: the no-ops always (they are hints
 * that did nothing), what they did and cost under -v. Counts no runtime
 * can have reached say nothing. */
static void report_acts(struct sess_host *sh, const struct gpux_sess_host *r, FILE *err,
			bool verbose)
{
	static const char *const names[] = GPUX_ACT_NAMES;
	struct sess_trust *t = &sh->ds->trust;
	for (int k = 0; k < GPUX_ACT_COUNT; k++) {
		const struct gpux_act_count *c = &r->acts[k];
		unsigned long long done = __atomic_load_n(&c->done, __ATOMIC_RELAXED),
				   un = __atomic_load_n(&c->unmanaged, __ATOMIC_RELAXED),
				   ref = __atomic_load_n(&c->refused, __ATOMIC_RELAXED),
				   cap = __atomic_load_n(&c->captured, __ATOMIC_RELAXED);
		if (!sess_count_ok(t, done, SESS_MAX_HOST_COUNT, "a count of memory actions") ||
		    !sess_count_ok(t, un, SESS_MAX_HOST_COUNT, "a count of memory actions") ||
		    !sess_count_ok(t, ref, SESS_MAX_HOST_COUNT, "a count of memory actions") ||
		    !sess_count_ok(t, cap, SESS_MAX_HOST_COUNT, "a count of memory actions"))
			return;
		unsigned long long all = done + un + ref + cap;
		if (un || ref || cap) {
			/* a policy may try every argument: only refusals warn */
			fprintf(err, "gpux: %spid %u: %s(): %llu of %llu calls did nothing",
				ref ? "WARNING: " : "", r->pid, names[k], un + ref + cap, all);
			const char *sep = ":";
			if (un) {
				fprintf(err, "%s %llu on memory that is not managed (or of zero length)",
					sep, un);
				sep = ",";
			}
			if (cap) {
				fprintf(err, "%s %llu on a stream being captured into a graph", sep, cap);
				sep = ",";
			}
			if (ref)
				fprintf(err, "%s %llu refused by the driver (last CUresult %d)", sep, ref,
					(int)c->last_status);
			fputc('\n', err);
		}
		if (verbose && done)
			fprintf(err, "gpux: pid %u: %s(): %llu calls, %.1f MiB, %.2f us per call\n",
				r->pid, names[k], done, (double)c->bytes / (1 << 20),
				(double)c->ns / 1e3 / (double)(done + ref));
	}
}

/* cuda:kernel_end of one process: launches it could not time always
 * (their events are missing from the maps), the completions under -v. */
static void report_kend(struct sess_host *sh, const struct gpux_sess_host *r, FILE *err,
			bool verbose)
{
	struct sess_trust *t = &sh->ds->trust;
	unsigned long long done = __atomic_load_n(&r->kend_done, __ATOMIC_RELAXED),
			   drops = __atomic_load_n(&r->kend_drops, __ATOMIC_RELAXED),
			   lost = __atomic_load_n(&r->kend_lost, __ATOMIC_RELAXED);
	if (!sess_count_ok(t, done, SESS_MAX_HOST_COUNT, "a count of timed kernels") ||
	    !sess_count_ok(t, drops, SESS_MAX_HOST_COUNT, "a count of timed kernels") ||
	    !sess_count_ok(t, lost, SESS_MAX_HOST_COUNT, "a count of timed kernels"))
		return;
	if (drops)
		fprintf(err, "gpux: WARNING: pid %u: cuda:kernel_end: %llu launches not timed "
			"(%d were waiting for their kernels already)\n", r->pid, drops,
			GPUX_CEV_KEND_PENDING);
	if (lost)
		fprintf(err, "gpux: WARNING: pid %u: cuda:kernel_end: %llu launches whose end the "
			"driver could not tell\n", r->pid, lost);
	if (verbose && (done || drops || lost))
		fprintf(err, "gpux: pid %u: cuda:kernel_end: %llu kernels timed\n", r->pid, done);
}

bool sess_host_used(struct sess_host *sh, uint32_t i)
{
	uint32_t state = __atomic_load_n(&sess_host_region(sh, i)->state, __ATOMIC_ACQUIRE);
	if (state > GPUX_SLOT_DONE) {
		sess_corrupt(&sh->ds->trust, "a cuda: probe region's state");
		return false;
	}
	return state != GPUX_SLOT_FREE;
}

void sess_host_report(struct sess_host *sh, FILE *err, bool verbose)
{
	uint32_t n = sh->obj ? sess_host_regions(sh) : 0;
	struct sess_trust *t = sh->obj ? &sh->ds->trust : NULL;
	for (uint32_t i = 0; i < n; i++) {
		if (!sess_host_used(sh, i))
			continue;
		/* a private copy: the program may go on writing the region */
		struct gpux_sess_host r;
		memcpy(&r, sess_host_region(sh, i), sizeof(r));
		if (!sess_pid_ok(t, r.pid))
			continue;
		uint64_t f = r.failures, d = r.ring_drops;
		char msg[SESS_TEXT_SIZE(sizeof(r.error))];
		if (sess_text(msg, sizeof(msg), r.error, sizeof(r.error)))
			sess_corrupt(t, "a cuda: probe's error message");
		if (f && sess_count_ok(t, f, SESS_MAX_HOST_COUNT, "a count of stopped runs"))
			fprintf(err, "gpux: WARNING: pid %u: %llu cuda: probe runs stopped; the first: %s\n",
				r.pid, (unsigned long long)f, msg);
		if (d && sess_count_ok(t, d, SESS_MAX_HOST_COUNT, "a count of dropped records"))
			fprintf(err, "gpux: WARNING: pid %u: %llu records of cuda: probes dropped\n",
				r.pid, (unsigned long long)d);
		report_acts(sh, &r, err, verbose);
		report_kend(sh, &r, err, verbose);
	}
}

void sess_host_dumps(const struct sess_host *sh, uint64_t *out)
{
	uint32_t n = sh->obj ? sess_host_regions(sh) : 0;
	for (uint32_t i = 0; i < n; i++)
		out[i] = __atomic_load_n(&sess_host_region(sh, i)->dumps, __ATOMIC_ACQUIRE);
}

bool sess_host_dumped_since(const struct sess_host *sh, const uint64_t *before)
{
	uint32_t n = sh->obj ? sess_host_regions(sh) : 0;
	for (uint32_t i = 0; i < n; i++) {
		struct gpux_sess_host *r = sess_host_region(sh, i);
		/* any state but LIVE: nothing to wait for */
		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == GPUX_SLOT_LIVE &&
		    __atomic_load_n(&r->dumps, __ATOMIC_ACQUIRE) == before[i])
			return false;
	}
	return true;
}
