/* The controller's side of host probes in a device session: cuda:
 * probes (which run in the traced processes) and BEGIN/END/interval
 * (which run here). The host object they share, the bindings of its maps
 * to device maps, what the traced processes send back (session.h: host
 * regions): records as they come, map dumps merged into the controller's
 * own VM to print. Each map of the object is one of
 *   device: a gdev: map too: printed from the device snapshots;
 *   cuda:   written by cuda: probes: the processes' dumps, merged;
 *   local:  only BEGIN/END/interval use it: the controller's VM.
 * BEGIN/END/interval may print, clear and zero the first two kinds
 * (clear and zero through a baseline, map_base.h), not read them. */
#ifndef GPUX_SESS_HOST_H
#define GPUX_SESS_HOST_H

#include <stdbool.h>

#include "dev_session.h"
#include "map_base.h"
#include "options.h"
#include "records.h"
#include "vm_exec.h"

struct sess_host {
	struct dev_session *ds;
	struct host_obj obj;
	bool have_obj;
	struct vm_exec x;        /* the merged maps, for printing */
	struct rec_state rs;
	uint64_t tail[GPUX_SESS_MAX_HOSTS];
	unsigned char *dump;     /* a private copy of one region's dump */
	/* Private copies of the layout (dev_session.h says why). */
	uint64_t hosts_off, host_size, dump_size;
	uint32_t nhosts;
	bool warned;
	bool cuda;               /* the program has cuda: probes */
	bool *remote;            /* per obj map: gdev: or cuda: probes use it */
	int *dev;                /* per obj map: its device map, or -1 */
	struct map_bases bases;  /* clear()/zero() of remote maps */
};

/* Whether prog has cuda: probes. */
bool sess_host_wanted(const struct program *prog);
/* Whether prog has host probes at all (cuda:, BEGIN, END, interval). */
bool sess_host_any(const struct program *prog);
/* Compiles prog's host probes into sh->obj and places its maps. 0, or
 * -1 with diagnostics. */
int sess_host_compile(struct sess_host *sh, struct program *prog, const struct options *o,
		      struct diags *diags);
void sess_host_spec(struct sess_host *sh, const struct dev_session *ds,
		    struct gpux_sess_spec *spec);
/* After the segment exists: the controller's VM. 0, or -1. */
int sess_host_open(struct sess_host *sh, struct dev_session *ds, struct diags *diags);
void sess_host_close(struct sess_host *sh);
/* Acts on every complete record of every region (printf, time, print,
 * exit: sh->rs.exited). */
void sess_host_drain(struct sess_host *sh);
/* Whether object map map is printed at exit as a host map (it is not a
 * device map); print(@m, top, div) of any object map, by its kind; and
 * clear()/zero() (keep) of one. 0, or -1. */
bool sess_host_prints(const struct sess_host *sh, int map);
int sess_host_print(struct sess_host *sh, int map, uint64_t top, uint64_t div);
int sess_host_reset(struct sess_host *sh, int map, bool keep);
/* Warnings: programs the VM stopped, records lost. */
void sess_host_report(struct sess_host *sh, FILE *err);
/* Dump counters of every region (out: GPUX_SESS_MAX_HOSTS), and whether
 * every live region has dumped since (after a snap_req). */
void sess_host_dumps(const struct sess_host *sh, uint64_t *out);
bool sess_host_dumped_since(const struct sess_host *sh, const uint64_t *before);
/* sess_host.c's region i, through the private layout. */
struct gpux_sess_host *sess_host_region(const struct sess_host *sh, uint32_t i);
uint32_t sess_host_regions(const struct sess_host *sh);
#define SESS_HOST_RING_OFF ((sizeof(struct gpux_sess_host) + 63) & ~(size_t)63)

#endif
