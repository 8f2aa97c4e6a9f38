// SPDX-License-Identifier: GPL-2.0
/* gpux's stand-in for gpu_ext's nvidia module: nv_gpu_sched_ops and its
 * kfuncs over the simulator's time-slicing model (README.md). Control
 * through debugfs:
 *   echo 'mix:size=32m,gpu=24m,work=50' > /sys/kernel/debug/gpux_sched/run
 *   cat /sys/kernel/debug/gpux_sched/result */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "control.h"
#include "sched_ops.h"
#include "sched_run.h"

static struct dentry *dir;
KMOD_RUN_CONTROL(struct kmod_sched_stats, kmod_sched);

static int result_show(struct seq_file *m, void *v)
{
	const struct sched_result *s = &last.model;
	int i;

	mutex_lock(&run_lock);
	seq_printf(m, "spec %s\nstatus %d\n", last_spec, last_rc);
	if (last_err[0])
		seq_printf(m, "error %s\n", last_err);
	if (!last_rc) {
		seq_printf(m, "makespan_us %llu\nswitches %llu\npolicy_errors %llu\n",
			   s->makespan_us, s->switches, s->policy_errors);
		seq_printf(m, "hook_calls %llu\nunattached %llu\n", last.hook_calls,
			   last.unattached);
		for (i = 0; i < s->ntsg; i++)
			seq_printf(m, "tenant%u %llu/%u/%llu/%d\n", s->tsg[i].tenant,
				   s->tsg[i].timeslice_us, s->tsg[i].interleave,
				   s->tsg[i].finish_us, s->tsg[i].rejected);
	}
	mutex_unlock(&run_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(result);

static int __init gpux_sched_init(void)
{
	int rc = kmod_sched_ops_init();

	if (rc) {
		pr_err("gpux_sched: registering nv_gpu_sched_ops: %d\n", rc);
		return rc;
	}
	dir = kmod_control_create("gpux_sched", &run_fops, &result_fops);
	return 0;
}

static void __exit gpux_sched_exit(void)
{
	debugfs_remove_recursive(dir);
}

module_init(gpux_sched_init);
module_exit(gpux_sched_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("gpu_ext's nv_gpu_sched_ops over gpux's time-slicing model");
