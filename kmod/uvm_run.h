/* One workload through the UVM model with the attached policy (or the
 * default when none is attached). */
#ifndef GPUX_KMOD_UVM_RUN_H
#define GPUX_KMOD_UVM_RUN_H

#include <linux/types.h>

#include "uvm.h"

struct kmod_run_stats {
	struct uvm_stats model; /* what the model counted */
	u64 hook_calls;         /* policy programs run */
	u64 bad_returns;        /* decisions outside DEFAULT..ENTER_LOOP: ignored */
	u64 moves, regions;     /* kfunc calls the model took */
	u64 unattached;         /* hooks due with no policy attached: detached mid-run */
};

/* spec: a generated workload (seq, stride, random, hotcold, layers, mix
 * and their keys, as gpux --sim takes them). 0, or -errno with err. */
int kmod_run(const char *spec, struct kmod_run_stats *st, char *err, size_t errlen);

#endif
