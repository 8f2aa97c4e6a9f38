/* The debugfs control of each module: a folder with `run` (a workload
 * spec is written to it) and `result` (what the last run counted).
 * Header-only, for each module's *_main.c. */
#ifndef GPUX_KMOD_CONTROL_H
#define GPUX_KMOD_CONTROL_H

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#define KMOD_SPEC_MAX 256

/* The spec written, NUL-terminated and trimmed into spec. 0, or -errno. */
static inline int kmod_spec_from_user(char *spec, const char __user *ubuf, size_t len)
{
	if (len == 0 || len >= KMOD_SPEC_MAX)
		return -EINVAL;
	if (copy_from_user(spec, ubuf, len))
		return -EFAULT;
	spec[len] = 0;
	strim(spec);
	return 0;
}

static inline struct dentry *kmod_control_create(const char *name,
						 const struct file_operations *run,
						 const struct file_operations *result)
{
	struct dentry *dir = debugfs_create_dir(name, NULL);

	debugfs_create_file("run", 0200, dir, NULL, run);
	debugfs_create_file("result", 0400, dir, NULL, result);
	return dir;
}

/* Each module's run state and its `run` file: a write runs the spec
 * with run(spec, stats, err, errlen) into a fresh stats, one run at a
 * time (the kfuncs' state), and keeps it for `result`, whose show
 * function the module writes (the counts differ). Defines run_lock,
 * last (STATS), last_spec, last_err, last_rc and run_fops. */
#define KMOD_RUN_CONTROL(STATS, run)                                                  \
	static DEFINE_MUTEX(run_lock);                                                \
	static STATS last;                                                            \
	static char last_spec[KMOD_SPEC_MAX], last_err[256];                          \
	static int last_rc = -ENODATA;                                                \
                                                                                      \
	static ssize_t run_write(struct file *f, const char __user *ubuf, size_t len, \
				 loff_t *pos)                                         \
	{                                                                             \
		char spec[KMOD_SPEC_MAX];                                             \
		STATS *st;                                                            \
		int rc = kmod_spec_from_user(spec, ubuf, len);                        \
                                                                                      \
		if (rc)                                                               \
			return rc;                                                    \
		st = kzalloc(sizeof(*st), GFP_KERNEL);                                \
		if (!st)                                                              \
			return -ENOMEM;                                               \
		mutex_lock(&run_lock);                                                \
		last_err[0] = 0;                                                      \
		rc = run(spec, st, last_err, sizeof(last_err));                      \
		last = *st;                                                           \
		strscpy(last_spec, spec, sizeof(last_spec));                          \
		last_rc = rc;                                                         \
		mutex_unlock(&run_lock);                                              \
		kfree(st);                                                            \
		return rc ? rc : (ssize_t)len;                                        \
	}                                                                             \
                                                                                      \
	static const struct file_operations run_fops = {                              \
		.owner = THIS_MODULE,                                                 \
		.write = run_write,                                                   \
	}

#endif
