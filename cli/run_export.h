/* The run's side of --export (export.h): its module loaded
 * (export_loader.h) and the exporter opened once the backends hold
 * their maps, a snapshot of every registered map whenever it wants one
 * (read here, on the loop's thread, as run_maps_print reads them), a
 * last one after END, closed with the run. */
#ifndef GPUX_RUN_EXPORT_H
#define GPUX_RUN_EXPORT_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend.h"

/* Nothing without --export. 0, or -1 with a diagnostic. */
int run_export_open(struct run *r, struct diags *d);
/* Its descriptor to wait on (at most max); how many. */
int run_export_fds(const struct run *r, struct pollfd *fds, int max);
/* ns until it wants to run again, -1 for only on its descriptor. */
int64_t run_export_wait_ns(const struct run *r);
/* A snapshot if one is wanted; final: the last one, in any case. */
void run_export_tick(struct run *r, bool final);
void run_export_close(struct run *r);

#endif
