/* What the device runtimes publish in the session segment, printed in
 * bpftrace 0.17's formats through the host printing code (output.h):
 * printf records from each slot's event ring as they come, and at the
 * end every device map, merged over the slots. */
#ifndef GPUX_DEV_OUTPUT_H
#define GPUX_DEV_OUTPUT_H

#include <stdio.h>

#include "dev_session.h"
#include "output.h"

/* Builds the host-side descriptions of the maps and printf formats of
 * ds's module (in the program's arena). */
void dev_output_init(struct dev_session *ds);

/* Prints every complete printf record of every claimed slot, consuming
 * it. Malformed records are skipped, with one warning on stderr. */
void dev_ring_drain(struct dev_session *ds);

/* At exit: "\n\n", then every map in name order: the device maps, and
 * with sh (may be NULL) the maps only cuda: probes use. 0, or -1 if
 * memory ran out. */
struct sess_host;
int dev_print_maps(struct dev_session *ds, struct sess_host *sh);
/* Device map map merged over the slots, as the VM would hold it (e->kv
 * malloc'd); and printed (print(@m, top, div)), less its baseline in
 * bases (may be NULL) after a clear() or zero(). 0, or -1. */
struct map_bases;
int dev_map_entries(struct dev_session *ds, int map, struct out_entries *e);
int dev_print_map(struct dev_session *ds, int map, uint64_t top, uint64_t div,
		  const struct map_bases *bases);

/* Warnings on err for updates lost to full tables and printf records
 * lost to full rings. */
void dev_report_drops(struct dev_session *ds, FILE *err);

#endif
