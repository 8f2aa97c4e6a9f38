/* Device maps at exit (dev_print.h): each slot's snapshot of a map is
 * copied under the slot's seqlock, its live entries are re-keyed by what
 * prints (a kernel id becomes its name, so two processes' ids of one
 * kernel are one key), the slots are merged by the map's aggregation,
 * and the result goes through the host printing code in the VM's layout
 * (output.h: out_map_entries). */
#include "dev_print.h"
#include "bytes.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpux_dev.h" /* GPUX_SLOT_FULL */
#include "output.h"

/* Growing array of fixed-size records. */
struct recs {
	unsigned char *p;
	size_t n, cap, size;
};

static unsigned char *recs_add(struct recs *r)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		unsigned char *p = realloc(r->p, cap * r->size);
		if (!p)
			return NULL;
		r->p = p;
		r->cap = cap;
	}
	return r->p + r->n++ * r->size;
}

/* The area of map m in slot s, copied into buf while the slot's seq was
 * even and unchanged. A runtime that died while writing leaves seq odd:
 * after a few tries, what is there is taken. */
static void read_area(struct gpux_sess_slot *s, const struct gpux_sess_map *m,
		      unsigned char *buf)
{
	const unsigned char *src = (const unsigned char *)s + m->area_off;
	for (int tries = 0; tries < 20; tries++) {
		uint32_t a = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		memcpy(buf, src, m->area_size);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		uint32_t b = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
		if (a == b && !(a & 1))
			return;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
}

/* The printed key of a device key: integers as they are, kernel ids as
 * names in DEV_STR_SIZE bytes, zero-padded. */
static void host_key(struct dev_session *ds, int map, const unsigned char *dk,
		     unsigned char *hk)
{
	const struct dev_map_meta *meta = &ds->mod.map_meta[map];
	const struct host_map *hm = &ds->hmaps[map];
	memset(hk, 0, hm->bucket ? hm->key_size - 8 : hm->key_size);
	for (int k = 0; k < meta->nkeys; k++) {
		uint64_t w;
		memcpy(&w, dk + 8 * k, 8);
		if (meta->keys[k].kind == DEV_VAL_KERNEL)
			dev_session_kernel(ds, w, (char *)hk + hm->keys[k].offset, DEV_STR_SIZE);
		else
			memcpy(hk + hm->keys[k].offset, &w, 8);
	}
}

static bool nonzero(const unsigned char *v, uint32_t size)
{
	for (uint32_t i = 0; i < size; i++)
		if (v[i])
			return true;
	return false;
}

/* Whether value v of map could have been counted: count() values and
 * histogram buckets are sums of ones (sess_trust.h). */
static bool plausible(struct dev_session *ds, int map, const unsigned char *v)
{
	uint32_t vs = ds->maps[map].value_size, n = 0;
	switch (ds->mod.map_meta[map].agg) {
	case AGG_COUNT: n = 1; break;
	case AGG_HIST: case AGG_LHIST: n = vs / 8; break;
	default: return true;
	}
	for (uint32_t k = 0; k < n; k++)
		if (!sess_count_ok(&ds->trust, (uint64_t)rd64(v + 8 * k), SESS_MAX_DEVICE_COUNT,
				   "a count in a map snapshot"))
			return false;
	return true;
}

/* Every live entry of every slot as [printed key][u64 order][value];
 * order (slot, then table index) lets the last slot win for plain maps.
 * A value that cannot have been counted is left out (and reported). */
static int gather(struct dev_session *ds, int map, struct recs *r, size_t ks)
{
	const struct gpux_sess_map *m = &ds->maps[map];
	unsigned char *buf = malloc(m->area_size);
	if (!buf)
		return -1;
	uint32_t nslots = dev_session_slots(ds);
	int rc = 0;
	for (uint32_t i = 0; i < nslots && rc == 0; i++) {
		if (!dev_session_used(ds, i))
			continue;
		read_area(dev_session_slot(ds, i), m, buf);
		struct gpux_sess_map_area *a = (struct gpux_sess_map_area *)buf;
		/* each shard is a table of its own; equal keys merge later */
		for (uint32_t k = 0; k < gpux_sess_shards(m) && rc == 0; k++) {
			const unsigned char *t = gpux_area_table(a, m, k);
			const uint32_t *state = (const uint32_t *)t;
			const unsigned char *keys = t + GPUX_SHARD_KEYS(m->max_entries);
			const unsigned char *vals =
				t + GPUX_SHARD_VALUES(m->max_entries, m->key_size);
			bool array = m->kind == GPUX_MAP_ARRAY;
			for (uint32_t j = 0; j < m->max_entries; j++) {
				const unsigned char *v = vals + (uint64_t)j * m->value_size;
				if (state[j] != GPUX_SLOT_FULL && !(array && nonzero(v, m->value_size)))
					continue; /* empty, being inserted, or deleted */
				if (!plausible(ds, map, v))
					continue;
				unsigned char *e = recs_add(r);
				if (!e) {
					rc = -1;
					break;
				}
				/* an array's slot is its key (one word, or none) */
				uint64_t slot_key[8] = { j };
				host_key(ds, map, array ? (const unsigned char *)slot_key
							: keys + (uint64_t)j * m->key_size, e);
				uint64_t order = (uint64_t)i << 32 | j;
				memcpy(e + ks, &order, 8);
				memcpy(e + ks + 8, v, m->value_size);
			}
		}
	}
	free(buf);
	return rc;
}

static int by_key_then_order(const void *a, const void *b, void *arg)
{
	size_t ks = *(const size_t *)arg;
	int c = memcmp(a, b, ks);
	if (c)
		return c;
	uint64_t x, y;
	memcpy(&x, (const unsigned char *)a + ks, 8);
	memcpy(&y, (const unsigned char *)b + ks, 8);
	return (x > y) - (x < y);
}

/* Folds src into dst, both in the device's value layout. Sums wrap as
 * the device's atomics do. */
static void merge(struct dev_session *ds, int map, unsigned char *dst,
		  const unsigned char *src)
{
	gpux_merge_values((enum gpux_sess_merge)agg_merge(ds->mod.map_meta[map].agg,
							   ds->additive[map]),
			  0, dst, src, ds->maps[map].value_size);
}

static int add_bucket(struct recs *out, const unsigned char *hk, size_t ks, int b,
		      uint64_t n)
{
	unsigned char *e = recs_add(out);
	if (!e)
		return -1;
	memcpy(e, hk, ks - 8);
	wr64(e + ks - 8, b);
	wr64(e + ks, (int64_t)n);
	return 0;
}

/* One merged device entry as the VM would hold it: avg/stats swap to
 * {sum, count}; hist/lhist become one entry per nonzero bucket (at
 * least one, so that an all-zero key still prints). */
static int emit(struct dev_session *ds, int map, const unsigned char *hk,
		const unsigned char *v, struct recs *out)
{
	const struct host_map *hm = &ds->hmaps[map];
	size_t ks = hm->key_size;
	enum agg_kind agg = ds->mod.map_meta[map].agg;
	if (!hm->bucket) {
		unsigned char *e = recs_add(out);
		if (!e)
			return -1;
		memcpy(e, hk, ks);
		if (agg == AGG_AVG || agg == AGG_STATS) {
			memcpy(e + ks, v + 8, 8);
			memcpy(e + ks + 8, v, 8);
		} else {
			memcpy(e + ks, v, 8);
		}
		return 0;
	}
	/* Device buckets: hist <0, 0, [2^k, 2^(k+1)) as the host's; lhist
	 * has ceil((max - min) / step) + 2 where bpftrace has the floor:
	 * the device's extra in-range bucket and its top both lie at or
	 * above max, bpftrace's last bucket. */
	int nb = agg == AGG_LHIST ? (int)((hm->lhist[1] - hm->lhist[0]) / hm->lhist[2]) + 2 : 66;
	uint64_t bk[1002] = { 0 };
	uint32_t nd = ds->maps[map].value_size / 8;
	if (nb > (int)(sizeof(bk) / sizeof(bk[0])))
		nb = (int)(sizeof(bk) / sizeof(bk[0]));
	for (uint32_t b = 0; b < nd; b++)
		bk[b < (uint32_t)nb ? b : (uint32_t)nb - 1] += (uint64_t)rd64(v + 8 * b);
	bool any = false;
	for (int b = 0; b < nb; b++) {
		if (!bk[b])
			continue;
		if (add_bucket(out, hk, ks, b, bk[b]))
			return -1;
		any = true;
	}
	/* an all-zero key: one empty bucket keeps it in the output */
	if (!any && add_bucket(out, hk, ks, 0, 0))
		return -1;
	return 0;
}

int dev_map_entries(struct dev_session *ds, int map, struct out_entries *e)
{
	const struct host_map *hm = &ds->hmaps[map];
	size_t ks = hm->bucket ? hm->key_size - 8 : hm->key_size;
	uint32_t vs = ds->maps[map].value_size;
	struct recs raw = { .size = ks + 8 + vs };
	struct recs out = { .size = hm->key_size + hm->value_size };
	int rc = gather(ds, map, &raw, ks);
	if (rc == 0 && raw.n > 1)
		qsort_r(raw.p, raw.n, raw.size, by_key_then_order, &ks);
	for (size_t i = 0; rc == 0 && i < raw.n;) {
		unsigned char *first = raw.p + i * raw.size;
		size_t j = i + 1;
		for (; j < raw.n && !memcmp(first, raw.p + j * raw.size, ks); j++)
			merge(ds, map, first + ks + 8, raw.p + j * raw.size + ks + 8);
		rc = emit(ds, map, first, first + ks + 8, &out);
		i = j;
	}
	free(raw.p);
	*e = (struct out_entries){ out.p, out.n, hm->key_size, hm->value_size };
	if (rc) {
		free(out.p);
		e->kv = NULL;
		e->n = 0;
	}
	return rc;
}

void dev_report_drops(struct dev_session *ds, FILE *err)
{
	uint32_t nslots = dev_session_slots(ds);
	uint64_t ring = 0;
	for (int m = 0; m < ds->mod.nmaps; m++) {
		uint64_t drops = 0;
		bool ok = true;
		for (uint32_t i = 0; i < nslots && ok; i++) {
			struct gpux_sess_map_area *a = (struct gpux_sess_map_area *)
				((char *)dev_session_slot(ds, i) + ds->maps[m].area_off);
			uint64_t d = __atomic_load_n(&a->drops, __ATOMIC_RELAXED);
			ok = sess_count_ok(&ds->trust, d, SESS_MAX_DEVICE_COUNT,
					   "a map's count of dropped updates");
			drops += ok ? d : 0;
		}
		if (drops && ok)
			fprintf(err, "gpux: WARNING: @%s: %llu updates dropped (map full)\n",
				ds->hmaps[m].name, (unsigned long long)drops);
	}
	bool ok = true;
	for (uint32_t i = 0; i < nslots && ok; i++) {
		uint64_t d = __atomic_load_n(&dev_session_slot(ds, i)->ring_drops, __ATOMIC_RELAXED);
		ok = sess_count_ok(&ds->trust, d, SESS_MAX_DEVICE_COUNT,
				   "a count of dropped printf records");
		ring += ok ? d : 0;
	}
	if (ring && ok)
		fprintf(err, "gpux: WARNING: %llu printf records dropped\n", (unsigned long long)ring);
}
