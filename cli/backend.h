/* The controller's one loop (run.c) drives a backend per place where
 * probe code runs (the catalog's enum runner): gpux's own VM (BEGIN, END,
 * interval), the kernel (uprobes, tracepoints through libbpf), the
 * traced program (gdev: and cuda: probes through the preloaded runtime)
 * and the GPU driver (gpu_mem:, gpu_sched: as struct_ops).
 * Each backend loads and attaches its probes, says what to wait on, acts
 * on its records, and reads, clears and zeroes the maps it holds; the
 * loop owns signals, the command, END ordering, exit status and map
 * printing, once for all of them. */
#ifndef GPUX_BACKEND_H
#define GPUX_BACKEND_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ast.h"
#include "catalog.h"
#include "compile.h"
#include "diag.h"
#include "host_obj.h"
#include "options.h"
#include "output.h"
#include "records.h"

struct backend;
struct exporter;
struct kattach;
struct host_api;
struct run_timeline;

/* A map the run prints: held by backend b as its map idx, laid out as hm
 * describes (output.h). */
struct run_map {
	const char *name;
	const struct host_map *hm;
	struct backend *b;
	int idx;
};

/* What the controller shares with its backends. */
struct run {
	struct program *prog;
	const struct options *o;
	FILE *out;
	bool json;
	struct host_obj obj;  /* every host probe, compiled once (nmaps 0 if none) */
	bool have_obj;
	struct rec_state rs;  /* records of every backend land here */
	/* Per obj map: the runner whose probes hold it, and whether gpux's
	 * VM reads it (copied into the VM before BEGIN, END, interval). */
	enum runner *owner;
	bool *vm_reads;
	bool *vm_writes; /* ... and writes it (written back after each run) */
	struct backend *be[RUNNER_DRIVER + 1]; /* by runner; NULL when unused */
	struct driver_abis abis; /* what driver probes compile against */
	struct run_map *maps;
	int nmaps, capmaps;
	pid_t child;          /* the command, or 0 */
	bool reaped;          /* the command has been waited for */
	bool cmd_left;        /* the command ended on its own, not by gpux */
	bool poll_pid;        /* no pidfd: the watched process is polled */
	struct exporter *ex;  /* --export (run_export.h), or NULL */
	struct run_timeline *tl; /* -f perfetto (run_timeline.h), or NULL */
	bool stopped;         /* a signal (Ctrl-C, SIGTERM) ended the run */
	bool dropped_at_stop; /* records were left unread after it */
};

struct backend_ops {
	/* Loads and attaches the probes once the program is compiled and the
	 * command, if any, is forked but held. 0, or -1 with diagnostics. */
	int (*open)(struct backend *b, struct diags *d);
	/* In the command's process, before exec: its environment. 0 or -1. */
	int (*child_env)(struct backend *b);
	/* Attach points, as "Attaching N probes..." counts them. */
	int (*attached)(const struct backend *b);
	/* BEGIN and END (gpux's VM only; NULL elsewhere). 0, or -1. */
	int (*begin)(struct backend *b, struct diags *d);
	void (*end)(struct backend *b, struct diags *d);
	/* Descriptors to wait on (at most max); how many. */
	int (*fds)(struct backend *b, struct pollfd *fds, int max);
	/* ns until it wants to run again (0: now), -1 for only on its fds. */
	int64_t (*wait_ns)(const struct backend *b);
	/* Acts on what waits: records, due timers. */
	void (*drain)(struct backend *b, struct diags *d);
	/* Whether its probes asked the run to end (a device exit()). */
	bool (*ending)(struct backend *b);
	/* Before the loop ends a running command: have its state published
	 * (fresh snapshots). True if the command left meanwhile (*status). */
	bool (*settle)(struct backend *b, pid_t child, int *status);
	/* No probe fires after it returns. */
	void (*detach)(struct backend *b);
	/* Map idx's elements as out_entries (e->kv malloc'd); clear() or
	 * zero() (keep) of it. 0, or -1. */
	int (*map_read)(struct backend *b, int idx, struct out_entries *e);
	int (*map_reset)(struct backend *b, int idx, bool keep);
	/* One element as gpux's VM wrote it: value for key, or key deleted
	 * (value NULL). Backends whose maps the VM may write (the kernel's,
	 * the driver's); NULL elsewhere. 0, or -1. */
	int (*map_write)(struct backend *b, int idx, const void *key, const void *value);
	/* Warnings at the end: drops, stopped programs. */
	void (*report)(struct backend *b, FILE *err);
	void (*close)(struct backend *b);
};

struct backend {
	const struct backend_ops *ops;
	struct run *r;
};

/* Each backend's making, before anything starts (NULL with a
 * diagnostic: what this build or user cannot do), and the target's
 * refusals (0, or -1 with a message). */
struct backend *gpux_backend_new(struct run *r, struct diags *d);
struct backend *kernel_backend_new(struct run *r, struct diags *d);
int target_backend_check(const struct run *r, struct diags *d);
struct backend *target_backend_new(struct run *r, struct diags *d);
/* The driver's refusals bind r->abis, the running driver's ABIs, too. */
int driver_backend_check(struct run *r, struct diags *d);
struct backend *driver_backend_new(struct run *r, struct diags *d);
/* The whole name of the traced program's kernel id (dev_session.h's
 * dev_session_kernel), into buf of len bytes (len > 256). */
void target_backend_kernel(struct backend *b, uint64_t id, char *buf, size_t len);
/* Device gpu's name as a runtime wrote it ("" until one has). */
void target_backend_gpu_name(struct backend *b, uint32_t gpu, char *buf, size_t len);
/* The kernel backend's run, whose maps driver probes share. */
struct kattach *kernel_backend_live(struct backend *b);
/* Hands l's records over (the kernel's and the driver's backends): a
 * batch while its probes are attached; once they are detached, all that
 * are left, or what the next LAST_DRAIN_MS take where a signal stopped
 * the run, so that a flood of records cannot hold Ctrl-C up. The records
 * left behind then are counted in r->dropped_at_stop. */
void kernel_records_drain(struct run *r, const struct host_api *api, struct kattach *l,
			  bool detached);

/* The runner of a probe, from the catalog. */
enum runner probe_runner(const struct node *probe);
/* Attach points of prog whose runner is rn. */
int run_count_attach(const struct program *prog, enum runner rn);
/* The first attach point of a probe run by rn, for messages; NULL if none. */
const struct node *run_first_attach(const struct program *prog, enum runner rn);

/* The map registry (run_maps.c): each backend adds the maps it holds. */
int run_maps_add(struct run *r, const struct host_map *hm, struct backend *b, int idx);
/* Adds every obj map runner rn holds, as b's map of the same index. 0, or
 * -1 with a diagnostic. */
int run_maps_add_owned(struct run *r, struct backend *b, enum runner rn, struct diags *d);
/* The registered map of obj map i (by name), or NULL. */
const struct run_map *run_maps_obj(const struct run *r, int i);
/* print(@m, top, div) of one; every map in name order, at the end (after
 * two blank lines) or on SIGUSR1 (as bpftrace, without them). */
int run_maps_print(struct run *r, const struct run_map *m, uint64_t top, uint64_t div);
int run_maps_print_all(struct run *r, bool at_exit);
void run_maps_free(struct run *r);

/* Where each map of r->obj lives (run_place.c): fills r->owner and
 * r->vm_reads and r->vm_writes, refusing what cannot be shared with
 * located errors.
 * 0, or -1. */
int run_place(struct run *r, struct diags *d);
/* The same refusals for a compiled program that does not run (--dry-run,
 * --emit): nothing is kept. */
int run_place_check(const struct program *prog, const struct host_obj *obj, struct diags *d);

#endif
