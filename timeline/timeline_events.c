/* What goes on the timeline (timeline.h): each CUDA event, printf line
 * and map sample as trace events on its track. */
#include "timeline_priv.h"

#include <stdlib.h>
#include <string.h>

/* Printed lines are named by their first line, up to this many bytes
 * (the whole text is in the event's args). */
#define TL_LINE_NAME 96

void timeline_gpu_name(struct timeline *tl, uint32_t gpu, const char *name)
{
	if (gpu >= TL_GPUS || tl->gpu_named[gpu] || !name || !*name)
		return;
	free(tl->gpu_names[gpu]);
	tl->gpu_names[gpu] = strdup(name);
}

static void shape(struct timeline *tl, const struct tl_dims *d)
{
	tl_arg_dim3(tl, "grid", d->grid);
	tl_arg_dim3(tl, "block", d->block);
	tl_arg_u64(tl, "shmem", d->shmem);
}

void timeline_kernel(struct timeline *tl, uint32_t gpu, uint32_t pid, uint64_t stream,
		     const char *name, uint64_t start, uint64_t end, const struct tl_dims *d)
{
	uint32_t p, t;
	tl_stream_track(tl, gpu, pid, stream, &p, &t);
	uint64_t dur = end >= start ? end - start : 0;
	tl_ev_begin(tl, 'X', "kernel", p, t);
	tl_name(tl, name);
	tl_us(tl, "ts", start);
	tl_dur(tl, dur);
	shape(tl, d);
	tl_arg_hex(tl, "stream", stream);
	tl_arg_u64(tl, "duration_ns", dur);
	tl_arg_u64(tl, "pid", pid);
	tl_ev_end(tl);
	tl->nkernels++;
}

/* An instant of a host call: on the calling thread's track, or (on) the
 * stream's track on the call's GPU. */
static void call_begin(struct timeline *tl, const struct tl_call *c, const char *cat,
		       const char *name, bool on_stream, uint64_t stream)
{
	uint32_t p = c->pid, t = c->tid;
	if (on_stream)
		tl_stream_track(tl, c->gpu, c->pid, stream, &p, &t);
	else
		tl_thread_track(tl, c->pid, c->tid, c->comm ? c->comm : "");
	tl_ev_begin(tl, 'i', cat, p, t);
	tl_name(tl, name);
	tl_us(tl, "ts", c->ts);
	tl_key(tl, "s");
	tlb_puts(&tl->ev, "\"t\"");
	if (on_stream) {
		tl_arg_u64(tl, "pid", c->pid);
		tl_arg_u64(tl, "tid", c->tid);
	}
	tl_arg_u64(tl, "gpu", c->gpu);
}

void timeline_launch(struct timeline *tl, const struct tl_call *c, const char *name,
		     uint64_t stream, const struct tl_dims *d)
{
	call_begin(tl, c, "launch", name, false, 0);
	shape(tl, d);
	tl_arg_hex(tl, "stream", stream);
	tl_ev_end(tl);
}

void timeline_memcpy(struct timeline *tl, const struct tl_call *c, uint64_t bytes,
		     const char *kind, uint64_t stream, bool async, uint64_t dst, uint64_t src)
{
	char name[96];
	snprintf(name, sizeof(name), "memcpy %.16s%s", kind, async ? " async" : "");
	call_begin(tl, c, "memcpy", name, async, stream);
	tl_arg_u64(tl, "bytes", bytes);
	tl_arg_str(tl, "kind", kind, strlen(kind));
	tl_arg_u64(tl, "async", async);
	tl_arg_hex(tl, "stream", stream);
	tl_arg_hex(tl, "dst", dst);
	tl_arg_hex(tl, "src", src);
	tl_ev_end(tl);
}

void timeline_sync(struct timeline *tl, const struct tl_call *c, uint64_t stream)
{
	call_begin(tl, c, "sync", stream ? "stream synchronize" : "context synchronize",
		   stream != 0, stream);
	tl_arg_hex(tl, "stream", stream);
	tl_ev_end(tl);
}

void timeline_malloc(struct timeline *tl, const struct tl_call *c, uint64_t ptr,
		     uint64_t bytes, bool managed)
{
	call_begin(tl, c, "malloc", managed ? "malloc managed" : "malloc", false, 0);
	tl_arg_u64(tl, "bytes", bytes);
	tl_arg_hex(tl, "ptr", ptr);
	tl_arg_u64(tl, "managed", managed);
	tl_ev_end(tl);
}

void timeline_free(struct timeline *tl, const struct tl_call *c, uint64_t ptr)
{
	call_begin(tl, c, "free", "free", false, 0);
	tl_arg_hex(tl, "ptr", ptr);
	tl_ev_end(tl);
}

void timeline_module(struct timeline *tl, const struct tl_call *c, uint64_t module,
		     uint64_t bytes, bool ptx)
{
	call_begin(tl, c, "module", "module load", false, 0);
	tl_arg_hex(tl, "module", module);
	tl_arg_u64(tl, "bytes", bytes);
	tl_arg_u64(tl, "ptx", ptx);
	tl_ev_end(tl);
}

void timeline_graph(struct timeline *tl, const struct tl_call *c, uint64_t graph,
		    uint64_t stream, uint64_t nodes, uint64_t kernels)
{
	call_begin(tl, c, "graph", "graph launch", false, 0);
	tl_arg_hex(tl, "graph", graph);
	tl_arg_hex(tl, "stream", stream);
	tl_arg_u64(tl, "nodes", nodes);
	tl_arg_u64(tl, "kernels", kernels);
	tl_ev_end(tl);
}

void timeline_printf(struct timeline *tl, uint64_t ts, const char *text, size_t n)
{
	size_t line = 0;
	while (line < n && line < TL_LINE_NAME && text[line] != '\n')
		line++;
	while (n && text[n - 1] == '\n')
		n--;
	uint32_t tid = tl_printf_tid(tl);
	tl_ev_begin(tl, 'i', "printf", tl_self_pid(tl), tid);
	tl_key(tl, "name");
	tlb_str(&tl->ev, text, line < n ? line : n);
	tl_us(tl, "ts", ts);
	tl_key(tl, "s");
	tlb_puts(&tl->ev, "\"t\"");
	tl_arg_str(tl, "text", text, n);
	tl_ev_end(tl);
}

void timeline_counter(struct timeline *tl, uint64_t ts, const char *name, int n,
		      char *const *series, const int64_t *values)
{
	uint32_t pid = tl_self_pid(tl);
	tl_ev_begin(tl, 'C', "map", pid, pid);
	tl_name(tl, name);
	tl_us(tl, "ts", ts);
	if (n == 0)
		tl_arg_i64(tl, "value", values[0]);
	for (int i = 0; i < n; i++)
		tl_arg_i64(tl, series[i], values[i]);
	tl_ev_end(tl);
}
