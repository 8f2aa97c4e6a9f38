/* The traced process's userspace BPF VM for cuda: probes, shared by
 * rt_host.c (loading, events) and rt_host_out.c (records, map dumps). */
#ifndef GPUX_RT_HOST_PRIV_H
#define GPUX_RT_HOST_PRIV_H

#include "bpf_vm.h"
#include "rt.h"

#define HOST_MAX_BINDS 256
#define HOST_LOG 1024 /* slots of shared maps changed, not yet pushed */

struct host_touch {
	uint32_t map; /* the device map */
	uint32_t slot;
};

struct host_prog {
	int idx;    /* the VM's program index */
	char *glob; /* cuda:launch:GLOB, or NULL */
	int bit;    /* its bit in the glob cache, -1: not cached */
};

struct host_ev {
	struct host_prog *p;
	int n;
};

struct rt_host {
	struct vm *vm;
	struct gpux_sess_host *region; /* NULL: none left */
	struct host_ev ev[GPUX_CEV_COUNT];
	struct vm_map *maps[HOST_MAX_BINDS]; /* by record id */
	void *table[HOST_MAX_BINDS];         /* by device map: its host table */
	uint64_t table_size[HOST_MAX_BINDS];
	uint32_t nbinds, nshared;            /* maps; device maps among them */
	/* Mirrors (abi/session.h: gpux_sess_hbind.mirror), by device map:
	 * the VM's map, its table, how the device's copies fold into it */
	struct vm_map *mirror_map[HOST_MAX_BINDS];
	uint32_t mirror[HOST_MAX_BINDS];
	uint32_t nmirrors;
	/* Every slot of a shared table a program may have changed, in
	 * order (under the VM's lock); each context copies from its own
	 * position on (rt_push.c). */
	struct host_touch log[HOST_LOG];
	uint64_t log_head;
	bool ring;      /* the object writes records */
	bool exited;    /* a program called exit(): nothing more runs */
	bool told;      /* the first failure was reported */
	uint32_t *glob_ok; /* per kernel id: bit 31 known, bit k prog k matches */
};

extern struct rt_host rt_h;

/* rt_mirror.c: refills every mirror from the snapshots of the process's
 * contexts (under rt_lock, after a snapshot). */
void rt_host_mirror(void);

/* rt_host_out.c */
/* Forwards the VM's records to the controller (clear and zero act here). */
void rt_host_records(void);
/* Writes the maps into the region's dump (seqlock). */
void rt_host_dump(void);
/* Before each record of a burst (CUPTI's buffers): waits until the
 * controller has read the region's ring down to half, so the burst is not
 * dropped. From CUPTI's or the runtime's thread, or a program's thread only
 * at a context's end or exit (the forced flush), never at a launch. */
void rt_host_room(void);
/* A timeline's record of event ev (GPUX_SESS_TIMELINE): its context
 * whole, with the time, process, thread, GPU and thread name. */
void rt_host_cev(enum gpux_cev ev, const void *ctx, size_t size);

#endif
