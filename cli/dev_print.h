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
 * it. Malformed records are skipped, reported as tampering (sess_trust.h). */
void dev_ring_drain(struct dev_session *ds);

/* Device map map merged over the slots, as the VM would hold it (e->kv
 * malloc'd). 0, or -1. */
int dev_map_entries(struct dev_session *ds, int map, struct out_entries *e);

/* Warnings on err for updates lost to full tables and printf records
 * lost to full rings. */
void dev_report_drops(struct dev_session *ds, FILE *err);

#endif
