/* :top in a live session: the program's kernels by GPU time, launches or
 * threads, from what the runtimes add into the first generation's name
 * table (abi/session.h, struct gpux_sess_name). Each process has its
 * own entries; a kernel's row sums those of its name. */
#include "live_priv.h"

#include <stdlib.h>
#include <string.h>

struct row {
	char name[SESS_TEXT_SIZE(GPUX_SESS_NAME_LEN)]; /* escaped (sess_trust.h) */
	uint64_t launches, threads, timed, gpu_ns;
};

static int key_cmp(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0; /* larger first */
}

/* Ties go by launches, then by name, so the order is stable. */
static int then(const struct row *a, const struct row *b)
{
	int c = key_cmp(a->launches, b->launches);
	return c ? c : strcmp(a->name, b->name);
}

static int by_time(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	int c = key_cmp(a->gpu_ns, b->gpu_ns);
	return c ? c : then(a, b);
}

static int by_threads(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	int c = key_cmp(a->threads, b->threads);
	return c ? c : then(a, b);
}

static int by_launches(const void *pa, const void *pb)
{
	return then(pa, pb);
}

/* ns as the eye reads it: 812ns, 3.40us, 12.5ms, 2.03s */
static void duration(char *buf, size_t len, uint64_t ns)
{
	static const struct { const char *unit; double div; } u[] = {
		{ "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 },
	};
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		if ((double)ns >= u[i].div) {
			double v = (double)ns / u[i].div;
			snprintf(buf, len, v >= 100 ? "%.0f%s" : v >= 10 ? "%.1f%s" : "%.2f%s", v,
				 u[i].unit);
			return;
		}
	snprintf(buf, len, "%lluns", (unsigned long long)ns);
}

/* The rows, one per kernel name, in *rows; their count, or -1. */
static int gather(struct live *lv, struct row **rows)
{
	uint32_t used = __atomic_load_n(&lv->g[0].h->names_used, __ATOMIC_ACQUIRE);
	if (used > GPUX_SESS_MAX_NAMES)
		used = GPUX_SESS_MAX_NAMES;
	struct row *v = calloc(used ? used : 1, sizeof(*v));
	if (!v)
		return -1;
	int n = 0;
	for (uint32_t id = 0; id < used; id++) {
		const struct gpux_sess_name *e = &lv->names[id];
		if (!__atomic_load_n(&e->ready, __ATOMIC_ACQUIRE))
			continue;
		uint64_t launches = __atomic_load_n(&e->launches, __ATOMIC_RELAXED);
		if (!launches)
			continue; /* named for a probe, never launched */
		uint64_t threads = __atomic_load_n(&e->threads, __ATOMIC_RELAXED),
			 timed = __atomic_load_n(&e->timed, __ATOMIC_RELAXED),
			 gpu_ns = __atomic_load_n(&e->gpu_ns, __ATOMIC_RELAXED);
		if (!sess_count_ok(&lv->trust, launches, SESS_MAX_HOST_COUNT, "a launch count") ||
		    !sess_count_ok(&lv->trust, timed, launches, "a launch count") ||
		    !sess_count_ok(&lv->trust, threads, SESS_MAX_DEVICE_COUNT, "a thread count") ||
		    !sess_count_ok(&lv->trust, gpu_ns, SESS_MAX_DEVICE_COUNT, "a GPU time"))
			continue;
		char name[sizeof(v->name)];
		if (sess_text(name, sizeof(name), e->name, sizeof(e->name)))
			sess_corrupt(&lv->trust, "a kernel name");
		int k = 0;
		while (k < n && strcmp(v[k].name, name))
			k++;
		if (k == n)
			memcpy(v[n++].name, name, sizeof(name));
		v[k].launches += launches;
		v[k].threads += threads;
		v[k].timed += timed;
		v[k].gpu_ns += gpu_ns;
	}
	*rows = v;
	return n;
}

/* The same by GPU, when more than one ran kernels: per-GPU imbalance. */
static void by_gpu(struct live *lv, FILE *out)
{
	struct gpux_sess_gpu g[GPUX_SESS_MAX_GPUS];
	int used = 0;
	for (int i = 0; i < GPUX_SESS_MAX_GPUS; i++) {
		const struct gpux_sess_gpu *e = &lv->g[0].h->gpus[i];
		g[i] = (struct gpux_sess_gpu){
			.launches = __atomic_load_n(&e->launches, __ATOMIC_RELAXED),
			.threads = __atomic_load_n(&e->threads, __ATOMIC_RELAXED),
			.timed = __atomic_load_n(&e->timed, __ATOMIC_RELAXED),
			.gpu_ns = __atomic_load_n(&e->gpu_ns, __ATOMIC_RELAXED),
		};
		if (!sess_count_ok(&lv->trust, g[i].launches, SESS_MAX_HOST_COUNT,
				   "a launch count") ||
		    !sess_count_ok(&lv->trust, g[i].timed, g[i].launches, "a launch count") ||
		    !sess_count_ok(&lv->trust, g[i].threads, SESS_MAX_DEVICE_COUNT,
				   "a thread count") ||
		    !sess_count_ok(&lv->trust, g[i].gpu_ns, SESS_MAX_DEVICE_COUNT, "a GPU time"))
			g[i] = (struct gpux_sess_gpu){ 0 };
		used += g[i].launches > 0;
	}
	if (used < 2)
		return;
	fprintf(out, "\n%12s %14s %10s %10s  %s\n", "LAUNCHES", "THREADS", "GPU TIME", "AVG",
		"GPU");
	for (int i = 0; i < GPUX_SESS_MAX_GPUS; i++) {
		if (!g[i].launches)
			continue;
		char total[32] = "-", avg[32] = "-";
		if (g[i].timed) {
			duration(total, sizeof(total), g[i].gpu_ns);
			duration(avg, sizeof(avg), g[i].gpu_ns / g[i].timed);
		}
		fprintf(out, "%12llu %14llu %10s %10s  %d\n", (unsigned long long)g[i].launches,
			(unsigned long long)g[i].threads, total, avg, i);
	}
}

int live_top(struct live *lv, enum live_top_by order, int limit, FILE *out)
{
	struct row *v;
	int n = gather(lv, &v);
	if (n < 0) {
		fputs("gpux: ERROR: out of memory\n", stderr);
		return -1;
	}
	qsort(v, (size_t)n, sizeof(*v),
	      order == LIVE_TOP_TIME ? by_time : order == LIVE_TOP_THREADS ? by_threads : by_launches);
	if (limit > 0 && n > limit)
		n = limit;
	fprintf(out, "%12s %14s %10s %10s  %s\n", "LAUNCHES", "THREADS", "GPU TIME", "AVG",
		"KERNEL");
	for (int i = 0; i < n; i++) {
		char total[32] = "-", avg[32] = "-";
		if (v[i].timed) {
			duration(total, sizeof(total), v[i].gpu_ns);
			duration(avg, sizeof(avg), v[i].gpu_ns / v[i].timed);
		}
		fprintf(out, "%12llu %14llu %10s %10s  %s\n", (unsigned long long)v[i].launches,
			(unsigned long long)v[i].threads, total, avg, v[i].name);
	}
	if (!n)
		fputs("(no kernel launched yet)\n", out);
	free(v);
	by_gpu(lv, out);
	return 0;
}
