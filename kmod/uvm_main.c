// SPDX-License-Identifier: GPL-2.0
/* gpux's stand-in for gpu_ext's nvidia-uvm: the struct_ops, kfuncs and
 * capture point of the real driver over the simulator's UVM model
 * (README.md says what is real and what is modelled). Control through
 * debugfs:
 *   echo 'seq:size=64m,gpu=32m' > /sys/kernel/debug/gpux_uvm/run
 *   cat /sys/kernel/debug/gpux_uvm/result
 * A write runs the workload to its end with the policy attached then (or
 * the default) and keeps its counts for the next read. */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "control.h"
#include "uvm_ops.h"
#include "uvm_run.h"

static struct dentry *dir;
KMOD_RUN_CONTROL(struct kmod_run_stats, kmod_run);

static int result_show(struct seq_file *m, void *v)
{
	const struct uvm_stats *s = &last.model;

	mutex_lock(&run_lock);
	seq_printf(m, "spec %s\nstatus %d\n", last_spec, last_rc);
	if (last_err[0])
		seq_printf(m, "error %s\n", last_err);
	if (!last_rc) {
		seq_printf(m, "accesses %llu\nfaults %llu\nbatches %llu\n", s->accesses, s->faults,
			   s->batches);
		seq_printf(m, "htod_bytes %llu\ndtoh_bytes %llu\n", s->htod_bytes, s->dtoh_bytes);
		seq_printf(m, "prefetched_pages %llu\nevictions %llu\nrefaults %llu\n",
			   s->prefetched_pages, s->evictions, s->refaults);
		seq_printf(m, "hook_calls %llu\npolicy_errors %llu\n", last.hook_calls,
			   s->policy_errors);
		seq_printf(m, "bad_returns %llu\nmoves %llu\nregions %llu\nunattached %llu\n",
			   last.bad_returns, last.moves, last.regions, last.unattached);
	}
	mutex_unlock(&run_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(result);

static int __init gpux_uvm_init(void)
{
	int rc = kmod_uvm_ops_init();

	if (rc) {
		pr_err("gpux_uvm: registering gpu_mem_ops: %d\n", rc);
		return rc;
	}
	dir = kmod_control_create("gpux_uvm", &run_fops, &result_fops);
	return 0;
}

static void __exit gpux_uvm_exit(void)
{
	debugfs_remove_recursive(dir);
}

module_init(gpux_uvm_init);
module_exit(gpux_uvm_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("gpu_ext's nvidia-uvm struct_ops over gpux's UVM model");
