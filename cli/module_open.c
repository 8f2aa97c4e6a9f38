#include "module_open.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One place; *there when the file exists, loadable or not. */
static void *try_open(const char *path, bool *there, char *why, size_t wlen, char *tried,
		      size_t tlen)
{
	size_t n = strlen(tried);
	if (n < tlen)
		snprintf(tried + n, tlen - n, "%s%s", n ? ", " : "", path);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h)
		return h;
	const char *e = dlerror();
	snprintf(why, wlen, "%s", e ? e : "cannot be loaded");
	*there = access(path, F_OK) == 0;
	return NULL;
}

/* The i-th place name may be: beside the gpux binary, then ../lib/gpux
 * from it (where the install rules put it). 0, or -1 past the last or
 * when the binary's folder is unknown (why says so). */
static int place(int i, const char *name, char *path, size_t len, char *why, size_t wlen)
{
	static const char *const rel[] = { "", "../lib/gpux/" };
	if (i >= (int)(sizeof(rel) / sizeof(rel[0])))
		return -1;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash = n > 0 ? memchr(exe, '/', (size_t)n) : NULL;
	if (!slash) {
		snprintf(why, wlen, "cannot find the gpux binary's folder (/proc/self/exe)");
		return -1;
	}
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	if (snprintf(path, len, "%s/%s%s", exe, rel[i], name) >= (int)len) {
		snprintf(why, wlen, "the path of %s is too long", name);
		return -1;
	}
	return 0;
}

int module_path(const char *name, char *path, size_t len)
{
	char why[128], first[PATH_MAX] = "";
	for (int i = 0; place(i, name, path, len, why, sizeof(why)) == 0; i++) {
		if (access(path, F_OK) == 0)
			return 0;
		if (i == 0)
			snprintf(first, sizeof(first), "%s", path);
	}
	if (len)
		snprintf(path, len, "%s", first);
	return -1;
}

void *module_open(const char *name, const char *env, char *why, size_t wlen, char *tried,
		  size_t tlen)
{
	bool there = false;
	if (tlen)
		tried[0] = '\0';
	snprintf(why, wlen, "not found");
	const char *over = env ? getenv(env) : NULL;
	if (over && *over)
		return try_open(over, &there, why, wlen, tried, tlen);
	char path[PATH_MAX + 64];
	void *h = NULL;
	int i = 0;
	for (; !h && !there && place(i, name, path, sizeof(path), why, wlen) == 0; i++)
		h = try_open(path, &there, why, wlen, tried, tlen);
	if (!h && !there && i > 0) /* every place looked at, none has it */
		snprintf(why, wlen, "%s not found", name);
	return h;
}
