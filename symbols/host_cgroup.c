#include "host_cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <mntent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernfs node id a cgroup directory's file handle holds, as the
 * kernel's bpf_get_current_cgroup_id() gives it. */
int host_cgroup_id(const char *path, uint64_t *id)
{
	struct {
		struct file_handle fh;
		unsigned char bytes[8];
	} h = { .fh.handle_bytes = 8 };
	int mnt;
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mnt, 0) < 0)
		return errno;
	if (h.fh.handle_bytes != 8)
		return EOVERFLOW;
	memcpy(id, h.fh.f_handle, 8);
	return 0;
}

/* The directory under dir (dir itself included) whose cgroup id is id,
 * into found (PATH_MAX); depth bounds the walk. */
static bool find_dir(const char *dir, uint64_t id, int depth, char *found)
{
	uint64_t have = 0;
	if (host_cgroup_id(dir, &have) == 0 && have == id) {
		snprintf(found, PATH_MAX, "%s", dir);
		return true;
	}
	DIR *d = depth < 64 ? opendir(dir) : NULL;
	if (!d)
		return false;
	bool hit = false;
	for (struct dirent *e; !hit && (e = readdir(d));) {
		char sub[PATH_MAX];
		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) < (int)sizeof(sub))
			hit = find_dir(sub, id, depth + 1, found);
	}
	closedir(d);
	return hit;
}

struct hier {
	char name[256];
	char path[PATH_MAX]; /* from the root: "/a/b" */
};

static int by_name(const void *a, const void *b)
{
	const struct hier *x = a, *y = b;
	bool ux = !strcmp(x->name, "unified"), uy = !strcmp(y->name, "unified");
	if (ux != uy)
		return ux ? -1 : 1;
	return strcmp(x->name, y->name);
}

char *host_cgroup_path(uint64_t id, const char *glob)
{
	struct hier *hs = calloc(32, sizeof(*hs));
	int n = 0;
	if (!hs)
		return NULL;
	FILE *m = setmntent("/proc/mounts", "r");
	for (struct mntent *e; m && n < 32 && (e = getmntent(m));) {
		bool v2 = !strcmp(e->mnt_type, "cgroup2");
		if (!v2 && strcmp(e->mnt_type, "cgroup"))
			continue;
		const char *base = strrchr(e->mnt_dir, '/');
		snprintf(hs[n].name, sizeof(hs[n].name), "%s",
			 v2 ? "unified" : base ? base + 1 : e->mnt_dir);
		if (glob && fnmatch(glob, hs[n].name, 0))
			continue;
		char found[PATH_MAX];
		if (!find_dir(e->mnt_dir, id, 0, found))
			continue;
		size_t root = strlen(e->mnt_dir);
		snprintf(hs[n].path, sizeof(hs[n].path), "%s", found[root] ? found + root : "/");
		n++;
	}
	if (m)
		endmntent(m);
	qsort(hs, (size_t)n, sizeof(hs[0]), by_name);
	char *out = NULL;
	size_t len = 0;
	FILE *s = open_memstream(&out, &len);
	for (int i = 0; s && i < n; i++)
		fprintf(s, "%s%s:%s", i ? "," : "", hs[i].name, hs[i].path);
	free(hs);
	if (!s)
		return NULL;
	if (fclose(s)) {
		free(out);
		return NULL;
	}
	return out;
}
