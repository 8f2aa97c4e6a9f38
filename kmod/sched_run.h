/* A workload's tenants through the simulator's time-slicing model
 * (sim/timeslice.c), as gpux --sim runs them after its memory model, with
 * the attached nv_gpu_sched_ops policy (or the driver's defaults). */
#ifndef GPUX_KMOD_SCHED_RUN_H
#define GPUX_KMOD_SCHED_RUN_H

#include <linux/types.h>

#include "timeslice.h"

struct kmod_sched_stats {
	struct sched_result model;
	u64 hook_calls;
	u64 unattached; /* hooks due with no policy attached: detached mid-run */
};

/* spec: a generated workload, for its tenants and their work. 0, or
 * -errno with err. */
int kmod_sched(const char *spec, struct kmod_sched_stats *st, char *err, size_t errlen);

#endif
