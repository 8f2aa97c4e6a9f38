/* The timeline's probes (timeline_probes.h). Each printf's format is
 * "gpux-timeline EVENT" and its arguments, in this order: nsecs, pid,
 * tid, gpu, comm, then the event's own (SPECS); the reader finds the
 * event by the format and each value by its offset in the record. The
 * thread's name comes with every record: the process may be gone by
 * the time gpux reads it. */
#include "timeline_probes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"

#define PREFIX "gpux-timeline "
#define COMMON 5 /* nsecs pid tid gpu comm */
#define MAX_ARGS 16
#define NAME_SIZE 512 /* a kernel's whole name, escaped */

enum tl_kind {
	K_LAUNCH, K_KERNEL_END, K_MEMCPY, K_SYNC, K_MALLOC, K_FREE, K_MODULE, K_GRAPH, K_N
};

/* Each event's own arguments; "kernel", "kind" (and "comm") are
 * strings. */
static const struct {
	const char *event;
	const char *args;
} SPECS[K_N] = {
	[K_LAUNCH] = { "launch", "kernel stream grid.x grid.y grid.z block.x block.y block.z shmem" },
	[K_KERNEL_END] = { "kernel_end",
			   "kernel stream grid.x grid.y grid.z block.x block.y block.z shmem "
			   "start end" },
	[K_MEMCPY] = { "memcpy", "bytes kind stream async dst src" },
	[K_SYNC] = { "sync", "stream" },
	[K_MALLOC] = { "malloc", "ptr bytes managed" },
	[K_FREE] = { "free", "ptr" },
	[K_MODULE] = { "module_load", "module bytes ptx" },
	[K_GRAPH] = { "graph_launch", "graph stream nodes kernels" },
};

static bool is_str(const char *arg, size_t n)
{
	return (n == 6 && !strncmp(arg, "kernel", 6)) || (n == 4 && !strncmp(arg, "kind", 4)) ||
	       (n == 4 && !strncmp(arg, "comm", 4));
}

/* One probe: cuda:EVENT { printf("gpux-timeline EVENT %llu ...", nsecs, ...); } */
static void probe_text(FILE *m, int k)
{
	char args[256];
	snprintf(args, sizeof(args), "nsecs pid tid gpu comm %s", SPECS[k].args);
	fprintf(m, "cuda:%s { printf(\"" PREFIX "%s", SPECS[k].event, SPECS[k].event);
	for (const char *a = args; *a;) {
		size_t n = strcspn(a, " ");
		fputs(is_str(a, n) ? " %s" : " %llu", m);
		a += n + (a[n] == ' ');
	}
	fputs("\"", m);
	for (const char *a = args; *a;) {
		size_t n = strcspn(a, " ");
		fprintf(m, ", %.*s", (int)n, a);
		a += n + (a[n] == ' ');
	}
	fputs("); }\n", m);
}

/* Whether the user's text parses by itself (its errors printed if not).
 * No probes at all is fine: the timeline's make the program. */
static bool parses_alone(const struct program *prog)
{
	struct program *alone = program_new(prog->src.name, prog->src.text, prog->src.len);
	if (!alone)
		return true; /* the whole program's parse will say */
	alone->src.files = prog->src.files;
	alone->src.nfiles = prog->src.nfiles;
	struct diags d;
	diags_init(&d, &alone->arena);
	bool ok = frontend_check(alone, &d, FE_STOP_PARSE) == 0;
	for (const struct diag *g = d.head; !ok && g; g = g->next)
		if (g->level == DIAG_ERROR && g->has_span)
			break;
		else if (!g->next)
			ok = true; /* only "the program has no probes" */
	if (!ok)
		diags_print(&d, &alone->src, stderr);
	program_free(alone);
	return ok;
}

int timeline_probes_add(struct program *prog)
{
	if (!parses_alone(prog))
		return -1;
	char *probes = NULL;
	size_t plen = 0;
	FILE *m = open_memstream(&probes, &plen);
	if (m) {
		for (int k = 0; k < K_N; k++)
			probe_text(m, k);
		if (fclose(m))
			plen = 0;
	}
	struct source *src = &prog->src;
	bool nl = src->len && src->text[src->len - 1] != '\n';
	char *text = arena_alloc(&prog->arena, src->len + nl + plen + 1);
	memcpy(text, src->text, src->len);
	if (nl)
		text[src->len] = '\n';
	memcpy(text + src->len + nl, probes ? probes : "", plen);
	text[src->len + nl + plen] = 0;
	free(probes);
	int line = 1;
	for (size_t i = 0; i < src->len + nl; i++)
		line += text[i] == '\n';
	/* the user's files as they were, then ours */
	int n = src->files ? src->nfiles : 1;
	struct source_file *files = arena_alloc(&prog->arena, sizeof(*files) * (size_t)(n + 1));
	if (src->files)
		memcpy(files, src->files, sizeof(*files) * (size_t)n);
	else
		files[0] = (struct source_file){ src->name, 1 };
	files[n] = (struct source_file){ TIMELINE_PROBES_FILE, line };
	src->files = files;
	src->nfiles = n + 1;
	src->text = text;
	src->len = src->len + nl + plen;
	return 0;
}

void timeline_probes_mark(struct program *prog)
{
	const struct source *src = &prog->src;
	if (!src->nfiles || strcmp(src->files[src->nfiles - 1].name, TIMELINE_PROBES_FILE))
		return;
	int from = src->files[src->nfiles - 1].first_line;
	for (struct node *p = prog->probes; p; p = p->next)
		if (p->span.first_line >= from)
			p->u.probe.timeline = true;
}

/* ---- reading the records ---- */

/* The values of a record: integers by position, strings in order
 * (comm, then the event's). */
struct vals {
	uint64_t v[MAX_ARGS];
	char str[2][HOST_STR_MAX];
};

static int kind_of(const char *fmt)
{
	if (strncmp(fmt, PREFIX, strlen(PREFIX)))
		return -1;
	fmt += strlen(PREFIX);
	size_t n = strcspn(fmt, " ");
	for (int k = 0; k < K_N; k++)
		if (strlen(SPECS[k].event) == n && !strncmp(fmt, SPECS[k].event, n))
			return k;
	return -1;
}

/* f's arguments as vals; false for a record not of f's shape. */
static bool read_vals(const struct host_fmt *f, const unsigned char *rec, size_t len,
		      struct vals *out)
{
	if (f->nargs > MAX_ARGS)
		return false;
	memset(out, 0, sizeof(*out));
	int ns = 0;
	for (int i = 0; i < f->nargs; i++) {
		const struct host_fmt_arg *a = &f->args[i];
		if (a->offset > len || a->size > len - a->offset)
			return false;
		if (a->type.kind == TY_STR) {
			if (ns == 2)
				return false;
			char *s = out->str[ns++];
			size_t n = a->size < HOST_STR_MAX ? a->size : HOST_STR_MAX - 1;
			memcpy(s, rec + a->offset, n);
			s[strnlen(s, n)] = 0;
		} else if (a->size == 8) {
			memcpy(&out->v[i], rec + a->offset, 8);
		}
	}
	return true;
}

static int nwords(const char *s)
{
	int n = 1;
	for (; *s; s++)
		n += *s == ' ';
	return n;
}

static void dims(const uint64_t *v, struct tl_dims *d)
{
	for (int i = 0; i < 3; i++) {
		d->grid[i] = (uint32_t)v[i];
		d->block[i] = (uint32_t)v[3 + i];
	}
	d->shmem = v[6];
}

void timeline_probes_record(struct timeline *tl, const struct host_fmt *f,
			    const unsigned char *rec, size_t len, timeline_kernel_fn name,
			    void *ctx)
{
	int k = kind_of(f->fmt);
	struct vals x;
	if (k < 0 || f->nargs != COMMON + nwords(SPECS[k].args) || !read_vals(f, rec, len, &x))
		return;
	const uint64_t *v = x.v + COMMON; /* the event's own */
	struct tl_call c = { x.v[0], (uint32_t)x.v[1], (uint32_t)x.v[2], (uint32_t)x.v[3],
			     x.str[0] };
	char kname[NAME_SIZE];
	struct tl_dims d;
	switch (k) {
	case K_LAUNCH:
		name(ctx, v[0], kname, sizeof(kname));
		dims(v + 2, &d);
		timeline_launch(tl, &c, kname, v[1], &d);
		break;
	case K_KERNEL_END:
		name(ctx, v[0], kname, sizeof(kname));
		dims(v + 2, &d);
		timeline_kernel(tl, c.gpu, c.pid, v[1], kname, v[9], v[10], &d);
		break;
	case K_MEMCPY:
		timeline_memcpy(tl, &c, v[0], x.str[1], v[2], v[3] != 0, v[4], v[5]);
		break;
	case K_SYNC:
		timeline_sync(tl, &c, v[0]);
		break;
	case K_MALLOC:
		timeline_malloc(tl, &c, v[0], v[1], v[2] != 0);
		break;
	case K_FREE:
		timeline_free(tl, &c, v[0]);
		break;
	case K_MODULE:
		timeline_module(tl, &c, v[0], v[1], v[2] != 0);
		break;
	case K_GRAPH:
		timeline_graph(tl, &c, v[0], v[1], v[2], v[3]);
		break;
	}
}
