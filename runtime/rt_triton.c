/* Triton's cubins (rt.h: rt_triton_ptx). Triton (and torch.compile's
 * Inductor, and anything else built on it) compiles PTX itself, runs
 * ptxas and loads the cubin: no PTX reaches the driver. But its cache
 * keeps the PTX beside the cubin it made, one folder per kernel:
 *   CACHE/HASH/NAME.cubin, NAME.ptx, NAME.json
 * A loaded cubin is matched by its bytes, never by name or guess: only
 * a cached cubin identical to the loaded one gives its PTX, the PTX must
 * define every kernel the cubin does, and two different PTX texts for
 * the same cubin leave it untouched. The instrumented module is made
 * here and loaded by this process only: nothing is written to Triton's
 * cache, so no later run without gpux can be served it. */
#include "rt.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cubin.h"
#include "fatbin.h"
#include "kernel_list.h"

/* The caches a Triton cubin's PTX may be in, Triton's own rules:
 * TRITON_CACHE_DIR, else TRITON_HOME's or HOME's .triton/cache, each
 * CACHE/HASH/; and Inductor's (torch.compile), which keeps one Triton
 * cache per device under its own folder: TORCHINDUCTOR_CACHE_DIR, else
 * TMPDIR's (or /tmp's) torchinductor_USER, each CACHE/triton/DEV/HASH/. */
struct root {
	char dir[2048];
	int depth; /* folders between dir and a kernel's files */
};

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

/* The user name as Python's getpass.getuser() gives it, with the
 * characters Inductor replaces replaced. */
static void user_name(char *buf, size_t len)
{
	const char *u = env("LOGNAME");
	if (!u)
		u = env("USER");
	if (!u)
		u = env("LNAME");
	if (!u)
		u = env("USERNAME");
	struct passwd *pw = u ? NULL : getpwuid(geteuid());
	snprintf(buf, len, "%s", u ? u : pw ? pw->pw_name : "");
	for (char *c = buf; *c; c++)
		if (strchr("\\/:*?\"<>|", *c))
			*c = '_';
}

static int roots(struct root r[2])
{
	int n = 0;
	const char *d = env("TRITON_CACHE_DIR"), *home = env("TRITON_HOME");
	if (!home)
		home = env("HOME");
	if (d)
		snprintf(r[n++].dir, sizeof(r->dir), "%s", d);
	else if (home)
		snprintf(r[n++].dir, sizeof(r->dir), "%s/.triton/cache", home);
	const char *ind = env("TORCHINDUCTOR_CACHE_DIR");
	if (ind) {
		snprintf(r[n].dir, sizeof(r->dir), "%s/triton", ind);
	} else {
		const char *tmp = env("TMPDIR");
		if (!tmp)
			tmp = env("TEMP");
		if (!tmp)
			tmp = env("TMP");
		char user[256];
		user_name(user, sizeof(user));
		snprintf(r[n].dir, sizeof(r->dir), "%s/torchinductor_%s/triton", tmp ? tmp : "/tmp",
			 user);
	}
	r[n++].depth = 1;
	return n;
}

char *rt_slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && st.st_size >= 0 && st.st_size < (1 << 30) &&
	    (buf = malloc((size_t)st.st_size + 1))) {
		*n = fread(buf, 1, (size_t)st.st_size, f);
		if (*n != (size_t)st.st_size) {
			free(buf);
			buf = NULL;
		} else {
			buf[*n] = '\0';
		}
	}
	fclose(f);
	return buf;
}

/* Whether the file at path holds exactly the size bytes at image. */
static bool same_bytes(const char *path, const void *image, size_t size)
{
	struct stat st;
	if (stat(path, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size != size)
		return false;
	size_t n;
	char *b = rt_slurp(path, &n);
	bool same = b && n == size && !memcmp(b, image, size);
	free(b);
	return same;
}

/* Whether ptx defines every kernel the cubin does. */
static bool defines_all(const char *ptx, const void *image, size_t size)
{
	struct gpux_names k = { 0 }, p = { 0 };
	bool ok = gpux_cubin_kernels(image, size, &k) == GPUX_FB_OK &&
		  gpux_ptx_names(ptx, &p) == GPUX_FB_OK && k.n > 0;
	for (size_t i = 0; ok && i < k.n; i++)
		ok = gpux_names_has(&p, k.name[i]);
	gpux_names_free(&k);
	gpux_names_free(&p);
	return ok;
}

/* The PTX beside one cached cubin identical to image in folder dir:
 * 1 found (*ptx), 0 none, -1 two that disagree. */
static int look_in(const char *dir, const void *image, size_t size, char **ptx)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int found = 0;
	char path[4096];
	for (struct dirent *e; found >= 0 && (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (n < 7 || strcmp(e->d_name + n - 6, ".cubin"))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path) ||
		    !same_bytes(path, image, size))
			continue;
		/* NAME.cubin -> NAME.ptx */
		snprintf(path + strlen(path) - 6, 7, ".ptx");
		size_t len;
		char *text = rt_slurp(path, &len);
		if (!text || strlen(text) != len || !defines_all(text, image, size)) {
			free(text);
			continue;
		}
		if (*ptx && strcmp(*ptx, text))
			found = -1;
		else if (!*ptx)
			*ptx = text, text = NULL, found = 1;
		free(text);
	}
	closedir(d);
	return found;
}

/* Every kernel folder depth levels under dir. -1 on a clash. */
static int scan(const char *dir, int depth, const void *image, size_t size, char **ptx)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	char sub[4096];
	int rc = 0;
	for (struct dirent *e; rc >= 0 && (e = readdir(d));) {
		if (e->d_name[0] == '.' ||
		    snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) >= (int)sizeof(sub))
			continue;
		rc = depth ? scan(sub, depth - 1, image, size, ptx)
			   : (look_in(sub, image, size, ptx) < 0 ? -1 : 0);
	}
	closedir(d);
	return rc;
}

int rt_triton_ptx(const void *image, size_t size, char **out, char *where, size_t where_len)
{
	struct root r[2] = { 0 };
	int n = size ? roots(r) : 0;
	char *ptx = NULL;
	*out = NULL;
	size_t used = 0;
	if (where_len)
		*where = '\0';
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (stat(r[i].dir, &st) || !S_ISDIR(st.st_mode))
			continue;
		if (where_len && used < where_len)
			used += (size_t)snprintf(where + used, where_len - used, "%s%s",
						 used ? " or " : "", r[i].dir);
		if (scan(r[i].dir, r[i].depth, image, size, &ptx) < 0) {
			rt_warn("a cubin matches Triton kernels of different PTX in %s; its kernels "
				"run untouched", r[i].dir);
			free(ptx);
			return -1;
		}
	}
	*out = ptx;
	return ptx ? 1 : 0;
}
