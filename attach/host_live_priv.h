/* Shared by host_live.c (loading, kernel probes, maps) and
 * host_driver.c (struct_ops). */
#ifndef GPUX_HOST_LIVE_PRIV_H
#define GPUX_HOST_LIVE_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "host_live.h"

struct host_live {
	const struct host_obj *obj;
	enum host_run run;               /* the programs it loads */
	const struct host_live *share;   /* whose maps it uses, or NULL */
	bool shared_events;              /* the ring buffer is share's */
	struct bpf_object *bo;
	struct bpf_link **links;
	int nlinks, caplinks;
	struct ring_buffer *rb;
	host_live_rec_fn rec;
	void *arg;
	int ncpu;
	uint64_t nsyms; /* HOST_SYMS_MAP entries filled */
};

/* Opens obj, loads the programs of run (maps of share reused), attaches
 * them; host_live_open and host_live_open_driver. */
int host_live_start(const struct host_obj *obj, enum host_run run, int pid,
		    const struct host_live *share, host_live_rec_fn rec, void *arg,
		    struct host_live **out, char *err, size_t errlen);
/* Keeps k to destroy at detach (destroyed at once on failure). 0 or -1. */
int host_live_add_link(struct host_live *l, struct bpf_link *k);
/* host_driver.c: registers every struct_ops map of l with the driver. */
int host_driver_attach(struct host_live *l, char *err, size_t errlen);

#endif
