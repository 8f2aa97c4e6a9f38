/* Shared by kattach.c (loading, kernel probes, maps), kattach_watch.c
 * (breakpoints) and kattach_driver.c (struct_ops). */
#ifndef GPUX_KATTACH_PRIV_H
#define GPUX_KATTACH_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "kattach.h"
#include "kattach_unit.h"

/* A watchpoint's breakpoint event (kattach_watch.c), and the address
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

struct kattach {
	const struct host_obj *obj;
	enum host_run run;               /* the programs it loads */
	const struct kattach *share;   /* whose maps it uses, or NULL */
	bool shared_events;              /* the ring buffer is share's */
	struct bpf_object *bo;
	struct bpf_link **links;
	int nlinks, caplinks;
	int nsame_probe;               /* links of a probe that has one already
					* (a perf event's CPUs past the first) */
	struct ring_buffer *rb;
	kattach_rec_fn rec;
	void *arg;
	int64_t consume_start;         /* when this kattach_consume began */
	bool batch_done;               /* ... and it stopped for time */
	int ncpu;
	uint64_t nsyms; /* HOST_SYMS_MAP entries filled */
	struct host_watch *watches;
	int nwatches, capwatches;
	int nwatch_probes;             /* ADDRESS watchpoints set when attaching */
	struct host_wp_last *wp_last;  /* per program, NULL until one is set */
	struct {                       /* an iterator's run (kattach_iter.c) */
		struct bpf_link *link; /* one of links, or NULL */
		int fd;                /* reading it, once the run starts */
		unsigned char *buf;    /* bytes read, not yet handed over */
		size_t len;
		enum kattach_iter_state state;
		char err[4096];        /* why it failed, or where it is pinned */
	} iter;
};

/* Opens obj, loads the programs of run (maps of share reused), attaches
 * them; kattach_open and kattach_open_driver. */
int kattach_start(const struct host_obj *obj, enum host_run run, int pid,
		    const struct kattach *share, kattach_rec_fn rec, void *arg,
		    struct kattach **out, char *err, size_t errlen);
/* The program of obj named name (its ELF symbol), or NULL. */
const struct host_prog *kattach_prog(const struct host_obj *o, const char *name);
/* Removes every breakpoint event. */
void kattach_detach_watches(struct kattach *l);
/* CLOCK_MONOTONIC_COARSE in ns: how long a kattach_consume has taken. */
int64_t kattach_coarse_ns(void);
/* Hands an iterator's records over until until_ns (kattach_coarse_ns's
 * clock): 1 when more may come, 0 at its end or without one, -1 when
 * reading it failed (kattach_iter_state says why). */
int kattach_iter_consume(struct kattach *l, int64_t until_ns);
/* Stops reading the iterator (its records not yet read are dropped). */
void kattach_iter_stop(struct kattach *l);
/* kattach_driver.c: registers every struct_ops map of l with the driver. */
int kattach_driver_attach(struct kattach *l, char *err, size_t errlen);

#endif
