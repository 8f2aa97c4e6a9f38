/* Shared by host_live.c (loading, kernel probes, maps) and
 * host_driver.c (struct_ops). */
#ifndef GPUX_HOST_LIVE_PRIV_H
#define GPUX_HOST_LIVE_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "host_live.h"

/* A watchpoint's breakpoint event (host_breakpoint.c), and the address
 * a FUNC+argN watchpoint was last set at. */
struct host_watch {
	struct bpf_link *k;
	uint64_t addr;
	int prog;
};
struct host_wp_last {
	uint64_t addr;
	bool set;
};

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
	struct host_watch *watches;
	int nwatches, capwatches;
	int nwatch_probes;             /* ADDRESS watchpoints set when attaching */
	struct host_wp_last *wp_last;  /* per program, NULL until one is set */
};

/* Opens obj, loads the programs of run (maps of share reused), attaches
 * them; host_live_open and host_live_open_driver. */
int host_live_start(const struct host_obj *obj, enum host_run run, int pid,
		    const struct host_live *share, host_live_rec_fn rec, void *arg,
		    struct host_live **out, char *err, size_t errlen);
/* Keeps k to destroy at detach (destroyed at once on failure). 0 or -1. */
int host_live_add_link(struct host_live *l, struct bpf_link *k);
/* The program of obj named name (its ELF symbol), or NULL. */
const struct host_prog *host_live_prog(const struct host_obj *o, const char *name);
/* host_breakpoint.c: an ADDRESS watchpoint program on its breakpoints
 * (a FUNC+argN one waits for its addresses). 0, or -1 saying why. */
int host_live_attach_watch(struct host_live *l, struct bpf_program *p, char *err,
			   size_t errlen);
/* Removes every breakpoint event. */
void host_live_detach_watches(struct host_live *l);
/* host_driver.c: registers every struct_ops map of l with the driver. */
int host_driver_attach(struct host_live *l, char *err, size_t errlen);

#endif
