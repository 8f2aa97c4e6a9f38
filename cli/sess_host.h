/* The controller's side of cuda: probes, which run in the traced
 * processes: the bindings of the host object's maps to device maps, and
 * what the processes send back (session.h: host regions): records as
 * they come, map dumps merged into a VM of its own to print. Each obj map
 * the traced program holds is one of
 *   device: a gdev: map too: printed from the device snapshots;
 *   cuda:   written by cuda: probes: the processes' dumps, merged.
 * BEGIN/END/interval may print, clear and zero them (clear and zero
 * through a baseline, map_base.h), not read them. */
#ifndef GPUX_SESS_HOST_H
#define GPUX_SESS_HOST_H

#include <stdbool.h>

#include "dev_session.h"
#include "map_base.h"
#include "options.h"
#include "records.h"
#include "bpf_vm.h"

struct sess_host {
	struct dev_session *ds;
	const struct host_obj *obj; /* the run's; NULL without host probes */
	struct rec_state *rs;       /* the run's: records land there */
	struct vm *vm;              /* the merged cuda: maps */
	uint64_t tail[GPUX_SESS_MAX_HOSTS];
	unsigned char *dump;     /* a private copy of one region's dump */
	unsigned char *rec;      /* a private copy of one record */
	/* Private copies of the layout (dev_session.h says why). */
	uint64_t hosts_off, host_size, dump_size;
	uint32_t nhosts;
	bool cuda;               /* the program has cuda: probes */
	bool *remote;            /* per obj map: gdev: or cuda: probes hold it */
	int *dev;                /* per obj map: its device map, or -1 */
	struct map_bases bases;  /* clear()/zero() of remote maps */
	/* Maps keyed by kernel ids (sess_host_kernels.c): per obj map, how it
	 * prints (keys NULL: as it is); per id, its canonical id + 1 (0: not
	 * known yet); the canonical ids. */
	struct host_map *views;
	uint32_t *canon;
	uint64_t *cids;
	size_t ncids, capcids;
};

/* sess_host_kernels.c: the print layouts and canonical kernel ids of
 * maps keyed by kernel ids (0, or -1 out of memory; freed by
 * sess_host_close); map's layout as it prints (what out_map_entries and
 * the map's readers get); a dumped key's ids made canonical in place;
 * e's entries (the obj layout) turned into the print layout. */
int sess_kid_init(struct sess_host *sh);
void sess_kid_free(struct sess_host *sh);
const struct host_map *sess_host_print_map(const struct sess_host *sh, int map);
void sess_kid_canon(struct sess_host *sh, const struct host_map *hm, unsigned char *key);
int sess_kid_widen(struct sess_host *sh, int map, struct out_entries *e);

/* Takes obj (may be NULL) and rs from the run; remote[i] says which obj
 * maps the traced program holds (copied). 0, or -1 with a diagnostic. */
int sess_host_init(struct sess_host *sh, struct program *prog, const struct host_obj *obj,
		   struct rec_state *rs, const bool *remote, struct diags *diags);
void sess_host_spec(struct sess_host *sh, const struct dev_session *ds,
		    struct gpux_sess_spec *spec);
/* After the segment exists: the VM that merges the processes' maps. 0,
 * or -1. */
int sess_host_open(struct sess_host *sh, struct dev_session *ds, struct diags *diags);
void sess_host_close(struct sess_host *sh);
/* Acts on every complete record of every region (printf, time, print,
 * exit). */
void sess_host_drain(struct sess_host *sh);
/* Obj map map as it prints, merged over the processes, less its baseline
 * (e->kv malloc'd): a device map's from the device snapshots. 0, or -1. */
int sess_host_entries(struct sess_host *sh, int map, struct out_entries *e);
/* clear()/zero() (keep) of obj map map, through a baseline. 0, or -1. */
int sess_host_reset(struct sess_host *sh, int map, bool keep);
/* Warnings: programs the VM stopped, records lost; counts and texts
 * checked (sess_trust.h). */
void sess_host_report(struct sess_host *sh, FILE *err, bool verbose);
/* Dump counters of every region (out: GPUX_SESS_MAX_HOSTS), and whether
 * every live region has dumped since (after a snap_req). */
void sess_host_dumps(const struct sess_host *sh, uint64_t *out);
bool sess_host_dumped_since(const struct sess_host *sh, const uint64_t *before);
/* sess_host.c's region i, through the private layout. */
struct gpux_sess_host *sess_host_region(const struct sess_host *sh, uint32_t i);
uint32_t sess_host_regions(const struct sess_host *sh);
/* Whether claimed region i is in use; a state no runtime writes is
 * reported (sess_trust.h) and the region ignored. */
bool sess_host_used(struct sess_host *sh, uint32_t i);
#define SESS_HOST_RING_OFF ((sizeof(struct gpux_sess_host) + 63) & ~(size_t)63)

#endif
