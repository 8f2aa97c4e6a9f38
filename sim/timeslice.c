/* The time-slice model (timeslice.h). */
#include "timeslice.h"

#include <string.h>

#include "costs.h"

struct sched {
	struct sched_result *r;
	struct sched_tsg *cur;  /* the hook's TSG */
	bool in_init, in_bind;
};

bool sched_set_timeslice(struct sched *s, uint64_t us)
{
	if (!s->cur || !s->in_init || !us || us > 1000000000ull) {
		s->r->policy_errors++;
		return false;
	}
	s->cur->timeslice_us = us;
	return true;
}

bool sched_set_interleave(struct sched *s, uint64_t level)
{
	if (!s->cur || (!s->in_init && !s->in_bind) || level > 2) {
		s->r->policy_errors++;
		return false;
	}
	s->cur->interleave = (uint32_t)level;
	return true;
}

bool sched_reject_bind(struct sched *s)
{
	if (!s->cur || !s->in_bind) {
		s->r->policy_errors++;
		return false;
	}
	s->cur->rejected = true;
	return true;
}

static uint32_t entries(uint32_t level)
{
	return level == 2 ? SIM_INTERLEAVE_HIGH : level == 1 ? SIM_INTERLEAVE_MEDIUM
							     : SIM_INTERLEAVE_LOW;
}

void sched_run(const uint32_t *tenants, const uint64_t *work_us, int n,
	       const struct sched_policy *policy, struct sched_result *out)
{
	memset(out, 0, sizeof(*out));
	struct sched s = { .r = out };
	if (n > SCHED_MAX_TSGS)
		n = SCHED_MAX_TSGS;
	out->ntsg = n;
	for (int i = 0; i < n; i++) {
		struct sched_tsg *t = &out->tsg[i];
		*t = (struct sched_tsg){ tenants[i], 0x100 + (uint64_t)i, SIM_TIMESLICE_US, 0,
					 false, work_us[i], 0, 0 };
		s.cur = t;
		s.in_init = true;
		if (policy && policy->task_init)
			policy->task_init(policy->arg, &s, t);
		s.in_init = false;
		s.in_bind = true;
		if (policy && policy->bind)
			policy->bind(policy->arg, &s, t);
		s.in_bind = false;
	}
	/* the runlist: each bound TSG, interleave-level times */
	int list[SCHED_MAX_TSGS * 4], nl = 0;
	for (uint32_t round = 0; round < SIM_INTERLEAVE_HIGH; round++)
		for (int i = 0; i < n; i++)
			if (!out->tsg[i].rejected && round < entries(out->tsg[i].interleave))
				list[nl++] = i;
	uint64_t now = 0;
	int last = -1;
	for (bool left = nl > 0; left;) {
		left = false;
		for (int e = 0; e < nl; e++) {
			struct sched_tsg *t = &out->tsg[list[e]];
			if (t->done_us >= t->work_us)
				continue;
			if (last != list[e]) {
				now += SIM_SWITCH_US;
				out->switches++;
				last = list[e];
			}
			uint64_t run = t->work_us - t->done_us;
			if (run > t->timeslice_us)
				run = t->timeslice_us;
			now += run;
			t->done_us += run;
			if (t->done_us >= t->work_us)
				t->finish_us = now;
			else
				left = true;
		}
	}
	out->makespan_us = now;
	for (int i = 0; i < n; i++) {
		s.cur = &out->tsg[i];
		if (policy && policy->task_destroy)
			policy->task_destroy(policy->arg, &s, &out->tsg[i]);
	}
}
