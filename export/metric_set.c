/* Maps as metric families (metric_set.h). Keys and non-numeric values
 * are written by the print() code (out_map_key_part, out_map_value), so
 * an export labels a series as the map prints it; numbers are read from
 * the elements as the VM lays them out (output.h). */
#include "metric_set.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t rd(const unsigned char *p)
{
	int64_t v;
	memcpy(&v, p, 8);
	return v;
}

static int64_t div_or_0(int64_t x, int64_t d)
{
	if (d == 0)
		return 0;
	if (d == -1)
		return (int64_t)(0 - (uint64_t)x); /* INT64_MIN / -1 wraps */
	return x / d;
}

char *ms_clean(const char *s, size_t n)
{
	char *o = malloc(4 * n + 1), *p = o;
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 0x20 && c < 0x7f) || c == '\n')
			*p++ = (char)c;
		else
			p += sprintf(p, "\\x%02x", c);
	}
	*p = '\0';
	return o;
}

char *ms_metric_name(const char *map)
{
	size_t n = strlen(map) + 6;
	char *s = malloc(n + 4);
	if (s)
		snprintf(s, n + 4, "gpux_%s", *map ? map : "map");
	return s;
}

/* What print() writes, through a memory stream, as clean text. */
static char *printed(const struct host_map *hm, int j, const unsigned char *p)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	if (!m)
		return NULL;
	if (j >= 0)
		out_map_key_part(m, hm, j, p);
	else
		out_map_value(m, hm, p);
	char *s = fclose(m) ? NULL : ms_clean(buf, n);
	free(buf);
	return s;
}

/* ---- grouping the elements by key, in key order ---- */

struct order {
	const struct host_map *hm;
	size_t prefix; /* key bytes without a bucket index */
};

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* Strings as strings, integers as unsigned numbers, then the bytes. */
static int key_cmp(const struct order *o, const unsigned char *a, const unsigned char *b)
{
	for (int j = 0; j < o->hm->nkeys; j++) {
		const struct host_key *k = &o->hm->keys[j];
		if (k->offset + k->size > o->prefix)
			break;
		int c = k->type.kind == TY_STR
			? strncmp((const char *)a + k->offset, (const char *)b + k->offset, k->size)
			: cmp_u64((uint64_t)rd(a + k->offset), (uint64_t)rd(b + k->offset));
		if (c)
			return c;
	}
	return memcmp(a, b, o->prefix);
}

static int entry_cmp(const void *x, const void *y, void *arg)
{
	const struct order *o = arg;
	const unsigned char *a = *(const unsigned char *const *)x;
	const unsigned char *b = *(const unsigned char *const *)y;
	int c = key_cmp(o, a, b);
	if (c || o->prefix == 0 || !o->hm->bucket)
		return c;
	return cmp_u64((uint64_t)rd(a + o->prefix), (uint64_t)rd(b + o->prefix));
}

/* ---- admission under the cap ---- */

static struct ms_admitted *admitted_of(struct ms_caps *c, const char *map, size_t ks)
{
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->m[i].map, map)) {
			if (c->m[i].ks != ks) { /* not expected: start over */
				free(c->m[i].keys);
				c->m[i].keys = NULL;
				c->m[i].n = 0;
				c->m[i].ks = ks;
			}
			return &c->m[i];
		}
	struct ms_admitted *v = realloc(c->m, (size_t)(c->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	c->m = v;
	char *name = strdup(map);
	if (!name)
		return NULL;
	v[c->n] = (struct ms_admitted){ .map = name, .ks = ks };
	return &v[c->n++];
}

static bool was_admitted(const struct order *o, const struct ms_admitted *a,
			 const unsigned char *key)
{
	size_t lo = 0, hi = a->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = key_cmp(o, key, a->keys + mid * a->ks);
		if (!c)
			return true;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return false;
}

/* Marks keep[g] for the groups that get series of their own and records
 * them as admitted. 0, or -1. */
static int admit(struct ms_caps *caps, const char *map, const struct order *o,
		 const unsigned char *const *first, size_t ng, bool *keep)
{
	struct ms_admitted *a = admitted_of(caps, map, o->prefix);
	if (!a)
		return -1;
	size_t kept = 0, max = caps->max_series ? caps->max_series : (size_t)-1;
	for (size_t g = 0; g < ng; g++)
		if (was_admitted(o, a, first[g]) && kept < max) {
			keep[g] = true;
			kept++;
		}
	for (size_t g = 0; g < ng && kept < max; g++)
		if (!keep[g]) {
			keep[g] = true;
			kept++;
		}
	unsigned char *keys = malloc(kept * o->prefix + 1);
	if (!keys)
		return -1;
	size_t n = 0;
	for (size_t g = 0; g < ng; g++)
		if (keep[g])
			memcpy(keys + n++ * o->prefix, first[g], o->prefix);
	free(a->keys);
	a->keys = keys;
	a->n = n;
	return 0;
}

/* ---- families ---- */

static enum ms_kind kind_of(const struct host_map *hm)
{
	if (hm->value.kind == TY_AGG) {
		switch (hm->value.agg) {
		case AGG_COUNT:
		case AGG_SUM:
			return MS_COUNTER;
		case AGG_STATS:
			return MS_SUMMARY;
		case AGG_HIST:
		case AGG_LHIST:
			return MS_HISTOGRAM;
		default:
			return MS_GAUGE;
		}
	}
	return hm->value.kind == TY_INT && !hm->value_str ? MS_GAUGE : MS_INFO;
}

/* Bucket bounds as print() labels them: hist's [2^k, 2^(k+1)) holds the
 * integers up to 2^(k+1) - 1; lhist's [a, a + step) those up to a + step - 1. */
static int buckets(struct ms_family *f, const struct host_map *hm)
{
	bool lin = hm->value.agg == AGG_LHIST;
	int64_t min = hm->lhist[0], max = hm->lhist[1], step = hm->lhist[2];
	f->nb = !lin ? 66 : step > 0 && max > min ? (int)((max - min) / step) + 2 : 2;
	f->le = calloc((size_t)f->nb, sizeof(*f->le));
	if (!f->le)
		return -1;
	for (int i = 0; i < f->nb - 1; i++) {
		if (lin)
			f->le[i] = i == 0 ? min - 1 : (int64_t)i * step + min - 1;
		else
			f->le[i] = i == 0 ? -1 : (int64_t)((1ull << (i - 1)) - 1);
	}
	return 0;
}

static char *help_of(const struct host_map *hm, enum ms_kind kind)
{
	char buf[160];
	const char *name = hm->name;
	if (kind == MS_INFO)
		snprintf(buf, sizeof(buf), "@%s: 1 per key, its value as the label \"value\"", name);
	else if (hm->value.kind != TY_AGG)
		snprintf(buf, sizeof(buf), "@%s: integer values", name);
	else if (hm->value.agg == AGG_LHIST)
		snprintf(buf, sizeof(buf), "@%s: lhist(%lld, %lld, %lld)", name,
			 (long long)hm->lhist[0], (long long)hm->lhist[1], (long long)hm->lhist[2]);
	else
		snprintf(buf, sizeof(buf), "@%s: %s()", name, agg_name(hm->value.agg));
	return strdup(buf);
}

/* 0 with *out, 1 when another map has its name, -1. */
static int family_new(struct metric_set *s, const struct host_map *hm, struct ms_family **out)
{
	char *name = ms_metric_name(hm->name);
	if (!name)
		return -1;
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].name, name)) {
			free(name);
			return 1;
		}
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 16;
		struct ms_family *v = realloc(s->f, (size_t)cap * sizeof(*v));
		if (!v) {
			free(name);
			return -1;
		}
		s->f = v;
		s->cap = cap;
	}
	struct ms_family *f = &s->f[s->n++];
	enum ms_kind kind = kind_of(hm);
	*f = (struct ms_family){ .name = name, .kind = kind, .nkeys = hm->nkeys };
	f->agg = hm->value.kind == TY_AGG ? hm->value.agg : AGG_NONE;
	f->is_unsigned = f->agg == AGG_COUNT ||
			 (hm->value.kind == TY_INT && !hm->value.is_signed);
	f->help = help_of(hm, kind);
	size_t n = strlen(hm->name) + 2;
	f->map = malloc(n);
	if (f->map)
		snprintf(f->map, n, "@%s", hm->name);
	if (!f->help || !f->map || (kind == MS_HISTOGRAM && buckets(f, hm)))
		return -1;
	*out = f;
	return 0;
}

/* Bytes of value (and key) the numbers are read from. */
static bool readable(const struct ms_family *f, const struct out_entries *e)
{
	size_t need = f->kind == MS_INFO ? 0
		    : f->kind == MS_SUMMARY || f->agg == AGG_AVG ? 16 : 8;
	return e->vs >= need && (f->kind != MS_HISTOGRAM || e->ks >= 8);
}

static struct ms_series *series_new(struct ms_family *f, size_t cap)
{
	if (!f->s) {
		f->s = calloc(cap + 1, sizeof(*f->s));
		if (!f->s)
			return NULL;
	}
	struct ms_series *x = &f->s[f->n++];
	if (f->nkeys && !(x->labels = calloc((size_t)f->nkeys, sizeof(char *))))
		return NULL;
	if (f->kind == MS_HISTOGRAM && !(x->bk = calloc((size_t)f->nb, sizeof(*x->bk))))
		return NULL;
	return x;
}

/* Adds a group's elements (n of them from first, es bytes apart) to x. */
static void fold(struct ms_family *f, struct ms_series *x, bool fresh,
		 const unsigned char *const *ents, size_t n, size_t ks)
{
	for (size_t i = 0; i < n; i++) {
		const unsigned char *e = ents[i], *v = e + ks;
		int64_t a = rd(v);
		switch (f->kind) {
		case MS_COUNTER:
			x->v = (int64_t)((uint64_t)x->v + (uint64_t)a);
			break;
		case MS_GAUGE:
			if (f->agg == AGG_AVG) {
				x->sum = (int64_t)((uint64_t)x->sum + (uint64_t)a);
				x->count += (uint64_t)rd(v + 8);
			} else if (fresh || (f->agg == AGG_MIN && a < x->v) ||
				   (f->agg == AGG_MAX && a > x->v)) {
				x->v = a;
			}
			break;
		case MS_SUMMARY:
			x->sum = (int64_t)((uint64_t)x->sum + (uint64_t)a);
			x->count += (uint64_t)rd(v + 8);
			break;
		case MS_HISTOGRAM: {
			uint64_t b = (uint64_t)rd(e + ks - 8);
			if (b < (uint64_t)f->nb) {
				x->bk[b] += (uint64_t)a;
				x->count += (uint64_t)a;
			}
			break;
		}
		case MS_INFO:
			break;
		}
		fresh = false;
	}
}

static int fill(struct ms_family *f, struct ms_series *x, const struct host_map *hm,
		const unsigned char *const *ents, size_t n, size_t ks)
{
	for (int j = 0; j < f->nkeys; j++)
		if (!(x->labels[j] = x->overflow ? strdup(MS_OVERFLOW) : printed(hm, j, ents[0])))
			return -1;
	if (f->kind == MS_INFO && !x->overflow && !(x->text = printed(hm, -1, ents[0] + ks)))
		return -1;
	fold(f, x, true, ents, n, ks);
	return 0;
}

int ms_add_map(struct metric_set *s, struct ms_caps *caps, const struct host_map *hm,
	       const struct out_entries *e)
{
	struct ms_family *f = NULL;
	int made = family_new(s, hm, &f);
	if (made)
		return made;
	if (!readable(f, e))
		return 0; /* not laid out as the map says: nothing to read */
	struct order o = { hm, f->kind == MS_HISTOGRAM ? e->ks - 8 : e->ks };
	size_t es = e->ks + e->vs, ng = 0;
	const unsigned char **ents = calloc(e->n + 1, sizeof(*ents));
	size_t *start = calloc(e->n + 2, sizeof(*start));
	bool *keep = calloc(e->n + 1, sizeof(*keep));
	const unsigned char **first = calloc(e->n + 1, sizeof(*first));
	int rc = ents && start && keep && first ? 0 : -1;
	for (size_t i = 0; !rc && i < e->n; i++)
		ents[i] = e->kv + i * es;
	if (!rc && e->n > 1)
		qsort_r(ents, e->n, sizeof(*ents), entry_cmp, &o);
	for (size_t i = 0; !rc && i < e->n; i++)
		if (i == 0 || memcmp(ents[i - 1], ents[i], o.prefix)) {
			first[ng] = ents[i];
			start[ng++] = i;
		}
	if (start)
		start[ng] = e->n;
	if (!rc)
		rc = admit(caps, f->map, &o, first, ng, keep);
	bool foldable = f->kind != MS_INFO && !(f->kind == MS_GAUGE && f->agg == AGG_NONE);
	struct ms_series *over = NULL;
	for (size_t g = 0; !rc && g < ng; g++) {
		size_t n = start[g + 1] - start[g];
		if (keep[g]) {
			struct ms_series *x = series_new(f, ng);
			rc = x ? fill(f, x, hm, ents + start[g], n, e->ks) : -1;
			continue;
		}
		f->dropped++;
		if (!foldable)
			continue;
		if (over) {
			fold(f, over, false, ents + start[g], n, e->ks);
		} else if ((over = series_new(f, ng))) {
			over->overflow = true;
			rc = fill(f, over, hm, ents + start[g], n, e->ks);
		} else {
			rc = -1;
		}
	}
	/* bpftrace keeps a count() without keys in an array: it reads 0 from the start */
	if (!rc && !e->n && !hm->nkeys && f->agg == AGG_COUNT)
		rc = series_new(f, 1) ? 0 : -1;
	for (size_t i = 0; !rc && i < f->n; i++)
		if (f->agg == AGG_AVG)
			f->s[i].v = div_or_0(f->s[i].sum, (int64_t)f->s[i].count);
	free(ents);
	free(start);
	free(keep);
	free(first);
	return rc;
}

void ms_free(struct metric_set *s)
{
	for (int i = 0; i < s->n; i++) {
		struct ms_family *f = &s->f[i];
		for (size_t k = 0; f->s && k < f->n; k++) {
			struct ms_series *x = &f->s[k];
			for (int j = 0; x->labels && j < f->nkeys; j++)
				free(x->labels[j]);
			free(x->labels);
			free(x->bk);
			free(x->text);
		}
		/* a series whose making failed halfway is counted in n */
		free(f->s);
		free(f->name);
		free(f->help);
		free(f->map);
		free(f->le);
	}
	free(s->f);
	*s = (struct metric_set){ 0 };
}

void ms_caps_free(struct ms_caps *c)
{
	for (int i = 0; i < c->n; i++) {
		free(c->m[i].map);
		free(c->m[i].keys);
	}
	free(c->m);
	c->m = NULL;
	c->n = 0;
}
