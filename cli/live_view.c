/* What a live session shows (live.h): maps as bpftrace prints them, a
 * two-key map as a grid, a map again and again, the runtime's messages.
 * A map is read from the newest generation that has it: a generation
 * carries its predecessor's maps, and keeps those of detached probes. */
#include "live_priv.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dev_print.h"
#include "traced_cmd.h"

#define SNAP_WAIT_MS 500

static const char *bare(const char *name)
{
	return name[0] == '@' ? name + 1 : name;
}

/* The newest generation with map name, and its index there. */
static struct live_gen *find_map(struct live *lv, const char *name, int *idx)
{
	for (int i = lv->ng - 1; i >= 0; i--) {
		struct live_gen *g = &lv->g[i];
		for (int k = 0; g->prog && k < g->ds.mod.nmaps; k++)
			if (!strcmp(g->ds.hmaps[k].name, bare(name))) {
				*idx = k;
				return g;
			}
	}
	fprintf(stderr, "gpux: ERROR: no map %s in this session\n", name);
	return NULL;
}

/* A fresh snapshot of g's live slots (g is the newest: older ones are
 * final), or as fresh as SNAP_WAIT_MS allows. */
static void fresh(struct live *lv, struct live_gen *g)
{
	if (g != &lv->g[lv->ng - 1])
		return;
	uint64_t before[GPUX_SESS_MAX_SLOTS];
	uint32_t n;
	dev_session_snap_ask(&g->ds, before, &n);
	for (long t = 0; t < SNAP_WAIT_MS && live_running(lv); t++) {
		if (dev_session_snapped(&g->ds, before, n))
			return;
		spawn_sleep_ms(1);
	}
}

/* Map name's elements now, cleared ones taken off. */
static struct live_gen *entries(struct live *lv, const char *name, int *idx,
				struct out_entries *e)
{
	struct live_gen *g = find_map(lv, name, idx);
	if (!g)
		return NULL;
	fresh(lv, g);
	if (dev_map_entries(&g->ds, *idx, e)) {
		fprintf(stderr, "gpux: ERROR: cannot read %s\n", name);
		return NULL;
	}
	map_base_apply(&lv->bases, g->ds.hmaps[*idx].name, e);
	return g;
}

static int print_one(struct live *lv, const char *name, FILE *out)
{
	int idx;
	struct out_entries e = { 0 };
	struct live_gen *g = entries(lv, name, &idx, &e);
	if (!g)
		return -1;
	int rc = out_map_entries(out, false, &g->ds.hmaps[idx], &e, 0, 0);
	free(e.kv);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int live_print(struct live *lv, const char *name, FILE *out)
{
	live_poll(lv);
	if (name)
		return print_one(lv, name, out);
	/* every map of the session once, in name order */
	const char **v = NULL;
	int n = 0, rc = 0;
	for (int i = lv->ng - 1; i >= 0; i--)
		for (int k = 0; lv->g[i].prog && k < lv->g[i].ds.mod.nmaps; k++) {
			const char *m = lv->g[i].ds.hmaps[k].name;
			bool seen = false;
			for (int j = 0; j < n && !seen; j++)
				seen = !strcmp(v[j], m);
			const char **w = seen ? v : realloc(v, sizeof(*v) * (size_t)(n + 1));
			if (!w) {
				free(v);
				return -1;
			}
			v = w;
			if (!seen)
				v[n++] = m;
		}
	if (n)
		qsort(v, (size_t)n, sizeof(*v), by_name);
	for (int j = 0; j < n && rc == 0; j++) {
		char at[256];
		snprintf(at, sizeof(at), "@%s", v[j]);
		rc = print_one(lv, at, out);
	}
	free(v);
	return rc;
}

int live_clear(struct live *lv, const char *name)
{
	int idx;
	struct live_gen *g = find_map(lv, name, &idx);
	if (!g)
		return -1;
	if (!map_base_supported(&g->ds.hmaps[idx])) {
		fprintf(stderr, "gpux: ERROR: %s is not a count, sum, avg, stats, hist or lhist: "
			"it cannot be cleared while the program runs\n", name);
		return -1;
	}
	/* the baseline is all the map holds now, an earlier clear's part too */
	struct out_entries e = { 0 };
	fresh(lv, g);
	int rc = dev_map_entries(&g->ds, idx, &e);
	if (rc == 0)
		rc = map_base_take(&lv->bases, g->ds.hmaps[idx].name, &e, false);
	free(e.kv);
	return rc;
}

/* ---- the grid ---- */

static const char *const shade[] = { " ", "\u2591", "\u2592", "\u2593", "\u2588" };
#define NSHADE 5
#define MAX_COLS 256
#define MAX_ROWS 4096

/* Element i of e: its two keys and its value. */
static void cell_of(const struct host_map *hm, const struct out_entries *e, size_t i,
		    uint64_t *r, uint64_t *c, uint64_t *v)
{
	const unsigned char *kv = e->kv + i * (e->ks + e->vs);
	memcpy(r, kv + hm->keys[0].offset, 8);
	memcpy(c, kv + hm->keys[1].offset, 8);
	memcpy(v, kv + e->ks, 8);
}

static int shade_of(uint64_t v, uint64_t max)
{
	if (!v)
		return 0;
	return 1 + (int)((v - 1) * (NSHADE - 1) / max);
}

int live_heatmap(struct live *lv, const char *name, FILE *out)
{
	int idx;
	struct out_entries e = { 0 };
	struct live_gen *g = entries(lv, name, &idx, &e);
	if (!g)
		return -1;
	const struct host_map *hm = &g->ds.hmaps[idx];
	if (hm->nkeys != 2 || hm->bucket || hm->keys[0].type.kind != TY_INT ||
	    hm->keys[1].type.kind != TY_INT || e.vs != 8 ||
	    (hm->value.kind == TY_AGG && hm->value.agg != AGG_COUNT && hm->value.agg != AGG_SUM)) {
		fprintf(stderr, "gpux: ERROR: :heatmap draws a map of two integer keys and a count, "
			"sum or integer, as @a[sm, warp] = count()\n");
		free(e.kv);
		return -1;
	}
	uint64_t rmax = 0, cmax = 0, vmax = 0;
	for (size_t i = 0; i < e.n; i++) {
		uint64_t r, c, v;
		cell_of(hm, &e, i, &r, &c, &v);
		rmax = r > rmax ? r : rmax;
		cmax = c > cmax ? c : cmax;
		vmax = v > vmax ? v : vmax;
	}
	if (!e.n) {
		fprintf(out, "@%s: empty\n", hm->name);
		free(e.kv);
		return 0;
	}
	if (cmax >= MAX_COLS || rmax >= MAX_ROWS) {
		fprintf(stderr, "gpux: ERROR: %s's keys go up to [%llu, %llu]; :heatmap draws up "
			"to [%d, %d]\n", name, (unsigned long long)rmax, (unsigned long long)cmax,
			MAX_ROWS - 1, MAX_COLS - 1);
		free(e.kv);
		return -1;
	}
	size_t w = (size_t)cmax + 1, h = (size_t)rmax + 1;
	uint64_t *cell = calloc(w * h, sizeof(*cell));
	if (!cell) {
		free(e.kv);
		return -1;
	}
	for (size_t i = 0; i < e.n; i++) {
		uint64_t r, c, v;
		cell_of(hm, &e, i, &r, &c, &v);
		cell[r * w + c] = v;
	}
	fprintf(out, "@%s: rows key 1 (0..%zu), columns key 2 (0..%zu)\n", hm->name, h - 1, w - 1);
	fprintf(out, "%6s ", "");
	for (size_t c = 0; c < w; c++)
		fputc(c % 10 == 0 ? (char)('0' + (c / 10) % 10) : ' ', out);
	fprintf(out, "\n%6s ", "");
	for (size_t c = 0; c < w; c++)
		fputc((char)('0' + c % 10), out);
	fputc('\n', out);
	for (size_t r = 0; r < h; r++) {
		bool any = false;
		for (size_t c = 0; c < w && !any; c++)
			any = cell[r * w + c] != 0;
		if (!any)
			continue; /* rows without a value: none drawn */
		fprintf(out, "%6zu ", r);
		for (size_t c = 0; c < w; c++)
			fputs(shade[shade_of(cell[r * w + c], vmax)], out);
		fputc('\n', out);
	}
	fputs("scale:", out);
	for (int s = 1; s < NSHADE; s++) {
		uint64_t lo = (uint64_t)(s - 1) * vmax / (NSHADE - 1) + 1;
		uint64_t hi = (uint64_t)s * vmax / (NSHADE - 1);
		if (lo <= hi)
			fprintf(out, " %s %llu-%llu", shade[s], (unsigned long long)lo,
				(unsigned long long)hi);
	}
	fputc('\n', out);
	free(cell);
	free(e.kv);
	return 0;
}

int live_watch(struct live *lv, const char *name, long ms, long times, FILE *out,
	       volatile sig_atomic_t *stop)
{
	for (long i = 0; (!times || i < times) && !*stop; i++) {
		if (i)
			live_wait(lv, ms, stop);
		if (*stop)
			break;
		time_t now = time(NULL);
		char hms[16];
		strftime(hms, sizeof(hms), "%H:%M:%S", localtime(&now));
		fprintf(out, "%s\n", hms);
		if (live_print(lv, name, out))
			return -1;
		fflush(out);
	}
	return 0;
}

void live_read_msgs(struct live *lv)
{
	char text[DEV_MSG_SIZE];
	while (lv->g && lv->ng && dev_msgs_next(&lv->msgs, lv->g[0].h, lv->msgs_off, &lv->trust,
						text))
		fprintf(stderr, "gpux: %s\n", text);
}
