/* A traced CUDA run as a timeline (gpux -f perfetto): a file in the
 * Chrome trace-event JSON format, which Perfetto UI and chrome://tracing
 * open. Events are written as they come, one per line, so memory stays
 * bounded whatever the run's length; the file is valid JSON after every
 * timeline_flush (the closing brackets follow the last event and the
 * next events overwrite them), and timeline_close leaves it valid after
 * a write error too, cut after the last event that reached the file.
 *
 * Tracks (docs/TIMELINE.md): a process per GPU with a thread per stream
 * of each traced process (kernels as complete events, copies and syncs
 * on a stream as instants); each traced process with its threads (the
 * CUDA calls they made, as instants); gpux itself (the program's printf
 * lines as instants, its maps as counters).
 *
 * Times are CLOCK_MONOTONIC ns, written as us since t0 (timeline_open).
 * Every value and string may come from the traced program: strings are
 * escaped as JSON needs (control characters, quotes, backslashes,
 * invalid UTF-8), numbers written as numbers whatever they are. */
#ifndef GPUX_TIMELINE_H
#define GPUX_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct timeline;

/* Where a host-side CUDA call happened: its time, process, thread (and
 * its name, for the thread's track) and the device ordinal of its
 * context. */
struct tl_call {
	uint64_t ts;
	uint32_t pid, tid, gpu;
	const char *comm;
};

/* A launch's shape. */
struct tl_dims {
	uint32_t grid[3], block[3];
	uint64_t shmem;
};

/* Creates path (truncated) and writes the trace's head; t0 is the
 * CLOCK_MONOTONIC ns that ts 0 stands for. 0, or -1 with why in err. */
int timeline_open(struct timeline **out, const char *path, uint64_t t0, char *err,
		  size_t errlen);
/* What has been written so far reaches the file, ended as valid JSON. */
void timeline_flush(struct timeline *tl);
/* Ends the file and frees tl (NULL is fine). Says on err (unless NULL)
 * what it holds, or the write error it met; 0, or -1 after an error. */
int timeline_close(struct timeline *tl, FILE *err);

/* Names for GPU gpu's track ("GPU 0 (NVIDIA H200)"): the device name
 * when known. Before the GPU's first event. */
void timeline_gpu_name(struct timeline *tl, uint32_t gpu, const char *name);

/* A kernel that ran from start to end (ns) on stream of process pid,
 * on GPU gpu. */
void timeline_kernel(struct timeline *tl, uint32_t gpu, uint32_t pid, uint64_t stream,
		     const char *name, uint64_t start, uint64_t end, const struct tl_dims *d);
/* The host calls: a launch (name: the kernel's), a copy (kind: "HtoD"
 * ...), a synchronize (stream 0: the whole context), an allocation, a
 * free, a module load, a graph launch (its node and kernel node
 * counts). An async copy or a synchronize of a stream goes on that
 * stream's track, the others on the calling thread's. */
void timeline_launch(struct timeline *tl, const struct tl_call *c, const char *name,
		     uint64_t stream, const struct tl_dims *d);
void timeline_memcpy(struct timeline *tl, const struct tl_call *c, uint64_t bytes,
		     const char *kind, uint64_t stream, bool async, uint64_t dst, uint64_t src);
void timeline_sync(struct timeline *tl, const struct tl_call *c, uint64_t stream);
void timeline_malloc(struct timeline *tl, const struct tl_call *c, uint64_t ptr,
		     uint64_t bytes, bool managed);
void timeline_free(struct timeline *tl, const struct tl_call *c, uint64_t ptr);
void timeline_module(struct timeline *tl, const struct tl_call *c, uint64_t module,
		     uint64_t bytes, bool ptx);
void timeline_graph(struct timeline *tl, const struct tl_call *c, uint64_t graph,
		    uint64_t stream, uint64_t nodes, uint64_t kernels);

/* A line the program printed (n bytes of text), at ts. */
void timeline_printf(struct timeline *tl, uint64_t ts, const char *text, size_t n);
/* A sample of a counter track named name: one series (n == 0: "value"
 * = values[0]) or n named ones. */
void timeline_counter(struct timeline *tl, uint64_t ts, const char *name, int n,
		      char *const *series, const int64_t *values);

/* Kernels and events (metadata included) written so far. */
void timeline_counts(const struct timeline *tl, uint64_t *kernels, uint64_t *events);

#endif
