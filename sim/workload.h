/* What the simulator replays: a stream of memory events, generated
 * (seq, stride, random, hotcold, layers, mix) or read from a trace file
 * (gpux's page trace, gpu_ext's chunk_trace CSV), one event at a time
 * so a trace of any length runs in bounded memory.
 *
 * A workload is named by a spec: NAME[:key=value,...], e.g.
 * "seq:size=2g,gpu=1600m,passes=2" or "trace:run.trace" (the keys and
 * the generators' page sequences: docs/SIMULATOR.md). */
#ifndef GPUX_SIM_WORKLOAD_H
#define GPUX_SIM_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

enum wl_kind {
	WL_ALLOC,  /* tenant allocates [va, va + bytes) */
	WL_FREE,   /* tenant frees it */
	WL_ACCESS, /* tenant touches the page at va */
	WL_LAUNCH, /* a kernel ends: its faults are serviced */
};

struct wl_event {
	enum wl_kind kind;
	uint32_t tenant;
	uint64_t va, bytes;
};

#define WL_MAX_TENANTS 16

struct wl_tenant {
	uint32_t pid;
	char comm[16];
	uint64_t work_us; /* GPU time it asks for (the scheduling model) */
};

struct workload;
struct uvm_params;

/* 0 with *out, or -1 with a message in err. */
int workload_open(const char *spec, struct workload **out, char *err, size_t errlen);
void workload_close(struct workload *w);
/* 1 with *ev, 0 at the end, -1 on a malformed trace (workload_error). */
int workload_next(struct workload *w, struct wl_event *ev);
const char *workload_error(const struct workload *w);
/* The GPU memory the spec gives managed data (gpu=), or 0 if unset. */
uint64_t workload_gpu_bytes(const struct workload *w);
/* The UVM driver parameters the spec sets (the driver's defaults else). */
const struct uvm_params *workload_uvm_params(const struct workload *w);
int workload_tenants(const struct workload *w, const struct wl_tenant **t);

/* 64-bit size with k/m/g/t suffixes (powers of 1024): 0 or -1. */
int wl_parse_size(const char *s, uint64_t *out);

#endif
