/* The controller's side of cuda: probes in a device session: the host
 * object they run from, the bindings of its maps to device maps, and
 * what the traced processes send back (session.h: host regions): records
 * as they come, map dumps merged into the controller's own VM to print. */
#ifndef GPUX_SESS_HOST_H
#define GPUX_SESS_HOST_H

#include <stdbool.h>

#include "dev_session.h"
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
};

/* Whether prog has cuda: probes. */
bool sess_host_wanted(const struct program *prog);
/* Compiles prog's host probes (cuda:) into sh->obj and fills the host
 * part of spec (object, map bindings to ds's device maps, dump size,
 * events). 0, or -1 with diagnostics. */
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
/* Names of the maps to print at exit that are not device maps, and
 * printing one of them merged over the processes (index: obj map). */
bool sess_host_prints(const struct sess_host *sh, int map);
int sess_host_print(struct sess_host *sh, int map, uint64_t top, uint64_t div);
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
