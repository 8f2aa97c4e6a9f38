/* The timeline's probes (timeline_probes.h): one empty probe per cuda:
 * event, which turns the event on in the runtime; a session marked
 * GPUX_SESS_TIMELINE has the runtime send each event whole
 * (HOST_REC_CEV), without running a program for it, and those records
 * are read here onto the timeline. */
#include "timeline_probes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_events.h"
#include "frontend.h"
#include "host_rec.h"

#define NAME_SIZE 512 /* a kernel's whole name, escaped */

/* One probe: cuda:EVENT { } */
static void probe_text(FILE *m, int ev)
{
	static const char *const names[GPUX_CEV_COUNT] = GPUX_CEV_NAMES;
	fprintf(m, "cuda:%s { }\n", names[ev]);
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
		for (int ev = 0; ev < GPUX_CEV_COUNT; ev++)
			probe_text(m, ev);
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

static void dims(const uint32_t *grid, const uint32_t *block, uint64_t shmem, struct tl_dims *d)
{
	for (int i = 0; i < 3; i++) {
		d->grid[i] = grid[i];
		d->block[i] = block[i];
	}
	d->shmem = shmem;
}

void timeline_probes_cev(struct timeline *tl, uint32_t ev, const unsigned char *rec, size_t len,
			 timeline_kernel_fn name, void *ctx)
{
	struct host_rec_cev w;
	union {
		struct gpux_cev_launch launch;
		struct gpux_cev_malloc malloc;
		struct gpux_cev_free free;
		struct gpux_cev_memcpy memcpy;
		struct gpux_cev_sync sync;
		struct gpux_cev_module_load module;
		struct gpux_cev_kernel_end end;
		struct gpux_cev_graph_launch graph;
	} x;
	size_t n = gpux_cev_size(ev);
	if (!n || len != sizeof(w) + n || n > sizeof(x))
		return;
	memcpy(&w, rec, sizeof(w));
	memcpy(&x, rec + sizeof(w), n);
	char comm[sizeof(w.comm) + 1] = { 0 };
	memcpy(comm, w.comm, sizeof(w.comm));
	struct tl_call c = { w.ns, w.pid, w.tid, w.gpu, comm };
	char kname[NAME_SIZE];
	struct tl_dims d;
	switch (ev) {
	case GPUX_CEV_LAUNCH:
		name(ctx, x.launch.kernel_id, kname, sizeof(kname));
		dims(x.launch.grid, x.launch.block, x.launch.shmem, &d);
		timeline_launch(tl, &c, kname, x.launch.stream, &d);
		break;
	case GPUX_CEV_KERNEL_END:
		name(ctx, x.end.kernel_id, kname, sizeof(kname));
		dims(x.end.grid, x.end.block, x.end.shmem, &d);
		timeline_kernel(tl, c.gpu, c.pid, x.end.stream, kname, x.end.start, x.end.end, &d);
		break;
	case GPUX_CEV_MEMCPY: {
		char kind[GPUX_CEV_STR + 1] = { 0 };
		memcpy(kind, x.memcpy.kind, GPUX_CEV_STR);
		timeline_memcpy(tl, &c, x.memcpy.bytes, kind, x.memcpy.stream, x.memcpy.async != 0,
				x.memcpy.dst, x.memcpy.src);
		break;
	}
	case GPUX_CEV_SYNC:
		timeline_sync(tl, &c, x.sync.stream);
		break;
	case GPUX_CEV_MALLOC:
		timeline_malloc(tl, &c, x.malloc.ptr, x.malloc.bytes, x.malloc.managed != 0);
		break;
	case GPUX_CEV_FREE:
		timeline_free(tl, &c, x.free.ptr);
		break;
	case GPUX_CEV_MODULE_LOAD:
		timeline_module(tl, &c, x.module.module, x.module.bytes, x.module.ptx != 0);
		break;
	case GPUX_CEV_GRAPH_LAUNCH:
		timeline_graph(tl, &c, x.graph.graph, x.graph.stream, x.graph.nodes, x.graph.kernels);
		break;
	}
}
