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
#include <sys/stat.h>

#include "cubin.h"
#include "fatbin.h"
#include "kernel_list.h"

/* Triton's cache folder: TRITON_CACHE_DIR, else TRITON_HOME's or
 * HOME's .triton/cache (Triton's own rule). */
static int cache_dir(char *buf, size_t len)
{
	const char *d = getenv("TRITON_CACHE_DIR");
	if (d && *d)
		return snprintf(buf, len, "%s", d) < (int)len ? 0 : -1;
	const char *home = getenv("TRITON_HOME");
	if (!home || !*home)
		home = getenv("HOME");
	if (!home || !*home)
		return -1;
	return snprintf(buf, len, "%s/.triton/cache", home) < (int)len ? 0 : -1;
}

/* The whole file at path (malloc'd, NUL-terminated, *n bytes), or NULL. */
static char *slurp(const char *path, size_t *n)
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
	char *b = slurp(path, &n);
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
		char *text = slurp(path, &len);
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

char *rt_triton_ptx(const void *image, size_t size, char *where, size_t where_len)
{
	char dir[2048];
	if (where_len)
		*where = '\0';
	if (!size || cache_dir(dir, sizeof(dir)))
		return NULL;
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	if (where_len)
		snprintf(where, where_len, "%s", dir);
	char *ptx = NULL, sub[4096];
	bool clash = false;
	for (struct dirent *e; !clash && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) >= (int)sizeof(sub))
			continue;
		clash = look_in(sub, image, size, &ptx) < 0;
	}
	closedir(d);
	if (clash) {
		rt_warn("a cubin matches Triton kernels of different PTX in %s; its kernels run "
			"untouched", dir);
		free(ptx);
		return NULL;
	}
	return ptx;
}
