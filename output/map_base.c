/* Baselines for clear() and zero() of maps held elsewhere (map_base.h). */
#include "map_base.h"

#include <stdlib.h>
#include <string.h>

#include "bytes.h"

bool map_base_supported(const struct host_map *hm)
{
	if (hm->value.kind != TY_AGG)
		return false;
	switch (hm->value.agg) {
	case AGG_COUNT: case AGG_SUM: case AGG_AVG: case AGG_STATS: case AGG_HIST: case AGG_LHIST:
		return true;
	default:
		return false;
	}
}

static size_t sort_ks;

static int by_key(const void *a, const void *b)
{
	return memcmp(a, b, sort_ks);
}

static struct map_base *find(const struct map_bases *b, const char *name)
{
	for (int i = 0; i < b->n; i++)
		if (!strcmp(b->v[i].name, name))
			return &b->v[i];
	return NULL;
}

int map_base_take(struct map_bases *b, const char *name, const struct out_entries *e, bool keep)
{
	struct map_base *m = find(b, name);
	if (!m) {
		struct map_base *v = realloc(b->v, sizeof(*v) * (size_t)(b->n + 1));
		if (!v)
			return -1;
		b->v = v;
		m = &v[b->n++];
		*m = (struct map_base){ .name = name };
	}
	size_t sz = e->n * (e->ks + e->vs);
	unsigned char *kv = malloc(sz ? sz : 1);
	if (!kv)
		return -1;
	if (sz)
		memcpy(kv, e->kv, sz);
	sort_ks = e->ks;
	if (e->n > 1)
		qsort(kv, e->n, e->ks + e->vs, by_key);
	free(m->kv);
	*m = (struct map_base){ name, kv, e->n, e->ks, e->vs, keep };
	return 0;
}

void map_base_apply(const struct map_bases *b, const char *name, struct out_entries *e)
{
	const struct map_base *m = find(b, name);
	if (!m || m->ks != e->ks || m->vs != e->vs)
		return;
	size_t w = e->ks + e->vs, out = 0;
	sort_ks = e->ks;
	for (size_t i = 0; i < e->n; i++) {
		unsigned char *x = e->kv + i * w;
		const unsigned char *old = m->n ? bsearch(x, m->kv, m->n, w, by_key) : NULL;
		bool any = !old;
		for (size_t k = 0; old && k + 8 <= e->vs; k += 8) {
			wr64(x + e->ks + k, (int64_t)((uint64_t)rd64(x + e->ks + k) -
						      (uint64_t)rd64(old + e->ks + k)));
			any |= rd64(x + e->ks + k) != 0;
		}
		if (!any && !m->keep)
			continue; /* cleared, nothing since */
		if (out != i)
			memmove(e->kv + out * w, x, w);
		out++;
	}
	e->n = out;
}

void map_base_free(struct map_bases *b)
{
	for (int i = 0; i < b->n; i++)
		free(b->v[i].kv);
	free(b->v);
	*b = (struct map_bases){ 0 };
}
