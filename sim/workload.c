/* Workload specs and the generators (workload.h). Every generator is a
 * sequence of launches over the pages of its buffers, computed on the
 * fly; the page sequences are the contract bench/sim/uvm_workloads.cu
 * runs on a real GPU, so the two can be compared. */
#include "workload_priv.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "costs.h"

#define VA_BASE 0x7f0000000000ull
#define BLOCK (1ull << SIM_BLOCK_SHIFT)

int wl_parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static uint64_t splitmix(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

void wl_tenant(struct workload *w, uint32_t pid, const char *comm)
{
	for (int i = 0; i < w->ntenants; i++)
		if (w->tenants[i].pid == pid) {
			if (comm)
				snprintf(w->tenants[i].comm, sizeof(w->tenants[i].comm), "%s", comm);
			return;
		}
	if (w->ntenants == WL_MAX_TENANTS)
		return;
	struct wl_tenant *t = &w->tenants[w->ntenants++];
	t->pid = pid;
	t->work_us = w->work_us;
	if (comm)
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
	else
		snprintf(t->comm, sizeof(t->comm), "pid%u", pid);
}

static const struct { const char *name; enum wl_source src; } sources[] = {
	{ "seq", SRC_SEQ }, { "stride", SRC_STRIDE }, { "random", SRC_RANDOM },
	{ "hotcold", SRC_HOTCOLD }, { "layers", SRC_LAYERS }, { "mix", SRC_MIX },
	{ "trace", SRC_TRACE }, { "chunk_trace", SRC_CHUNK_TRACE },
};

/* The driver's uvm_perf_thrashing_* module parameters, by name. */
static const struct { const char *name; size_t off; } param_keys[] = {
	{ "thrashing_enable", offsetof(struct uvm_params, thrashing_enable) },
	{ "thrashing_threshold", offsetof(struct uvm_params, thrashing_threshold) },
	{ "thrashing_pin_threshold", offsetof(struct uvm_params, thrashing_pin_threshold) },
	{ "thrashing_lapse_usec", offsetof(struct uvm_params, thrashing_lapse_usec) },
	{ "thrashing_nap", offsetof(struct uvm_params, thrashing_nap) },
	{ "thrashing_epoch", offsetof(struct uvm_params, thrashing_epoch) },
	{ "thrashing_pin", offsetof(struct uvm_params, thrashing_pin) },
	{ "thrashing_max_resets", offsetof(struct uvm_params, thrashing_max_resets) },
};

int wl_param_key(struct workload *w, const char *k, uint64_t v, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(param_keys) / sizeof(param_keys[0]); i++) {
		if (strcmp(k, param_keys[i].name))
			continue;
		struct uvm_params p = w->params;
		uint32_t *field = (uint32_t *)((char *)&p + param_keys[i].off);
		*field = (uint32_t)v;
		if (v > UINT32_MAX || !uvm_params_valid(&p)) {
			snprintf(err, errlen, "workload key %s=%llu is out of the driver's range "
				 "(sim/costs.h)", k, (unsigned long long)v);
			return -1;
		}
		w->params = p;
		return 1;
	}
	return 0;
}

static int set_key(struct workload *w, const char *k, const char *v, char *err, size_t errlen)
{
	uint64_t x;
	if (wl_parse_size(v, &x)) {
		snprintf(err, errlen, "workload key %s: '%s' is not a number", k, v);
		return -1;
	}
	int pk = wl_param_key(w, k, x, err, errlen);
	if (pk)
		return pk < 0 ? -1 : 0;
	static const char *const sizes[] = { "size", "gpu", "chunk", NULL };
	for (int i = 0; sizes[i]; i++)
		if (!strcmp(k, sizes[i])) {
			*(i == 0 ? &w->size : i == 1 ? &w->gpu : &w->chunk) = x;
			return 0;
		}
	if (!strcmp(k, "touches")) w->touches = x;
	else if (!strcmp(k, "batch") && x) w->batch = x;
	else if (!strcmp(k, "seed")) w->seed = x;
	else if (!strcmp(k, "work")) w->work_us = x * 1000; /* ms */
	else if (!strcmp(k, "passes") && x <= 1000000) w->passes = (uint32_t)x;
	else if (!strcmp(k, "stride") && x && x < (1u << 30)) w->stride = (uint32_t)x;
	else if (!strcmp(k, "hot_pct") && x <= 100) w->hot_pct = (uint32_t)x;
	else if (!strcmp(k, "hot_share") && x && x < 100) w->hot_share = (uint32_t)x;
	else if (!strcmp(k, "layers") && x && x <= 65536) w->layers = (uint32_t)x;
	else {
		snprintf(err, errlen, "workload key '%s=%s' is unknown or out of range "
			 "(keys: size gpu passes seed chunk stride touches batch hot_pct "
			 "hot_share layers work thrashing_*)", k, v);
		return -1;
	}
	return 0;
}

static uint64_t npages(const struct workload *w)
{
	return w->size >> SIM_PAGE_SHIFT;
}

static uint64_t chunk_pages(const struct workload *w)
{
	uint64_t c = w->chunk >> SIM_PAGE_SHIFT;
	return c ? c : 1;
}

static uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

static uint64_t layer_bytes(const struct workload *w)
{
	return (w->size / w->layers) & ~(uint64_t)(SIM_PAGE_SIZE - 1);
}

/* Buffer b's base: buffers 2 MiB aligned, a free block between them. */
static uint64_t buf_base(uint64_t bytes, uint32_t b)
{
	return VA_BASE + b * (div_up(bytes, BLOCK) + 1) * BLOCK;
}

static int nbufs(const struct workload *w)
{
	return w->src == SRC_LAYERS ? (int)w->layers : w->src == SRC_MIX ? 2 : 1;
}

static uint64_t buf_bytes(const struct workload *w)
{
	return w->src == SRC_LAYERS ? layer_bytes(w) : w->src == SRC_MIX ? w->size / 2 : w->size;
}

int workload_open(const char *spec, struct workload **out, char *err, size_t errlen)
{
	*out = NULL;
	struct workload *w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	w->size = 1ull << 30;
	w->chunk = 64ull << 20;
	w->passes = 2;
	w->seed = 1;
	w->stride = 8;
	w->batch = 4096;
	w->hot_pct = 90;
	w->hot_share = 10;
	w->layers = 8;
	w->work_us = 1000000;
	uvm_params_default(&w->params);
	const char *colon = strchr(spec, ':');
	size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);
	int found = -1;
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if (strlen(sources[i].name) == nl && !strncmp(spec, sources[i].name, nl))
			found = (int)i;
	if (found < 0) {
		snprintf(err, errlen, "unknown workload '%.*s' (seq, stride, random, hotcold, "
			 "layers, mix, trace:FILE, chunk_trace:FILE)", (int)nl, spec);
		goto fail;
	}
	w->src = sources[found].src;
	snprintf(w->name, sizeof(w->name), "%s", sources[found].name);
	if (w->src == SRC_TRACE || w->src == SRC_CHUNK_TRACE) {
		if (!colon || !colon[1]) {
			snprintf(err, errlen, "workload %s needs a file: %s:PATH", w->name, w->name);
			goto fail;
		}
		if (trace_open(w, colon + 1, err, errlen))
			goto fail;
		*out = w;
		return 0;
	}
	char keys[512];
	snprintf(keys, sizeof(keys), "%s", colon ? colon + 1 : "");
	for (char *save = NULL, *kv = strtok_r(keys, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq) {
			snprintf(err, errlen, "workload key '%s' has no value (key=value)", kv);
			goto fail;
		}
		*eq = 0;
		if (set_key(w, kv, eq + 1, err, errlen))
			goto fail;
	}
	if (w->size < SIM_PAGE_SIZE * 2 || (w->src == SRC_LAYERS && !layer_bytes(w))) {
		snprintf(err, errlen, "workload %s: size is too small", w->name);
		goto fail;
	}
	if (!w->touches)
		w->touches = npages(w);
	if (!w->gpu)
		w->gpu = w->size / 5 * 4;
	w->rng = w->seed;
	switch (w->src) {
	case SRC_SEQ: case SRC_STRIDE:
		w->nlaunches = div_up(npages(w), chunk_pages(w));
		break;
	case SRC_RANDOM: case SRC_HOTCOLD:
		w->nlaunches = div_up(w->touches, w->batch);
		break;
	case SRC_LAYERS:
		w->nlaunches = w->layers;
		break;
	default: /* mix */
		w->nlaunches = 2 * div_up(npages(w) / 2, chunk_pages(w));
		break;
	}
	if (w->src == SRC_MIX) {
		wl_tenant(w, 1, "tenant1");
		wl_tenant(w, 2, "tenant2");
	} else {
		wl_tenant(w, 1, "app");
	}
	*out = w;
	return 0;
fail:
	workload_close(w);
	return -1;
}

void workload_close(struct workload *w)
{
	if (!w)
		return;
	trace_close(w);
	free(w);
}

/* The i-th touch of launch l, false past its last. */
static bool touch(struct workload *w, uint64_t l, uint64_t i, struct wl_event *ev)
{
	uint64_t np = npages(w), cp = chunk_pages(w), p;
	ev->kind = WL_ACCESS;
	ev->tenant = 1;
	ev->bytes = SIM_PAGE_SIZE;
	switch (w->src) {
	case SRC_SEQ:
		p = l * cp + i;
		if (i >= cp || p >= np)
			return false;
		ev->va = buf_base(w->size, 0) + (p << SIM_PAGE_SHIFT);
		return true;
	case SRC_STRIDE: {
		uint64_t first = div_up(l * cp, w->stride) * w->stride;
		p = first + i * w->stride;
		if (p >= (l + 1) * cp || p >= np)
			return false;
		ev->va = buf_base(w->size, 0) + (p << SIM_PAGE_SHIFT);
		return true;
	}
	case SRC_RANDOM: case SRC_HOTCOLD:
		if (i >= w->batch || l * w->batch + i >= w->touches)
			return false;
		if (w->src == SRC_RANDOM) {
			p = splitmix(&w->rng) % np;
		} else {
			uint64_t nhot = np * w->hot_share / 100;
			if (!nhot)
				nhot = 1;
			bool hot = splitmix(&w->rng) % 100 < w->hot_pct;
			uint64_t v = splitmix(&w->rng);
			p = hot || nhot >= np ? v % nhot : nhot + v % (np - nhot);
		}
		ev->va = buf_base(w->size, 0) + (p << SIM_PAGE_SHIFT);
		return true;
	case SRC_LAYERS:
		if (i >= layer_bytes(w) >> SIM_PAGE_SHIFT)
			return false;
		ev->va = buf_base(layer_bytes(w), (uint32_t)l) + (i << SIM_PAGE_SHIFT);
		return true;
	default: { /* mix: the tenants' chunks in turn, each its own buffer */
		uint64_t half = np / 2;
		p = (l / 2) * cp + i;
		if (i >= cp || p >= half)
			return false;
		ev->tenant = (uint32_t)(l % 2) + 1;
		ev->va = buf_base(w->size / 2, (uint32_t)(l % 2)) + (p << SIM_PAGE_SHIFT);
		return true;
	}
	}
}

int workload_next(struct workload *w, struct wl_event *ev)
{
	if (w->src == SRC_TRACE || w->src == SRC_CHUNK_TRACE)
		return trace_next(w, ev);
	if (w->nallocs_done < (uint32_t)nbufs(w)) {
		uint32_t b = w->nallocs_done++;
		ev->kind = WL_ALLOC;
		ev->tenant = w->src == SRC_MIX ? b + 1 : 1;
		ev->bytes = buf_bytes(w);
		ev->va = buf_base(ev->bytes, w->src == SRC_LAYERS || w->src == SRC_MIX ? b : 0);
		return 1;
	}
	if (w->pass >= w->passes)
		return 0;
	if (touch(w, w->launch, w->i, ev)) {
		w->i++;
		return 1;
	}
	ev->kind = WL_LAUNCH;
	ev->tenant = w->src == SRC_MIX ? (uint32_t)(w->launch % 2) + 1 : 1;
	w->i = 0;
	if (++w->launch == w->nlaunches) {
		w->launch = 0;
		w->pass++;
	}
	return 1;
}

const char *workload_error(const struct workload *w) { return w->err; }
uint64_t workload_gpu_bytes(const struct workload *w) { return w->gpu; }
const struct uvm_params *workload_uvm_params(const struct workload *w) { return &w->params; }

int workload_tenants(const struct workload *w, const struct wl_tenant **t)
{
	*t = w->tenants;
	return w->ntenants;
}
