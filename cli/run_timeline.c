/* -f perfetto in the run (run_timeline.h). */
#include "run_timeline.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session.h"
#include "timeline.h"
#include "timeline_probes.h"

/* Maps are sampled as often as the runtimes snapshot them. */
#define SAMPLE_NS 100000000L
/* A keyed map is its largest keys' series and one for the rest. */
#define MAX_SERIES 16
#define SERIES_NAME 256

struct run_timeline {
	struct timeline *tl;
	int64_t next_sample;
	uint64_t *last; /* per registered map: a digest of its last sample */
	int nlast;
	uint32_t named; /* GPUs whose names the timeline has */
};

static int64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* ---- records ---- */

static void kernel_name(void *ctx, uint64_t id, char *buf, size_t len)
{
	struct run *r = ctx;
	if (r->be[RUNNER_TARGET])
		target_backend_kernel(r->be[RUNNER_TARGET], id, buf, len);
	else
		snprintf(buf, len, "kernel#%llu", (unsigned long long)id);
}

static void tap_cev(void *ctx, uint32_t ev, const unsigned char *rec, size_t len)
{
	struct run *r = ctx;
	/* GPU tracks carry the device's name once a runtime has written it */
	for (uint32_t g = 0; r->be[RUNNER_TARGET] && g < GPUX_SESS_MAX_GPUS; g++)
		if (!(r->tl->named & (1u << g))) {
			char name[128];
			target_backend_gpu_name(r->be[RUNNER_TARGET], g, name, sizeof(name));
			if (*name) {
				timeline_gpu_name(r->tl->tl, g, name);
				r->tl->named |= 1u << g;
			}
		}
	timeline_probes_cev(r->tl->tl, ev, rec, len, kernel_name, r);
}

/* A printf line has no time of its own: it is placed when gpux reads it. */
static void tap_printf(void *ctx, const struct host_fmt *f, const unsigned char *rec,
		       size_t len)
{
	struct run *r = ctx;
	size_t n = 0;
	char *text = out_format(f, rec, len, &n);
	if (text)
		timeline_printf(r->tl->tl, (uint64_t)mono_ns(), text, n);
	free(text);
}

/* ---- maps as counters ---- */

static bool counted(const struct host_map *hm)
{
	return hm->value.kind == TY_AGG && (hm->value.agg == AGG_COUNT || hm->value.agg == AGG_SUM) &&
	       !hm->bucket && hm->value_size >= 8;
}

static int64_t value_of(const struct out_entries *e, size_t i)
{
	int64_t v;
	memcpy(&v, e->kv + i * (e->ks + e->vs) + e->ks, 8);
	return v;
}

/* Largest first. */
static int by_value(const void *a, const void *b, void *arg)
{
	const struct out_entries *e = arg;
	int64_t x = value_of(e, *(const size_t *)a), y = value_of(e, *(const size_t *)b);
	return x < y ? 1 : x > y ? -1 : 0;
}

/* An element's key as print() writes it ("add_one, 3"), into buf. */
static void key_text(const struct host_map *hm, const unsigned char *key, char *buf, size_t n)
{
	FILE *m = fmemopen(buf, n, "w");
	buf[0] = 0;
	if (!m)
		return;
	setbuf(m, NULL);
	for (int j = 0; j < hm->nkeys; j++) {
		if (j)
			fputs(", ", m);
		out_map_key_part(m, hm, j, key);
	}
	fclose(m);
	buf[n - 1] = 0;
}

static uint64_t digest(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* One map's sample: its value, or its largest keys' and the rest's sum;
 * left out when it is what the last sample said. */
static void sample(struct run *r, int i, const struct out_entries *e, uint64_t ts)
{
	const struct run_map *m = &r->maps[i];
	char names[MAX_SERIES][SERIES_NAME], *series[MAX_SERIES];
	int64_t vals[MAX_SERIES];
	int n = 0;
	if (m->hm->nkeys == 0) {
		vals[0] = e->n ? value_of(e, 0) : 0;
	} else if (!e->n) {
		return; /* no series yet */
	} else {
		size_t *order = malloc((e->n + 1) * sizeof(*order));
		if (!order)
			return;
		for (size_t k = 0; k < e->n; k++)
			order[k] = k;
		qsort_r(order, e->n, sizeof(*order), by_value, (void *)e);
		size_t shown = e->n <= MAX_SERIES ? e->n : MAX_SERIES - 1;
		for (size_t k = 0; k < shown; k++, n++) {
			key_text(m->hm, e->kv + order[k] * (e->ks + e->vs), names[n], SERIES_NAME);
			series[n] = names[n];
			vals[n] = value_of(e, order[k]);
		}
		if (shown < e->n) {
			snprintf(names[n], SERIES_NAME, "(%zu more keys)", e->n - shown);
			series[n] = names[n];
			vals[n] = 0;
			for (size_t k = shown; k < e->n; k++)
				vals[n] = (int64_t)((uint64_t)vals[n] + (uint64_t)value_of(e, order[k]));
			n++;
		}
		free(order);
	}
	uint64_t h = digest(0xcbf29ce484222325ull, vals, sizeof(*vals) * (size_t)(n ? n : 1));
	for (int k = 0; k < n; k++)
		h = digest(h, series[k], strlen(series[k]));
	if (r->tl->last[i] == h)
		return;
	r->tl->last[i] = h;
	char name[SERIES_NAME];
	snprintf(name, sizeof(name), "@%s", m->name);
	timeline_counter(r->tl->tl, ts, name, n, series, vals);
}

static void sample_maps(struct run *r)
{
	uint64_t ts = (uint64_t)mono_ns();
	for (int i = 0; i < r->nmaps && i < r->tl->nlast; i++) {
		const struct run_map *m = &r->maps[i];
		struct out_entries e = { 0 };
		if (counted(m->hm) && m->b->ops->map_read(m->b, m->idx, &e) == 0)
			sample(r, i, &e, ts);
		free(e.kv);
	}
}

/* ---- the run ---- */

int run_timeline_open(struct run *r, struct diags *d)
{
	if (r->o->format != FMT_PERFETTO)
		return 0;
	struct run_timeline *t = calloc(1, sizeof(*t));
	if (t) {
		t->nlast = r->nmaps;
		t->last = calloc((size_t)r->nmaps + 1, sizeof(*t->last));
	}
	if (!t || !t->last) {
		free(t);
		diag_error_nospan(d, "out of memory");
		return -1;
	}
	char err[512];
	if (timeline_open(&t->tl, r->o->output, (uint64_t)mono_ns(), err, sizeof(err))) {
		free(t->last);
		free(t);
		diag_error_nospan(d, "%s", err);
		return -1;
	}
	r->tl = t;
	r->rs.tap = (struct rec_tap){ tap_printf, tap_cev, r };
	sample_maps(r); /* the counters start from the run's start */
	t->next_sample = mono_ns() + SAMPLE_NS;
	return 0;
}

int64_t run_timeline_wait_ns(const struct run *r)
{
	if (!r->tl)
		return -1;
	int64_t w = r->tl->next_sample - mono_ns();
	return w > 0 ? w : 0;
}

void run_timeline_tick(struct run *r, bool final)
{
	if (!r->tl)
		return;
	if (final || mono_ns() >= r->tl->next_sample) {
		sample_maps(r);
		r->tl->next_sample = mono_ns() + SAMPLE_NS;
	}
	timeline_flush(r->tl->tl);
}

int run_timeline_close(struct run *r)
{
	struct run_timeline *t = r->tl;
	if (!t)
		return 0;
	r->rs.tap = (struct rec_tap){ 0 };
	r->tl = NULL;
	uint64_t kernels, events;
	timeline_counts(t->tl, &kernels, &events);
	int rc = timeline_close(t->tl, stderr);
	if (!rc && !r->o->quiet)
		fprintf(stderr, "gpux: timeline: %llu kernels, %llu events in %s (open it in "
			"ui.perfetto.dev or chrome://tracing)\n", (unsigned long long)kernels,
			(unsigned long long)events, r->o->output);
	free(t->last);
	free(t);
	return rc;
}
