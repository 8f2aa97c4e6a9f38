/* The debugfs control of each module: a folder with `run` (a workload
 * spec is written to it) and `result` (what the last run counted).
 * Header-only, for each module's *_main.c. */
#ifndef GPUX_KMOD_CONTROL_H
#define GPUX_KMOD_CONTROL_H

#include <linux/debugfs.h>
#include <linux/fs.h>
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

#endif
