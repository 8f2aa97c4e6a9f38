// SPDX-License-Identifier: GPL-2.0
/* The scheduling hooks as the driver calls them, from sim/timeslice.c's
 * model: each tenant is a TSG whose task_init, bind and task_destroy
 * contexts the attached policy reads and acts on through the kfuncs. */
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/string.h>

#include "sched_ops.h"
#include "sched_run.h"
#include "hook_status.h"
#include "workload.h"

struct srun {
	struct sched *s;
	struct sched_tsg *tsg;
	struct kmod_sched_stats *st;
	struct wl_tenant ten[WL_MAX_TENANTS];
	int nten;
};

/* The driver calls these hooks in the process that makes the TSG, the
 * tenant's; here that is whoever wrote the spec. So while a hook runs
 * the writer takes the tenant's name (comm: what policies tell tenants
 * by, as in --sim); its pid stays its own. Hooks go through begin and
 * end, which also make t the TSG the kfuncs act on. */
struct hook_call {
	char saved[TASK_COMM_LEN];
};

static void begin(struct srun *r, struct sched *s, struct sched_tsg *t, struct hook_call *h)
{
	const char *comm = NULL;
	int i;

	r->s = s;
	r->tsg = t;
	for (i = 0; i < r->nten; i++)
		if (r->ten[i].pid == t->tenant)
			comm = r->ten[i].comm;
	task_lock(current);
	memcpy(h->saved, current->comm, TASK_COMM_LEN);
	if (comm)
		strscpy_pad(current->comm, comm, TASK_COMM_LEN);
	task_unlock(current);
}

static void end(struct srun *r, struct hook_call *h, int rc)
{
	task_lock(current);
	memcpy(current->comm, h->saved, TASK_COMM_LEN);
	task_unlock(current);
	r->s = NULL;
	if (rc == KMOD_NO_POLICY)
		r->st->unattached++;
	else if (rc != KMOD_NO_HOOK)
		r->st->hook_calls++;
}

static bool k_timeslice(void *arg, u64 us)
{
	struct srun *r = arg;

	return r->s && sched_set_timeslice(r->s, us);
}

static bool k_interleave(void *arg, u64 level)
{
	struct srun *r = arg;

	return r->s && sched_set_interleave(r->s, level);
}

static void k_reject(void *arg)
{
	struct srun *r = arg;

	if (r->s)
		sched_reject_bind(r->s);
}

static void h_init(void *arg, struct sched *s, struct sched_tsg *t)
{
	struct nv_gpu_task_init_ctx c = { .tsg_id = t->tsg_id,
					  .default_timeslice = t->timeslice_us,
					  .default_interleave = t->interleave };
	struct hook_call h;

	begin(arg, s, t, &h);
	end(arg, &h, kmod_sched_task_init(&c));
}

static void h_bind(void *arg, struct sched *s, struct sched_tsg *t)
{
	struct nv_gpu_bind_ctx c = { .tsg_id = t->tsg_id, .channel_count = 1,
				     .timeslice_us = t->timeslice_us,
				     .interleave_level = t->interleave, .allow = 1 };
	struct hook_call h;

	begin(arg, s, t, &h);
	end(arg, &h, kmod_sched_bind(&c));
}

static void h_destroy(void *arg, struct sched *s, struct sched_tsg *t)
{
	struct nv_gpu_task_destroy_ctx c = { .tsg_id = t->tsg_id };
	struct hook_call h;

	begin(arg, s, t, &h);
	end(arg, &h, kmod_sched_task_destroy(&c));
}

int kmod_sched(const char *spec, struct kmod_sched_stats *st, char *err, size_t errlen)
{
	struct srun r = { .st = st };
	struct sched_policy hooks = { .arg = &r, .task_init = h_init, .bind = h_bind,
				      .task_destroy = h_destroy };
	struct kmod_sched_env env = { .arg = &r, .set_timeslice = k_timeslice,
				      .set_interleave = k_interleave, .reject = k_reject };
	const struct wl_tenant *ten;
	u32 pids[WL_MAX_TENANTS];
	u64 work[WL_MAX_TENANTS];
	struct workload *w;
	struct wl_event ev;
	int n, i, got;

	memset(st, 0, sizeof(*st));
	if (workload_open(spec, &w, err, errlen))
		return -EINVAL;
	/* the tenants are the workload's, as gpux --sim finds them: all of
	 * its events first */
	while ((got = workload_next(w, &ev)) > 0)
		cond_resched();
	if (got < 0) {
		snprintf(err, errlen, "%s: %s", spec, workload_error(w));
		workload_close(w);
		return -EINVAL;
	}
	n = workload_tenants(w, &ten);
	for (i = 0; i < n; i++) {
		pids[i] = ten[i].pid;
		work[i] = ten[i].work_us;
		r.ten[i] = ten[i];
	}
	r.nten = n;
	workload_close(w);
	kmod_sched_set_env(&env);
	sched_run(pids, work, n, kmod_sched_attached() ? &hooks : NULL, &st->model);
	kmod_sched_set_env(NULL);
	return 0;
}
