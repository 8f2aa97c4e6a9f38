/* Trace files (workload.h): gpux's page trace and gpu_ext's chunk_trace
 * CSV, read a line at a time. The page trace format is documented in
 * docs/SIMULATOR.md; stdlib/tools/pagetrace.gpx writes it. */
#include "workload_priv.h"

#include <stdlib.h>
#include <string.h>

#include "costs.h"

#define MAX_TOUCHES (16u << 20)

enum { C_HOOK, C_PID, C_OWNER, C_VA_START, C_VA_END, C_NCOLS };

static int fail(struct workload *w, const char *msg)
{
	snprintf(w->err, sizeof(w->err), "line %llu: %s", (unsigned long long)w->lineno, msg);
	return -1;
}

static bool num(const char *s, uint64_t *v)
{
	if (!s || !*s)
		return false;
	char *end;
	*v = strtoull(s, &end, 0);
	return end != s && (*end == 0 || *end == '\n' || *end == '\r');
}

static int read_line(struct workload *w)
{
	ssize_t n = getline(&w->line, &w->linecap, w->f);
	if (n < 0)
		return 0;
	w->lineno++;
	while (n && (w->line[n - 1] == '\n' || w->line[n - 1] == '\r'))
		w->line[--n] = 0;
	return 1;
}

static int csv_header(struct workload *w)
{
	static const char *const want[C_NCOLS][2] = {
		{ "hook_type", NULL }, { "pid", NULL }, { "owner_pid", NULL },
		{ "va_start", NULL }, { "va_end", NULL },
	};
	for (int c = 0; c < C_NCOLS; c++)
		w->col[c] = -1;
	int i = 0;
	for (char *save = NULL, *t = strtok_r(w->line, ",", &save); t;
	     t = strtok_r(NULL, ",", &save), i++)
		for (int c = 0; c < C_NCOLS; c++)
			if (!strcmp(t, want[c][0]))
				w->col[c] = i;
	if (w->col[C_HOOK] < 0 || w->col[C_VA_START] < 0 || w->col[C_VA_END] < 0)
		return fail(w, "not a chunk_trace CSV header (needs hook_type, va_start, va_end)");
	return 0;
}

int trace_open(struct workload *w, const char *path, char *err, size_t errlen)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s", path);
	/* trailing ",gpu=SIZE" / ",work=MS" keys */
	for (char *comma; (comma = strrchr(p, ',')) && strchr(comma, '=');) {
		uint64_t v;
		char *eq = strchr(comma, '=');
		*eq = 0;
		if (wl_parse_size(eq + 1, &v)) {
			snprintf(err, errlen, "workload key %s: '%s' is not a number", comma + 1, eq + 1);
			return -1;
		}
		int pk = wl_param_key(w, comma + 1, v, err, errlen);
		if (pk < 0)
			return -1;
		if (!pk && !strcmp(comma + 1, "gpu"))
			w->gpu = v;
		else if (!pk && !strcmp(comma + 1, "work"))
			w->work_us = v * 1000;
		else if (!pk) {
			snprintf(err, errlen, "workload key '%s' is unknown for traces (gpu, work, "
				 "thrashing_*)", comma + 1);
			return -1;
		}
		*comma = 0;
	}
	w->f = fopen(p, "r");
	if (!w->f) {
		snprintf(err, errlen, "cannot open trace %s: %m", p);
		return -1;
	}
	if (w->src == SRC_CHUNK_TRACE) {
		if (!read_line(w) || csv_header(w)) {
			snprintf(err, errlen, "%s: %s", p, w->err[0] ? w->err : "empty file");
			return -1;
		}
	}
	return 0;
}

void trace_close(struct workload *w)
{
	if (w->f)
		fclose(w->f);
	w->f = NULL;
	free(w->line);
	w->line = NULL;
	free(w->touch);
	w->touch = NULL;
}

/* window by window, blocks in address order within one */
static int touch_cmp(const void *a, const void *b)
{
	const struct wl_touch *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return (x->block > y->block) - (x->block < y->block);
}

/* "@touch[BLOCK, WINDOW]: N" or "@touch[PID, BLOCK, WINDOW]: N" (ns holds
 * the window) */
static int recorder_line(struct workload *w)
{
	uint64_t v[3];
	int n = 0;
	char *s = strchr(w->line, '[');
	char *close = s ? strchr(s, ']') : NULL;
	if (!s || !close || close[1] != ':')
		return fail(w, "malformed map line (want @touch[BLOCK, WINDOW]: COUNT)");
	*close = 0;
	for (char *save = NULL, *t = strtok_r(s + 1, ", ", &save); t && n < 3;
	     t = strtok_r(NULL, ", ", &save))
		if (!num(t, &v[n++]))
			return fail(w, "malformed map key");
	uint64_t count;
	if (n < 2 || !num(close + 2 + (close[2] == ' '), &count))
		return fail(w, "malformed map line (want @touch[BLOCK, WINDOW]: COUNT)");
	if (w->ntouch == MAX_TOUCHES)
		return fail(w, "more than 16777216 block touches in one trace");
	if (w->ntouch == w->captouch) {
		size_t cap = w->captouch ? w->captouch * 2 : 1024;
		struct wl_touch *t = realloc(w->touch, cap * sizeof(*t));
		if (!t)
			return fail(w, "out of memory");
		w->touch = t;
		w->captouch = cap;
	}
	uint32_t tenant = n == 3 ? (uint32_t)v[0] : 1;
	w->touch[w->ntouch++] = (struct wl_touch){ v[n - 1], v[n - 2], tenant };
	wl_tenant(w, tenant, NULL);
	return 0;
}

static int csv_row(struct workload *w, struct wl_event *ev)
{
	char *cols[32];
	int n = 0;
	for (char *p = w->line; n < 32;) {
		cols[n++] = p;
		char *c = strchr(p, ',');
		if (!c)
			break;
		*c = 0;
		p = c + 1;
	}
	for (int c = 0; c < C_NCOLS; c++)
		if (w->col[c] >= n)
			return fail(w, "row has fewer columns than the header");
	const char *hook = cols[w->col[C_HOOK]];
	if (strcmp(hook, "ACTIVATE") && strcmp(hook, "POPULATE") && strcmp(hook, "ACCESS") &&
	    strcmp(hook, "1") && strcmp(hook, "2"))
		return 0; /* eviction rows: the model decides its own */
	uint64_t start, end, pid = 1;
	if (!*cols[w->col[C_VA_START]])
		return 0; /* a chunk with no VA block */
	if (!num(cols[w->col[C_VA_START]], &start) || !num(cols[w->col[C_VA_END]], &end) ||
	    end < start)
		return fail(w, "va_start/va_end are not addresses");
	if (w->col[C_OWNER] >= 0 && num(cols[w->col[C_OWNER]], &pid))
		;
	else if (w->col[C_PID] >= 0 && !num(cols[w->col[C_PID]], &pid))
		pid = 1;
	w->ttenant = (uint32_t)(pid & 0xffffff);
	wl_tenant(w, w->ttenant, NULL);
	w->tva = start & ~(uint64_t)(SIM_PAGE_SIZE - 1);
	w->tend = end + 1;
	w->end_launch = true;
	(void)ev;
	return 0;
}

static int record(struct workload *w, struct wl_event *ev)
{
	char *s = w->line;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s || *s == '#' || !strncmp(s, "Attaching", 9))
		return 0;
	if (*s == '@')
		return recorder_line(w);
	char *tok[5] = { 0 };
	int n = 0;
	for (char *save = NULL, *t = strtok_r(s, " \t", &save); t && n < 5;
	     t = strtok_r(NULL, " \t", &save))
		tok[n++] = t;
	uint64_t pid = 0, va = 0, bytes = SIM_PAGE_SIZE;
	char kind = tok[0][1] ? '?' : tok[0][0];
	if (kind == 'L') {
		ev->kind = WL_LAUNCH;
		ev->tenant = 1;
		return 1;
	}
	if (kind == 'N') {
		if (n < 3 || !num(tok[1], &pid))
			return fail(w, "N wants PID COMM");
		wl_tenant(w, (uint32_t)pid, tok[2]);
		return 0;
	}
	if ((kind != 'A' && kind != 'F' && kind != 'T') || n < 3 || !num(tok[1], &pid) ||
	    !num(tok[2], &va) || (n > 3 && !num(tok[3], &bytes)) || (kind == 'A' && n < 4))
		return fail(w, "unrecognised record (A PID VA BYTES, F PID VA, T PID VA [BYTES], "
			    "L, N PID COMM, @touch[...]: NS)");
	uint32_t tenant = (uint32_t)(pid & 0xffffff);
	wl_tenant(w, tenant, NULL);
	if (kind == 'T') {
		w->ttenant = tenant;
		w->tva = va & ~(uint64_t)(SIM_PAGE_SIZE - 1);
		w->tend = va + (bytes ? bytes : 1);
		return 0;
	}
	ev->kind = kind == 'A' ? WL_ALLOC : WL_FREE;
	ev->tenant = tenant;
	ev->va = va;
	ev->bytes = bytes;
	return 1;
}

int trace_next(struct workload *w, struct wl_event *ev)
{
	for (;;) {
		if (w->tva < w->tend) {
			ev->kind = WL_ACCESS;
			ev->tenant = w->ttenant;
			ev->va = w->tva;
			ev->bytes = SIM_PAGE_SIZE;
			w->tva += SIM_PAGE_SIZE;
			return 1;
		}
		if (w->end_launch) {
			w->end_launch = false;
			ev->kind = WL_LAUNCH;
			ev->tenant = w->ttenant;
			return 1;
		}
		if (w->at_eof) {
			/* the recorder's block touches, in first-touch order */
			if (w->touch_next == w->ntouch)
				return 0;
			const struct wl_touch *t = &w->touch[w->touch_next++];
			w->ttenant = t->tenant;
			w->tva = t->block << SIM_BLOCK_SHIFT;
			w->tend = w->tva + (1ull << SIM_BLOCK_SHIFT);
			w->end_launch = true;
			continue;
		}
		if (!read_line(w)) {
			if (ferror(w->f))
				return fail(w, "read error");
			w->at_eof = true;
			if (w->ntouch)
				qsort(w->touch, w->ntouch, sizeof(*w->touch), touch_cmp);
			continue;
		}
		int r = w->src == SRC_CHUNK_TRACE ? csv_row(w, ev) : record(w, ev);
		if (r)
			return r;
	}
}
