/* Map printing in bpftrace 0.17's text format (output.h). What it does,
 * from bpftrace's print_map/print_map_hist/print_map_stats:
 *   count, sum, int, min, max maps: sorted by value ascending, one
 *     "@m[k]: v" line each, then nothing; an empty map prints "\n";
 *   string values (and other kinds): sorted by key, same lines;
 *   hist, lhist: sorted by the key's total count, "@m[k]: \n", the
 *     bars, "\n" after each key; an empty map prints "\n";
 *   avg, stats: sorted by the average, lines, then "\n"; an empty map
 *     prints "\n\n". stats ignores top and div.
 * bpftrace breaks ties by the kernel's hash order; gpux by key. */
#include "output.h"
#include "bytes.h"
#include "out_syms.h"
#include "host_cgroup.h"

#include <stdlib.h>
#include <string.h>

struct grp {
	const unsigned char *key; /* prefix bytes (no bucket) */
	const unsigned char *val; /* value bytes (non-bucket maps) */
	uint64_t *bk;             /* bucket counts (bucket maps) */
	int64_t sort;
};

struct coll {
	unsigned char *kv; /* n entries of ks + vs bytes */
	size_t n, cap, ks, vs;
};

static int collect(void *arg, const void *key, const void *value)
{
	struct coll *c = arg;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		unsigned char *kv = realloc(c->kv, cap * (c->ks + c->vs));
		if (!kv)
			return -1;
		c->kv = kv;
		c->cap = cap;
	}
	unsigned char *e = c->kv + c->n++ * (c->ks + c->vs);
	memcpy(e, key, c->ks);
	memcpy(e + c->ks, value, c->vs);
	return 0;
}

/* qsort has no context argument: the map being sorted. */
static const struct host_map *cur;
static size_t cur_prefix;
static bool cur_unsigned;

static int cmp_u(uint64_t a, uint64_t b) { return (a > b) - (a < b); }
static int cmp_i(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* bpftrace's sort_by_key: the first component first, integers unsigned. */
static int key_cmp(const unsigned char *x, const unsigned char *y)
{
	for (int j = 0; j < cur->nkeys; j++) {
		const struct host_key *k = &cur->keys[j];
		int c = k->type.kind == TY_STR
			? strncmp((const char *)x + k->offset, (const char *)y + k->offset, k->size)
			: cmp_u((uint64_t)rd64(x + k->offset), (uint64_t)rd64(y + k->offset));
		if (c)
			return c;
	}
	return memcmp(x, y, cur_prefix);
}

static int entry_prefix_cmp(const void *a, const void *b)
{
	int c = memcmp(a, b, cur_prefix);
	if (c)
		return c;
	return cmp_u((uint64_t)rd64((const unsigned char *)a + cur_prefix),
		     (uint64_t)rd64((const unsigned char *)b + cur_prefix));
}

static int grp_by_key(const void *a, const void *b)
{
	return key_cmp(((const struct grp *)a)->key, ((const struct grp *)b)->key);
}

static int grp_by_value(const void *a, const void *b)
{
	const struct grp *x = a, *y = b;
	int c = cur_unsigned ? cmp_u((uint64_t)x->sort, (uint64_t)y->sort)
			     : cmp_i(x->sort, y->sort);
	return c ? c : key_cmp(x->key, y->key);
}

/* hist/stats: bpftrace starts from a std::map of the raw key bytes, and
 * std::sort keeps that order among small sets of equal totals. */
static int grp_by_total(const void *a, const void *b)
{
	const struct grp *x = a, *y = b;
	int c = cmp_i(x->sort, y->sort);
	return c ? c : memcmp(x->key, y->key, cur_prefix);
}

/* cgroup_path()'s text for id, as a json string where json */
static void put_cgroup_path(FILE *out, struct type t, uint64_t id, bool json)
{
	char *p = host_cgroup_path(id, t.name);
	if (json)
		out_json_str(out, p ? p : "", p ? strlen(p) : 0);
	else
		fputs(p ? p : "", out);
	free(p);
}

static void put_sym(FILE *out, struct type t, const unsigned char *p, int indent)
{
	char *text = out_sym_text(t, p, indent);
	if (text)
		fputs(text, out);
	free(text);
}

/* Key component j: strings raw, integers decimal, pointers in hex. */
void out_map_key_part(FILE *out, const struct host_map *hm, int j, const unsigned char *k)
{
	const struct host_key *hk = &hm->keys[j];
	char name[256];
	if (hk->type.kind == TY_STR)
		fprintf(out, "%.*s", (int)hk->size, (const char *)k + hk->offset);
	else if (hk->type.kind == TY_USERNAME)
		fputs(out_username(rd64(k + hk->offset), name, sizeof(name)), out);
	else if (hk->type.kind == TY_STACK || hk->type.kind == TY_KSYM ||
		 hk->type.kind == TY_USYM)
		put_sym(out, hk->type, k + hk->offset, 4);
	else if (hk->type.kind == TY_BUF && hk->size >= BUF_SIZE)
		out_buf(out, k + hk->offset);
	else if (hk->type.kind == TY_MACADDR)
		fputs(out_macaddr(rd64(k + hk->offset), name, sizeof(name)), out);
	else if (hk->type.kind == TY_ERRNO)
		fputs(out_strerror((int64_t)rd64(k + hk->offset)), out);
	else if (hk->type.kind == TY_CGROUP_PATH)
		put_cgroup_path(out, hk->type, rd64(k + hk->offset), false);
	else if (hk->type.kind == TY_INET && hk->size >= INET_SIZE)
		fputs(out_inet(k + hk->offset, name, sizeof(name)), out);
	else if (hk->type.kind == TY_TIMESTAMP)
		fputs(out_timestamp(hk->type.name, rd64(k + hk->offset), name, sizeof(name)), out);
	else if (hk->type.kind == TY_RECORD || hk->type.kind == TY_ARRAY ||
		 hk->type.kind == TY_POINTER)
		out_ckey(out, hk->type, k + hk->offset);
	else if (hk->type.kind == TY_INT && !hk->type.is_signed)
		fprintf(out, "%llu", (unsigned long long)rd64(k + hk->offset));
	else
		fprintf(out, "%lld", (long long)rd64(k + hk->offset));
}

/* The key's components joined by sep. */
static void put_key_parts(FILE *out, const struct host_map *hm, const unsigned char *k,
			  const char *sep)
{
	for (int j = 0; j < hm->nkeys; j++) {
		if (j)
			fputs(sep, out);
		out_map_key_part(out, hm, j, k);
	}
}

static void put_key(FILE *out, const struct host_map *hm, const unsigned char *k)
{
	fprintf(out, "@%s", hm->name);
	if (!hm->nkeys)
		return;
	fputc('[', out);
	put_key_parts(out, hm, k, ", ");
	fputc(']', out);
}

/* json: the key's components joined by "," as a string, then ": " */
static int put_json_key(FILE *out, const struct host_map *hm, const unsigned char *k)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	if (!m)
		return -1;
	put_key_parts(m, hm, k, ",");
	int rc = fclose(m) ? -1 : 0;
	if (!rc) {
		out_json_str(out, buf, n);
		fputs(": ", out);
	}
	free(buf);
	return rc;
}

/* bpftrace's hist_index_label: powers of two with K/M/G/T suffixes. */
static void hist_label(char *buf, size_t len, int power)
{
	static const char sfx[] = "KMGT";
	int s = power >= 40 ? 4 : power / 10;
	power -= 10 * s;
	snprintf(buf, len, s ? "%lld%c" : "%lld", 1ll << power, sfx[s ? s - 1 : 0]);
}

static void lhist_label(char *buf, size_t len, int64_t n)
{
	if (n != 0 && n % 1048576 == 0)
		snprintf(buf, len, "%lldM", (long long)(n / 1048576));
	else if (n != 0 && n % 1024 == 0)
		snprintf(buf, len, "%lldK", (long long)(n / 1024));
	else
		snprintf(buf, len, "%lld", (long long)n);
}

static void put_bars(FILE *out, const struct host_map *hm, const uint64_t *bk, int nb,
		     uint64_t div)
{
	int lo = -1, hi = -1;
	uint64_t maxv = 0;
	for (int i = 0; i < nb; i++) {
		if (bk[i]) {
			lo = lo < 0 ? i : lo;
			hi = i;
		}
		maxv = bk[i] > maxv ? bk[i] : maxv;
	}
	bool lin = hm->value.agg == AGG_LHIST;
	int64_t min = hm->lhist[0], max = hm->lhist[1], step = hm->lhist[2];
	for (int i = lo; hi >= 0 && i <= hi; i++) {
		char hdr[80], a[32], b[32];
		if (lin && i == 0) {
			lhist_label(a, sizeof(a), min);
			snprintf(hdr, sizeof(hdr), "(..., %s)", a);
		} else if (lin && i == nb - 1) {
			lhist_label(a, sizeof(a), max);
			snprintf(hdr, sizeof(hdr), "[%s, ...)", a);
		} else if (lin) {
			lhist_label(a, sizeof(a), (i - 1) * step + min);
			lhist_label(b, sizeof(b), i * step + min);
			snprintf(hdr, sizeof(hdr), "[%s, %s)", a, b);
		} else if (i <= 2) {
			snprintf(hdr, sizeof(hdr), "%s", i == 0 ? "(..., 0)" : i == 1 ? "[0]" : "[1]");
		} else {
			hist_label(a, sizeof(a), i - 2);
			hist_label(b, sizeof(b), i - 1);
			snprintf(hdr, sizeof(hdr), "[%s, %s)", a, b);
		}
		/* bpftrace computes the bar in float, counts undivided */
		int w = (int)((float)bk[i] / (float)maxv * 52);
		char bar[53];
		memset(bar, '@', (size_t)w);
		bar[w] = '\0';
		fprintf(out, "%-16s%8llu |%-52s|\n", hdr,
			(unsigned long long)(lin || !div ? bk[i] : bk[i] / div), bar);
	}
}

static void put_value(FILE *out, const struct host_map *hm, const unsigned char *v,
		      uint64_t div)
{
	enum agg_kind agg = hm->value.kind == TY_AGG ? hm->value.agg : AGG_NONE;
	int64_t x = rd64(v);
	char name[256];
	if (hm->value.kind == TY_TUPLE) {
		out_tuple(out, false, hm->value, v);
	} else if (hm->value.kind == TY_RECORD || hm->value.kind == TY_ARRAY) {
		out_cvalue(out, false, hm->value, v);
	} else if (hm->value.kind == TY_USERNAME) {
		fputs(out_username((uint64_t)x, name, sizeof(name)), out);
	} else if (hm->value.kind == TY_STACK || hm->value.kind == TY_KSYM ||
		   hm->value.kind == TY_USYM) {
		put_sym(out, hm->value, v, 8);
	} else if (hm->value.kind == TY_BUF && hm->value_str >= BUF_SIZE) {
		out_buf(out, v);
	} else if (hm->value.kind == TY_INET && hm->value_str >= INET_SIZE) {
		fputs(out_inet(v, name, sizeof(name)), out);
	} else if (hm->value.kind == TY_MACADDR) {
		fputs(out_macaddr((uint64_t)x, name, sizeof(name)), out);
	} else if (hm->value.kind == TY_ERRNO) {
		fputs(out_strerror(x), out);
	} else if (hm->value.kind == TY_CGROUP_PATH) {
		put_cgroup_path(out, hm->value, (uint64_t)x, false);
	} else if (hm->value.kind == TY_TIMESTAMP) {
		fputs(out_timestamp(hm->value.name, (uint64_t)x, name, sizeof(name)), out);
	} else if (hm->value_str) {
		fprintf(out, "%.*s", (int)hm->value_str, (const char *)v);
	} else if (agg == AGG_STATS) {
		int64_t n = rd64(v + 8);
		fprintf(out, "count %lld, average %lld, total %lld", (long long)n,
			(long long)sdiv64(x, n), (long long)x);
	} else if (agg == AGG_AVG) {
		int64_t n = rd64(v + 8);
		fprintf(out, "%lld", (long long)sdiv64(sdiv64(x, n), (int64_t)div));
	} else if (agg == AGG_COUNT || (hm->value.kind == TY_INT && !hm->value.is_signed)) {
		fprintf(out, "%llu", (unsigned long long)(div ? (uint64_t)x / div : 0));
	} else {
		fprintf(out, "%lld", (long long)sdiv64(x, (int64_t)div));
	}
}

void out_map_value(FILE *out, const struct host_map *hm, const unsigned char *v)
{
	put_value(out, hm, v, 1);
}

/* json hist/lhist: one {"min", "max", "count"} object per bucket from
 * the first to the last nonzero one, as bpftrace 0.17's JsonOutput. */
static void put_json_bars(FILE *out, const struct host_map *hm, const uint64_t *bk,
			  int nb, uint64_t div)
{
	int lo = -1, hi = -1;
	for (int i = 0; i < nb; i++)
		if (bk[i]) {
			lo = lo < 0 ? i : lo;
			hi = i;
		}
	bool lin = hm->value.agg == AGG_LHIST;
	int64_t min = hm->lhist[0], max = hm->lhist[1], step = hm->lhist[2];
	fputc('[', out);
	for (int i = lo; hi >= 0 && i <= hi; i++) {
		fputs(i > lo ? ", {" : "{", out);
		if (lin && i == 0) {
			fprintf(out, "\"max\": %lld, ", (long long)(min - 1));
		} else if (lin && i == nb - 1) {
			fprintf(out, "\"min\": %lld, ", (long long)max);
		} else if (lin) {
			fprintf(out, "\"min\": %lld, \"max\": %lld, ",
				(long long)((i - 1) * step + min), (long long)(i * step + min - 1));
		} else if (i <= 2) {
			fputs(i == 0 ? "\"max\": -1, " : i == 1 ? "\"min\": 0, \"max\": 0, "
				: "\"min\": 1, \"max\": 1, ", out);
		} else {
			/* bpftrace 0.17 computes the bounds as a 32-bit int 1 << n
			 * (x86 masks the count): [2G, 4G) prints min -2^31, max 0 */
			int32_t low = (int32_t)(1u << ((i - 2) & 31));
			int32_t high = (int32_t)((1u << ((i - 1) & 31)) - 1);
			fprintf(out, "\"min\": %d, \"max\": %d, ", low, high);
		}
		fprintf(out, "\"count\": %llu}",
			(unsigned long long)(lin || !div ? bk[i] : bk[i] / div));
	}
	fputc(']', out);
}

static void put_json_value(FILE *out, const struct host_map *hm, const unsigned char *v,
			   uint64_t div)
{
	enum agg_kind agg = hm->value.kind == TY_AGG ? hm->value.agg : AGG_NONE;
	char name[256];
	if (hm->value.kind == TY_TUPLE) {
		out_tuple(out, true, hm->value, v);
	} else if (hm->value.kind == TY_RECORD || hm->value.kind == TY_ARRAY) {
		out_cvalue(out, true, hm->value, v);
	} else if (hm->value.kind == TY_USERNAME) {
		out_username(rd64(v), name, sizeof(name));
		out_json_str(out, name, strlen(name));
	} else if (hm->value.kind == TY_STACK || hm->value.kind == TY_KSYM ||
		   hm->value.kind == TY_USYM) {
		char *text = out_sym_text(hm->value, v, 8);
		if (text)
			out_json_str(out, text, strlen(text));
		free(text);
	} else if (hm->value.kind == TY_INET && hm->value_str >= INET_SIZE) {
		out_inet(v, name, sizeof(name));
		out_json_str(out, name, strlen(name));
	} else if (hm->value.kind == TY_CGROUP_PATH) {
		put_cgroup_path(out, hm->value, rd64(v), true);
	} else if (hm->value.kind == TY_MACADDR || hm->value.kind == TY_TIMESTAMP ||
		   hm->value.kind == TY_ERRNO) {
		/* strings: bpftrace 0.17 writes them bare, which is not json */
		if (hm->value.kind == TY_MACADDR)
			out_macaddr(rd64(v), name, sizeof(name));
		else if (hm->value.kind == TY_ERRNO)
			snprintf(name, sizeof(name), "%s", out_strerror((int64_t)rd64(v)));
		else
			out_timestamp(hm->value.name, rd64(v), name, sizeof(name));
		out_json_str(out, name, strlen(name));
	} else if (hm->value.kind == TY_BUF && hm->value_str >= BUF_SIZE) {
		char *text = NULL;
		size_t n = 0;
		FILE *m = open_memstream(&text, &n);
		if (m) {
			out_buf(m, v);
			if (!fclose(m))
				out_json_str(out, text, n);
			free(text);
		}
	} else if (hm->value_str) {
		out_json_str(out, (const char *)v, strnlen((const char *)v, hm->value_str));
	} else if (agg == AGG_STATS) {
		int64_t x = rd64(v), n = rd64(v + 8);
		fprintf(out, "{\"count\": %lld, \"average\": %lld, \"total\": %lld}",
			(long long)n, (long long)sdiv64(x, n), (long long)x);
	} else {
		put_value(out, hm, v, div);
	}
}

/* Groups entries (sorted by prefix) into one grp per key. */
static size_t make_groups(const struct host_map *hm, struct coll *c, struct grp *g,
			  uint64_t *bk, int nb)
{
	size_t ng = 0, es = c->ks + c->vs;
	for (size_t i = 0; i < c->n; i++) {
		const unsigned char *e = c->kv + i * es;
		if (!hm->bucket) {
			g[ng++] = (struct grp){ e, e + c->ks, NULL, rd64(e + c->ks) };
			continue;
		}
		if (!ng || memcmp(g[ng - 1].key, e, cur_prefix)) {
			g[ng] = (struct grp){ e, NULL, bk + ng * (size_t)nb, 0 };
			ng++;
		}
		uint64_t b = (uint64_t)rd64(e + cur_prefix), n = (uint64_t)rd64(e + c->ks);
		if (b < (uint64_t)nb) {
			g[ng - 1].bk[b] = n;
			/* wraps as the counts it adds do (values from a traced program) */
			g[ng - 1].sort = (int64_t)((uint64_t)g[ng - 1].sort + n);
		}
	}
	return ng;
}

int out_map_entries(FILE *out, bool json, const struct host_map *hm,
		    const struct out_entries *e, uint64_t top, uint64_t div)
{
	struct coll c = { .kv = e->kv, .n = e->n, .ks = e->ks, .vs = e->vs };
	enum agg_kind agg = hm->value.kind == TY_AGG ? hm->value.agg : AGG_NONE;
	/* bpftrace 0.17 keeps a count() without keys in an array: it always
	 * has a value, 0 before the first count and after clear() or delete() */
	unsigned char *zero = NULL;
	if (!c.n && !hm->nkeys && agg == AGG_COUNT) {
		if (c.vs < 8)
			c.vs = 8;
		zero = calloc(1, c.ks + c.vs);
		if (!zero)
			return -1;
		c.kv = zero;
		c.n = 1;
	}
	int nb = agg == AGG_LHIST ? (int)((hm->lhist[1] - hm->lhist[0]) / hm->lhist[2]) + 2 : 66;
	cur = hm;
	cur_prefix = hm->bucket ? c.ks - 8 : c.ks;
	struct grp *g = NULL;
	uint64_t *bk = NULL;
	int rc = 0;
	if (c.n) {
		g = calloc(c.n, sizeof(*g));
		bk = hm->bucket ? calloc(c.n * (size_t)nb, sizeof(*bk)) : NULL;
		rc = !g || (hm->bucket && !bk) ? -1 : 0;
	}
	if (rc) {
		free(g);
		free(bk);
		free(zero);
		return -1;
	}
	if (hm->bucket && c.n > 1)
		qsort(c.kv, c.n, c.ks + c.vs, entry_prefix_cmp);
	size_t ng = make_groups(hm, &c, g, bk, nb);
	bool stats = agg == AGG_AVG || agg == AGG_STATS;
	for (size_t i = 0; stats && i < ng; i++) {
		int64_t n = rd64(g[i].val + 8);
		g[i].sort = sdiv64(rd64(g[i].val), n);
	}
	cur_unsigned = agg == AGG_COUNT || agg == AGG_MAX ||
		       (hm->value.kind == TY_INT && !hm->value.is_signed);
	int (*order)(const void *, const void *) = grp_by_value;
	if (hm->bucket || stats)
		order = grp_by_total;
	else if (hm->value_str || (hm->value.kind != TY_INT && hm->value.kind != TY_AGG))
		order = grp_by_key;
	if (ng > 1) /* qsort must not see an empty map's NULL (UBSan) */
		qsort(g, ng, sizeof(*g), order);
	if (!div)
		div = 1;
	if (agg == AGG_STATS)
		top = 0, div = 1; /* bpftrace applies neither to stats() */
	size_t skip = top && ng > top ? ng - (size_t)top : 0;
	if (json && ng) {
		/* bpftrace prints nothing at all for an empty map */
		const char *type = hm->bucket ? "hist" : stats ? "stats" : "map";
		/* map names are identifiers: nothing to escape */
		fprintf(out, "{\"type\": \"%s\", \"data\": {\"@%s\": %s", type,
			hm->name, hm->nkeys ? "{" : "");
		for (size_t i = skip; i < ng; i++) {
			if (i > skip)
				fputs(", ", out);
			if (hm->nkeys && put_json_key(out, hm, g[i].key))
				rc = -1;
			if (hm->bucket)
				put_json_bars(out, hm, g[i].bk, nb, div);
			else
				put_json_value(out, hm, g[i].val, div);
		}
		fputs(hm->nkeys ? "}}}\n" : "}}\n", out);
	}
	for (size_t i = skip; !json && i < ng; i++) {
		put_key(out, hm, g[i].key);
		fputs(": ", out);
		if (hm->bucket) {
			fputc('\n', out);
			put_bars(out, hm, g[i].bk, nb, div);
			fputc('\n', out);
		} else {
			put_value(out, hm, g[i].val, div);
			fputc('\n', out);
		}
	}
	if (!json && stats)
		fputs(ng ? "\n" : "\n\n", out);
	else if (!json && !ng)
		fputc('\n', out);
	free(g);
	free(bk);
	free(zero);
	return rc;
}

int out_map_read(struct vm *vm, const struct host_map *hm, struct out_entries *e)
{
	*e = (struct out_entries){ 0 };
	struct vm_map *m = vm_map_by_name(vm, hm->sym);
	if (!m)
		return -1;
	struct vm_map_info in;
	vm_map_info(vm, m, &in);
	struct coll c = { .ks = in.key_size, .vs = in.value_size };
	int rc = vm_map_foreach(vm, m, collect, &c);
	if (rc) {
		free(c.kv);
		return -1;
	}
	*e = (struct out_entries){ c.kv, c.n, c.ks, c.vs };
	return 0;
}

int out_map(FILE *out, bool json, struct vm *vm, const struct host_map *hm,
	    uint64_t top, uint64_t div)
{
	struct out_entries e;
	int rc = out_map_read(vm, hm, &e);
	if (rc == 0)
		rc = out_map_entries(out, json, hm, &e, top, div);
	free(e.kv);
	return rc;
}
