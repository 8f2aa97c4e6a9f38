/* A small model of GPU time-slicing for gpu_sched: policies: each tenant
 * is one time-slice group (TSG) with an amount of GPU work; the runlist
 * holds every bound TSG as many times as its interleave level asks
 * (low 1, medium 2, high 4), and runs the entries round-robin, each for
 * its timeslice or until its work is done, paying a context switch
 * between TSGs (sim/costs.h). Policies see task_init (and may set the
 * timeslice and interleave), bind (and may reject it) and task_destroy. */
#ifndef GPUX_SIM_TIMESLICE_H
#define GPUX_SIM_TIMESLICE_H

#include <stdbool.h>
#include <stdint.h>

#define SCHED_MAX_TSGS 16

struct sched_tsg {
	uint32_t tenant;
	uint64_t tsg_id;
	uint64_t timeslice_us;
	uint32_t interleave;   /* 0 low, 1 medium, 2 high */
	bool rejected;
	uint64_t work_us, done_us;
	uint64_t finish_us;    /* when its work was done (0: never ran) */
};

struct sched;

struct sched_policy {
	void *arg;
	/* NULL: the default; the hook acts through sched_set_* on tsg */
	void (*task_init)(void *arg, struct sched *s, struct sched_tsg *tsg);
	void (*bind)(void *arg, struct sched *s, struct sched_tsg *tsg);
	void (*task_destroy)(void *arg, struct sched *s, struct sched_tsg *tsg);
};

struct sched_result {
	struct sched_tsg tsg[SCHED_MAX_TSGS];
	int ntsg;
	uint64_t makespan_us;
	uint64_t switches;
	uint64_t policy_errors;
};

/* Runs tenants (pid, work) to completion under policy (may be NULL). */
void sched_run(const uint32_t *tenants, const uint64_t *work_us, int n,
	       const struct sched_policy *policy, struct sched_result *out);

/* The kfuncs, on the TSG of the hook being run: false when refused. */
bool sched_set_timeslice(struct sched *s, uint64_t us);
bool sched_set_interleave(struct sched *s, uint64_t level);
bool sched_reject_bind(struct sched *s);

#endif
