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
	char exe[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(why, wlen, "cannot find the gpux binary's folder (/proc/self/exe)");
		return NULL;
	}
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	snprintf(path, sizeof(path), "%s/%s", exe, name);
	void *h = try_open(path, &there, why, wlen, tried, tlen);
	if (h || there)
		return h;
	snprintf(path, sizeof(path), "%s/../lib/gpux/%s", exe, name);
	h = try_open(path, &there, why, wlen, tried, tlen);
	if (!h && !there)
		snprintf(why, wlen, "%s not found", name);
	return h;
}
