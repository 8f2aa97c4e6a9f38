/* Internals shared by the generators (workload.c) and the trace
 * readers (trace.c). */
#ifndef GPUX_SIM_WORKLOAD_PRIV_H
#define GPUX_SIM_WORKLOAD_PRIV_H

#include <stdbool.h>
#include <stdio.h>

#include "uvm.h"
#include "workload.h"

enum wl_source { SRC_SEQ, SRC_STRIDE, SRC_RANDOM, SRC_HOTCOLD, SRC_LAYERS, SRC_MIX,
		 SRC_TRACE, SRC_CHUNK_TRACE };

/* A block touch of the recorder's output (@touch[block, window]: count),
 * replayed window by window at the end of the trace. */
struct wl_touch {
	uint64_t ns, block; /* ns: the window */
	uint32_t tenant;
};

struct workload {
	enum wl_source src;
	char name[64];
	uint64_t size, gpu, chunk, touches, batch, work_us;
	uint32_t passes, stride, hot_pct, hot_share, layers;
	uint64_t seed, rng;
	/* generator position */
	uint32_t nallocs_done, pass;
	uint64_t launch, i, nlaunches;
	struct wl_tenant tenants[WL_MAX_TENANTS];
	int ntenants;
	struct uvm_params params; /* the driver's parameters (thrashing_*=) */
	/* traces */
	FILE *f;
	char *line;
	size_t linecap;
	uint64_t lineno;
	int col[16];             /* chunk_trace: column of each field, -1 if absent */
	uint64_t tva, tend;      /* the T line being expanded */
	uint32_t ttenant;
	struct wl_touch *touch;  /* recorder lines, sorted at the end */
	size_t ntouch, captouch, touch_next;
	bool at_eof, end_launch;
	char err[256];
};

int trace_open(struct workload *w, const char *path, char *err, size_t errlen);
int trace_next(struct workload *w, struct wl_event *ev);
void trace_close(struct workload *w);
/* A driver parameter key (thrashing_*): 1 when k is one (set, or an
 * error in err when out of range), 0 when it is not. */
int wl_param_key(struct workload *w, const char *k, uint64_t v, char *err, size_t errlen);
/* The tenant of pid, added on first sight (named comm or "pid<N>"). */
void wl_tenant(struct workload *w, uint32_t pid, const char *comm);

#endif
