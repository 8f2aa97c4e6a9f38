/* The run's side of -f perfetto (timeline.h, docs/TIMELINE.md): the
 * timeline opened once the backends hold their maps; the events the
 * runtimes send whole (timeline_probes.h) and every printf line onto it as
 * they are drained; a sample of the count() and sum() maps as counters
 * every SAMPLE_NS and after END; closed with the run. */
#ifndef GPUX_RUN_TIMELINE_H
#define GPUX_RUN_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"

/* Nothing unless -f perfetto. 0, or -1 with a diagnostic. */
int run_timeline_open(struct run *r, struct diags *d);
/* ns until it wants to run again, -1 for never. */
int64_t run_timeline_wait_ns(const struct run *r);
/* After a drain: what came reaches the file; the maps sampled when due
 * (final: in any case, the run's last sample). */
void run_timeline_tick(struct run *r, bool final);
/* Ends the file and says what it holds (unless -q). 0, or -1 after a
 * write error (said). */
int run_timeline_close(struct run *r);

#endif
