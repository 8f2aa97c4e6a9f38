/* The GPU test cases: each a gpux program, a launch shape, and a check
 * that derives the exact expected maps (or printf records) from that
 * shape. Hardware ids (sm) and warp indices are recorded by the test kernel at the
 * call, so those cases are exact too. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpux_dev.h"
#include "harness.h"

#define T(r) ((uint64_t)(r)->tc->grid * (r)->tc->block)

int fail(struct run *r, const char *fmt, ...)
{
	if (r->msg[0])
		return 1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	return 1;
}

/* How a map is written: "@" for the anonymous one, else "@name". */
static const char *nm(const char *name)
{
	static char buf[80];
	snprintf(buf, sizeof(buf), "@%s", strcmp(name, "@") ? name : "");
	return buf;
}

static const struct map_data *map_by_name(struct run *r, const char *name)
{
	for (int i = 0; i < r->nmaps; i++)
		if (!strcmp(r->maps[i].meta.name, name))
			return &r->maps[i];
	fail(r, "no map %s in device.bpf", nm(name));
	return NULL;
}

/* The value words of a keyless map (@m): one entry, key 0. */
static const uint64_t *single(struct run *r, const char *name)
{
	const struct map_data *m = map_by_name(r, name);
	if (!m)
		return NULL;
	if (m->n != 1) {
		fail(r, "%s: %u entries, want 1", nm(name), m->n);
		return NULL;
	}
	if (m->keys[0] != 0) {
		fail(r, "%s: key %llu, want 0", nm(name), (unsigned long long)m->keys[0]);
		return NULL;
	}
	return m->vals;
}

static int expect(struct run *r, const char *what, uint64_t got, uint64_t want)
{
	if (got == want)
		return 0;
	return fail(r, "%s = %lld, want %lld", what, (long long)got, (long long)want);
}

/* A one-word-key map must hold exactly key kmin + i -> want[i] for every
 * nonzero want[i] (the driver already refused duplicate keys). */
static int check_dense(struct run *r, const char *name, uint64_t kmin,
		       const uint64_t *want, uint64_t n)
{
	const struct map_data *m = map_by_name(r, name);
	if (!m)
		return 1;
	uint64_t nexp = 0;
	for (uint64_t i = 0; i < n; i++)
		nexp += want[i] != 0;
	if (m->meta.key_size != 8 || m->meta.value_size != 8)
		return fail(r, "%s: key/value size %u/%u, want 8/8", nm(name),
			    m->meta.key_size, m->meta.value_size);
	for (uint32_t i = 0; i < m->n; i++) {
		uint64_t k = m->keys[i];
		if (k < kmin || k - kmin >= n || want[k - kmin] == 0)
			return fail(r, "%s: unexpected key %llu (value %llu)", nm(name),
				    (unsigned long long)k, (unsigned long long)m->vals[i]);
		if (m->vals[i] != want[k - kmin])
			return fail(r, "%s[%llu] = %llu, want %llu", nm(name),
				    (unsigned long long)k, (unsigned long long)m->vals[i],
				    (unsigned long long)want[k - kmin]);
	}
	if (m->n != nexp)
		return fail(r, "%s: %u entries, want %llu", nm(name), m->n,
			    (unsigned long long)nexp);
	return 0;
}

/* --- @[kernel] = count(), @sm[sm] = count(), keys by lane --- */

static int chk_count_kernel(struct run *r)
{
	uint64_t want = T(r);
	return check_dense(r, "@", r->kernel_id, &want, 1);
}

static int chk_count_sm(struct run *r)
{
	uint64_t want[1024] = { 0 };
	for (uint64_t t = 0; t < T(r); t++) {
		if (r->smid[t] >= 1024)
			return fail(r, "thread %llu: %%smid %u", (unsigned long long)t,
				    r->smid[t]);
		want[r->smid[t]]++;
	}
	const struct map_data *m = map_by_name(r, "sm");
	for (uint32_t i = 0; m && i < m->n; i++)
		if (m->keys[i] >= (uint64_t)r->nsm)
			return fail(r, "@sm key %llu >= %d SMs", (unsigned long long)m->keys[i],
				    r->nsm);
	return check_dense(r, "sm", 0, want, 1024);
}

static int chk_keys_mod5(struct run *r)
{
	uint64_t want[5] = { 0 };
	for (uint64_t t = 0; t < T(r); t++)
		want[(t % r->tc->block) % 5]++;
	return check_dense(r, "k", 0, want, 5);
}

static int chk_keys_distinct(struct run *r)
{
	uint64_t *want = malloc(T(r) * sizeof(*want));
	for (uint64_t t = 0; t < T(r); t++)
		want[t] = 1;
	int rc = check_dense(r, "k", 0, want, T(r));
	free(want);
	return rc;
}

/* --- gdev:access --- */

static int chk_pages(struct run *r)
{
	uint64_t s = r->tc->stride, first = r->base >> 21;
	uint64_t n = ((r->base + (T(r) - 1) * s) >> 21) - first + 1;
	uint64_t *want = calloc(n, sizeof(*want));
	for (uint64_t t = 0; t < T(r); t++)
		want[((r->base + t * s) >> 21) - first]++;
	int rc = check_dense(r, "pages", first, want, n);
	free(want);
	return rc;
}

static int chk_store_bytes(struct run *r)
{
	uint64_t want = 0;
	for (uint64_t t = 0; t < T(r); t++)
		want += (t / 32) % 2 == 0 ? 4 : 0; /* stores: even global warps */
	return check_dense(r, "bytes", r->kernel_id, &want, 1);
}

/* prefetch() is a hint: the count beside it stays exact. */
static int chk_prefetch_count(struct run *r)
{
	const uint64_t *v = single(r, "n");
	return !v || expect(r, "@n", v[0], T(r));
}

/* --- hist, lhist, predicates --- */

static unsigned hist_bucket(int64_t v)
{
	if (v < 0)
		return 0;
	if (v == 0)
		return 1;
	unsigned k = 0;
	while (((uint64_t)v >> k) > 1)
		k++;
	return 2 + k;
}

static int check_buckets(struct run *r, const char *name, const uint64_t *want,
			 unsigned n)
{
	const struct map_data *m = map_by_name(r, name);
	const uint64_t *v = single(r, name);
	if (!v)
		return 1;
	if (m->meta.value_size != n * 8)
		return fail(r, "%s: value_size %u, want %u", nm(name), m->meta.value_size,
			    n * 8);
	for (unsigned b = 0; b < n; b++)
		if (v[b] != want[b])
			return fail(r, "%s bucket %u = %llu, want %llu", nm(name), b,
				    (unsigned long long)v[b], (unsigned long long)want[b]);
	return 0;
}

static int chk_hist_tid(struct run *r)
{
	uint64_t want[GPUX_HIST_BUCKETS] = { 0 };
	for (uint64_t t = 0; t < T(r); t++)
		want[hist_bucket((int64_t)(t % r->tc->block))]++;
	return check_buckets(r, "h", want, GPUX_HIST_BUCKETS);
}

static int chk_lhist_warp(struct run *r)
{
	const struct map_data *m = map_by_name(r, "w");
	if (!m)
		return 1;
	unsigned n = m->meta.value_size / 8;
	int64_t lo = m->meta.lhist_min, step = m->meta.lhist_step;
	if (lo != 0 || step != 1 || m->meta.lhist_max != 32)
		return fail(r, "@w bounds %lld..%lld/%lld from device.bpf, want 0..32/1",
			    (long long)lo, (long long)m->meta.lhist_max, (long long)step);
	uint64_t want[64] = { 0 };
	if (n > 64)
		return fail(r, "@w: %u buckets", n);
	for (uint64_t t = 0; t < T(r); t++) {
		int64_t v = r->warpid[t];
		uint64_t k = (uint64_t)(v - lo) / (uint64_t)step;
		want[v < lo ? 0 : k < n - 2 ? k + 1 : n - 1]++;
	}
	return check_buckets(r, "w", want, n);
}

static int chk_pred_mod3(struct run *r)
{
	uint64_t want = 0;
	for (uint64_t t = 0; t < T(r); t++)
		want += (t % r->tc->block) % 3 == 0;
	const uint64_t *v = single(r, "c");
	return !v || expect(r, "@c", v[0], want);
}

/* count, sum, min, max, avg, hist in one probe. */
static int chk_aggs(struct run *r)
{
	uint64_t sum = 0;
	uint64_t hist[GPUX_HIST_BUCKETS] = { 0 };
	for (uint64_t t = 0; t < T(r); t++) {
		sum += t % r->tc->block;
		hist[hist_bucket((int64_t)(t % r->tc->block))]++;
	}
	const uint64_t *c = single(r, "c"), *s = single(r, "s");
	const uint64_t *mn = single(r, "mn"), *mx = single(r, "mx");
	const uint64_t *a = single(r, "a");
	if (!c || !s || !mn || !mx || !a)
		return 1;
	return expect(r, "@c", c[0], T(r)) || expect(r, "@s", s[0], sum) ||
	       expect(r, "@mn", mn[0], 1000) || expect(r, "@mx", mx[0], T(r) - 1) ||
	       expect(r, "@a.count", a[0], T(r)) || expect(r, "@a.sum", a[1], sum) ||
	       check_buckets(r, "h", hist, GPUX_HIST_BUCKETS);
}

static int chk_divergent(struct run *r)
{
	const uint64_t *c = single(r, "c"), *s = single(r, "s");
	uint64_t g = r->tc->grid;
	return !c || !s || expect(r, "@c", c[0], 7 * g) ||
	       expect(r, "@s", s[0], 21 * g); /* 0 + 1 + ... + 6 per block */
}

/* --- printf: one record per warp, every active lane's arguments --- */

static uint32_t present(unsigned block, unsigned warp)
{
	unsigned n = block - warp * 32;
	return n >= 32 ? 0xffffffffu : (1u << n) - 1;
}

/* Walk the ring; per lane, call row(r, lane, args) with its argument
 * words. The ring never wraps here (the driver sizes it). */
static int check_ring(struct run *r, unsigned nargs,
		      int (*rec)(struct run *r, uint32_t mask, const uint64_t *args))
{
	uint64_t off = 0, nrec = 0;
	unsigned wpb = (r->tc->block + 31) / 32;
	if (r->ring_drops || r->ring_head > r->ring_size)
		return fail(r, "ring: head %llu drops %llu", (unsigned long long)r->ring_head,
			    (unsigned long long)r->ring_drops);
	while (off < r->ring_head) {
		struct gpux_rec_hdr h;
		memcpy(&h, r->ring + off, sizeof(h));
		uint64_t len = (16 + (uint64_t)__builtin_popcount(h.mask) * h.arg_size + 15) & ~15ull;
		if (h.len != len || h.fmt != 0 || h.arg_size != 8 * nargs || !h.mask)
			return fail(r, "record at %llu: len %u (want %llu) fmt %u mask %#x arg_size %u",
				    (unsigned long long)off, h.len, (unsigned long long)len,
				    h.fmt, h.mask, h.arg_size);
		uint64_t args[32 * 4];
		memcpy(args, r->ring + off + 16, (size_t)__builtin_popcount(h.mask) * h.arg_size);
		if (rec(r, h.mask, args))
			return 1;
		off += len;
		nrec++;
	}
	if (off != r->ring_head)
		return fail(r, "records end at %llu, head %llu", (unsigned long long)off,
			    (unsigned long long)r->ring_head);
	return expect(r, "records", nrec, (uint64_t)r->tc->grid * wpb);
}

static uint64_t *seen; /* per thread: how often its value was printed */

static int rec_tid(struct run *r, uint32_t mask, const uint64_t *args)
{
	uint64_t warp = args[0] / 32;
	unsigned i = 0;
	if (mask != present(r->tc->block, (unsigned)warp))
		return fail(r, "record of warp %llu: mask %#x", (unsigned long long)warp, mask);
	for (unsigned lane = 0; lane < 32; lane++) {
		if (!(mask >> lane & 1))
			continue;
		uint64_t v = args[i++];
		if (v != warp * 32 + lane || v >= r->tc->block)
			return fail(r, "warp %llu lane %u printed %llu", (unsigned long long)warp,
				    lane, (unsigned long long)v);
		seen[v]++;
	}
	return 0;
}

static int chk_printf_tid(struct run *r)
{
	seen = calloc(r->tc->block, sizeof(*seen));
	int rc = check_ring(r, 1, rec_tid);
	for (unsigned t = 0; !rc && t < r->tc->block; t++)
		if (seen[t] != r->tc->grid)
			rc = fail(r, "threadIdx.x %u printed %llu times, want %u", t,
				  (unsigned long long)seen[t], r->tc->grid);
	free(seen);
	return rc;
}

static int rec_gtid_lane(struct run *r, uint32_t mask, const uint64_t *args)
{
	unsigned b = r->tc->block, i = 0;
	uint64_t blk = args[0] / b, warp = args[0] % b / 32;
	if (args[0] >= T(r) || mask != present(b, (unsigned)warp))
		return fail(r, "record of gtid %llu: mask %#x", (unsigned long long)args[0], mask);
	for (unsigned lane = 0; lane < 32; lane++) {
		if (!(mask >> lane & 1))
			continue;
		uint64_t g = args[2 * i], l = args[2 * i + 1];
		i++;
		if (g != blk * b + warp * 32 + lane || l != lane)
			return fail(r, "block %llu warp %llu lane %u printed (%llu, %llu)",
				    (unsigned long long)blk, (unsigned long long)warp, lane,
				    (unsigned long long)g, (unsigned long long)l);
		seen[g]++;
	}
	return 0;
}

static int chk_printf_gtid_lane(struct run *r)
{
	seen = calloc(T(r), sizeof(*seen));
	int rc = check_ring(r, 2, rec_gtid_lane);
	for (uint64_t t = 0; !rc && t < T(r); t++)
		if (seen[t] != 1)
			rc = fail(r, "gtid %llu printed %llu times", (unsigned long long)t,
				  (unsigned long long)seen[t]);
	free(seen);
	return rc;
}


/* --- nvcc-compiled apps through the PTX rewriter (sources: see
 * scripts/gpu_build.sh) --- */

/* Kernel ids given to the rewriter (app_rewrite -i, from app.ids): set
 * apart from the default index (0, 1, 2) so a defaulted id shows. */
#define ID_VECADD 11
#define ID_REDUCE 12
#define ID_DEVFUNC 13
#define ID_CLAMPF 21
#define ID_PUT 22

static void add_counts(struct app_counts *c, uint32_t id, uint64_t ld, uint64_t st,
		       uint64_t bytes, uint64_t calls)
{
	int i;
	for (i = 0; i < c->n && c->id[i] != id; i++)
		;
	if (i == c->n) {
		if (c->n == APP_MAX_FUNCS)
			return;
		c->id[c->n++] = id;
	}
	c->loads[i] += ld;
	c->stores[i] += st;
	c->store_bytes[i] += bytes;
	c->calls[i] += calls;
}

/* c[i] = a[i] + b[i] for i < n: 2 loads and a 4-byte store each. */
static void model_vecadd(const struct app *a, const float *const *in, float *out,
			 struct app_counts *c)
{
	for (uint32_t i = 0; i < a->n; i++)
		out[i] = in[0][i] + in[1][i];
	add_counts(c, ID_VECADD, 2ull * a->n, a->n, 4ull * a->n, 0);
}

/* The same tree as the kernel, in the same float order: s[t] += s[t + h]
 * for h = block/2 .. 1. A load per i < n; thread 0 of each block stores. */
static void model_reduce(const struct app *a, const float *const *in, float *out,
			 struct app_counts *c)
{
	float s[1024];
	for (unsigned b = 0; b < a->grid; b++) {
		for (unsigned t = 0; t < a->block; t++) {
			uint64_t i = (uint64_t)b * a->block + t;
			s[t] = i < a->n ? in[0][i] : 0.0f;
		}
		for (unsigned h = a->block / 2; h > 0; h >>= 1)
			for (unsigned t = 0; t < h; t++)
				s[t] += s[t + h];
		out[b] = s[0];
	}
	add_counts(c, ID_REDUCE, a->n, a->grid, 4ull * a->grid, 0);
}

/* i >= n returns at once; else clampf(in[i], -1, 1) (a load in the
 * kernel, a call), put() (a call) stores unless the value is 0. */
static void model_devfunc(const struct app *a, const float *const *in, float *out,
			  struct app_counts *c)
{
	uint64_t nz = 0;
	for (uint32_t i = 0; i < a->n; i++) {
		float x = in[0][i], v = x < -1.0f ? -1.0f : x > 1.0f ? 1.0f : x;
		if (v != 0.0f) {
			out[i] = v;
			nz++;
		}
	}
	add_counts(c, ID_DEVFUNC, a->n, 0, 0, 0);
	add_counts(c, ID_CLAMPF, 0, 0, 0, a->n);
	add_counts(c, ID_PUT, 0, nz, 4 * nz, a->n);
}

#define STR2_(x) #x
#define STR_(x) STR2_(x)
static const struct app app_vecadd = {
	"vecadd", "vecAdd", "vecAdd=" STR_(ID_VECADD), ID_VECADD,
	40, 256, 10000, 2, 10000, model_vecadd,
};
static const struct app app_reduce = {
	"reduce", "reduceBlocks", "reduceBlocks=" STR_(ID_REDUCE), ID_REDUCE,
	40, 256, 10000, 1, 40, model_reduce,
};
static const struct app app_devfunc = {
	"devfunc", "devfunc",
	"devfunc=" STR_(ID_DEVFUNC) " _Z6clampffff=" STR_(ID_CLAMPF)
	" _Z3putPfif=" STR_(ID_PUT), ID_DEVFUNC,
	40, 256, 10000, 1, 10000, model_devfunc,
};

/* A one-word-key map must hold exactly id[i] -> val[i] for nonzero vals. */
static int check_ids(struct run *r, const char *name, const struct app_counts *c,
		     const uint64_t *val)
{
	uint64_t want[64] = { 0 };
	for (int i = 0; i < c->n; i++) {
		if (c->id[i] >= 64)
			return fail(r, "function id %u >= 64", c->id[i]);
		want[c->id[i]] = val[i];
	}
	return check_dense(r, name, 0, want, 64);
}

static int chk_app(struct run *r)
{
	const struct app *a = r->tc->app;
	const struct app_counts *c = r->counts;
	uint64_t v[APP_MAX_FUNCS] = { 0 };
	switch (r->tc->aprog) {
	case APP_EXIT: {
		/* Every launched thread leaves the kernel once, early or not. */
		uint64_t want = (uint64_t)a->grid * a->block;
		return check_dense(r, "@", a->kernel_id, &want, 1);
	}
	case APP_ACCESS:
		for (int i = 0; i < c->n; i++)
			v[i] = c->loads[i] + c->stores[i];
		return check_ids(r, "n", c, v);
	case APP_STORE_BYTES:
		return check_ids(r, "bytes", c, c->store_bytes);
	case APP_ENTRY_BLOCKS: {
		uint64_t want[1024];
		if (a->grid > 1024)
			return fail(r, "grid %u", a->grid);
		for (unsigned b = 0; b < a->grid; b++)
			want[b] = a->block;
		return check_dense(r, "b", 0, want, a->grid);
	}
	case APP_FUNC_ENTRY:
		return check_ids(r, "f", c, c->calls);
	}
	return fail(r, "unknown app program %d", (int)r->tc->aprog);
}

#define P_EXIT "gdev:kernel_exit { @[kernel] = count(); }"
#define P_ACCESS "gdev:access { @n[kernel] = count(); }"
#define P_STORE "gdev:access /store/ { @bytes[kernel] = sum(size); }"
#define P_ENTRY "gdev:kernel_entry { @b[blockIdx.x] = count(); }"
#define P_FENTRY "gdev:func_entry { @f[kernel] = count(); }"
/* prefetch() beside the count: the app's output and the counts must not
 * change; addresses past the buffers must not fault (one probe: the
 * harness splices one; prefetch(0) runs under gpux in e2e). */
#define P_PREFETCH "gdev:access { prefetch(addr + 4096); @n[kernel] = count(); }"
#define APP(n, p, a, k) { n, p, 0, 0, 0, 0, BASE_NONE, 0, chk_app, &a, k }

#define AGGS "gdev:kernel_exit { @c = count(); @s = sum(threadIdx.x); " \
	     "@mn = min(gtid + 1000); @mx = max(gtid); @a = avg(threadIdx.x); " \
	     "@h = hist(threadIdx.x); }"

const struct tcase gpu_cases[] = {
	{ "count_kernel", "gdev:kernel_exit { @[kernel] = count(); }",
	  KMODE_EXIT, 40, 256, 0, BASE_NONE, 0, chk_count_kernel, NULL, 0 },
	{ "count_sm", "gdev:kernel_exit { @sm[sm] = count(); }",
	  KMODE_EXIT, 40, 256, 0, BASE_NONE, 1, chk_count_sm, NULL, 0 },
	{ "keys_mod5", "gdev:kernel_exit { @k[threadIdx.x % 5] = count(); }",
	  KMODE_EXIT, 40, 256, 0, BASE_NONE, 0, chk_keys_mod5, NULL, 0 },
	{ "keys_distinct", "gdev:kernel_exit { @k[gtid] = count(); }",
	  KMODE_EXIT, 8, 256, 0, BASE_NONE, 0, chk_keys_distinct, NULL, 0 },
	{ "pages", "gdev:access { @pages[addr >> 21] = count(); }",
	  KMODE_ACCESS, 4096, 256, 4, BASE_BUFFER, 0, chk_pages, NULL, 0 },
	/* 8 lanes per 2 MiB page from a base 0x30390 into a page: 4 keys a warp. */
	{ "pages_lane_keys", "gdev:access { @pages[addr >> 21] = count(); }",
	  KMODE_ACCESS, 8, 256, 1u << 18, BASE_SYNTHETIC, 0, chk_pages, NULL, 0 },
	{ "store_bytes", "gdev:access /store/ { @bytes[kernel] = sum(size); }",
	  KMODE_ACCESS, 4096, 256, 4, BASE_BUFFER, 0, chk_store_bytes, NULL, 0 },
	/* The last threads' addr + 4096 lies past the 4 MiB buffer. */
	{ "prefetch_count", "gdev:access { prefetch(addr + 4096); @n = count(); }",
	  KMODE_ACCESS, 4096, 256, 4, BASE_BUFFER, 0, chk_prefetch_count, NULL, 0 },
	{ "hist_tid", "gdev:kernel_exit { @h = hist(threadIdx.x); }",
	  KMODE_EXIT, 40, 256, 0, BASE_NONE, 0, chk_hist_tid, NULL, 0 },
	{ "lhist_warp", "gdev:kernel_exit { @w = lhist(warp, 0, 32, 1); }",
	  KMODE_EXIT, 40, 256, 0, BASE_NONE, 1, chk_lhist_warp, NULL, 0 },
	{ "pred_mod3", "gdev:kernel_exit /threadIdx.x % 3 == 0/ { @c = count(); }",
	  KMODE_EXIT, 40, 256, 0, BASE_NONE, 0, chk_pred_mod3, NULL, 0 },
	{ "pred_mod3_partial", "gdev:kernel_exit /threadIdx.x % 3 == 0/ { @c = count(); }",
	  KMODE_EXIT, 7, 100, 0, BASE_NONE, 0, chk_pred_mod3, NULL, 0 },
	{ "aggs_full", AGGS, KMODE_EXIT, 40, 256, 0, BASE_NONE, 0, chk_aggs, NULL, 0 },
	{ "aggs_partial", AGGS, KMODE_EXIT, 7, 100, 0, BASE_NONE, 0, chk_aggs, NULL, 0 },
	{ "divergent", "gdev:kernel_exit { @c = count(); @s = sum(threadIdx.x); }",
	  KMODE_DIVERGENT, 40, 256, 0, BASE_NONE, 0, chk_divergent, NULL, 0 },
	{ "printf_tid", "gdev:kernel_exit { printf(\"tid %d\\n\", threadIdx.x); }",
	  KMODE_EXIT, 40, 256, 0, BASE_NONE, 0, chk_printf_tid, NULL, 0 },
	{ "printf_gtid_lane", "gdev:kernel_exit { printf(\"%d %d\\n\", gtid, lane); }",
	  KMODE_EXIT, 10, 100, 0, BASE_NONE, 0, chk_printf_gtid_lane, NULL, 0 },
	APP("app_vecadd_exit", P_EXIT, app_vecadd, APP_EXIT),
	APP("app_vecadd_access", P_ACCESS, app_vecadd, APP_ACCESS),
	APP("app_vecadd_store_bytes", P_STORE, app_vecadd, APP_STORE_BYTES),
	APP("app_vecadd_entry_blocks", P_ENTRY, app_vecadd, APP_ENTRY_BLOCKS),
	APP("app_vecadd_prefetch", P_PREFETCH, app_vecadd, APP_ACCESS),
	APP("app_reduce_exit", P_EXIT, app_reduce, APP_EXIT),
	APP("app_reduce_access", P_ACCESS, app_reduce, APP_ACCESS),
	APP("app_reduce_store_bytes", P_STORE, app_reduce, APP_STORE_BYTES),
	APP("app_reduce_entry_blocks", P_ENTRY, app_reduce, APP_ENTRY_BLOCKS),
	APP("app_devfunc_exit", P_EXIT, app_devfunc, APP_EXIT),
	APP("app_devfunc_access", P_ACCESS, app_devfunc, APP_ACCESS),
	APP("app_devfunc_store_bytes", P_STORE, app_devfunc, APP_STORE_BYTES),
	APP("app_devfunc_entry_blocks", P_ENTRY, app_devfunc, APP_ENTRY_BLOCKS),
	APP("app_devfunc_func_entry", P_FENTRY, app_devfunc, APP_FUNC_ENTRY),
};

const int gpu_ncases = sizeof(gpu_cases) / sizeof(gpu_cases[0]);
