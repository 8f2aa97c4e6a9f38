/* gpux's cache of instrumented modules (rt.h: rt_cache_*): a patched
 * module linked with the helper library's cubin costs the driver's
 * compiler a few hundred milliseconds per module, every run; the same
 * inputs give the same cubin, so the second run of a job loads it from
 * here instead. The key covers everything the cubin depends on: the
 * patched PTX (the user's code and the probes' both), the library's
 * cubin, the register cap, the device's architecture and the driver's
 * version. Files are written whole (a temporary file renamed), checked
 * when read (magic, key, length, ELF), and the folder is used only if
 * this user owns it and nobody else may write there: a cubin from here
 * runs inside the program. When the folder grows past its bound
 * (GPUX_CACHE_MAX_MB, 1024 by default) the least recently used files
 * go. */
#include "rt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#define CACHE_MAGIC "GPUXMOD1"
#define CACHE_HDR 32 /* magic, key[2], size */
#define CACHE_MAX_FILES 4096

void rt_cache_key(struct rt_cache_key *k, const char *ptx, const void *lib, size_t lib_size,
		  unsigned arch, unsigned cap)
{
	int driver = 0;
	CUresult (*ver)(int *) = (CUresult(*)(int *))rt_cuda_sym("cuDriverGetVersion");
	if (ver)
		ver(&driver);
	uint32_t w[3] = { arch, cap, (uint32_t)driver };
	/* two FNV-1a sums from different seeds: 128 bits */
	uint64_t seeds[2] = { RT_FNV_SEED, 0x84222325cbf29ce4ull };
	for (int i = 0; i < 2; i++) {
		uint64_t h = rt_fnv(seeds[i], w, sizeof(w));
		h = rt_fnv(h, ptx, strlen(ptx));
		h = rt_fnv(h, "\0", 1);
		k->h[i] = rt_fnv(h, lib, lib_size);
	}
}

/* The cache folder (created 0700), or false: none, refused or off. */
static bool folder(char *dir, size_t len)
{
	static int state = -1; /* -1 not looked yet, 0 none, 1 there */
	static char path[1024];
	if (state >= 0) {
		snprintf(dir, len, "%s", path);
		return state == 1;
	}
	state = 0;
	const struct gpux_sess_hdr *h = rt_sess();
	if (h && (h->flags & GPUX_SESS_NO_CACHE))
		return false;
	const char *d = getenv("GPUX_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"),
		   *home = getenv("HOME");
	int n;
	if (d && *d)
		n = snprintf(path, sizeof(path), "%s", d);
	else if (x && *x)
		n = snprintf(path, sizeof(path), "%s/gpux", x);
	else if (home && *home)
		n = snprintf(path, sizeof(path), "%s/.cache/gpux", home);
	else
		return false;
	if (n <= 0 || (size_t)n >= sizeof(path))
		return false;
	/* make the folders that are missing, the last one ours alone */
	for (char *p = path + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	mkdir(path, 0700);
	struct stat st;
	if (stat(path, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		if (h && (h->flags & GPUX_SESS_VERBOSE))
			rt_warn("the module cache %s is not a folder only this user may write; "
				"it is not used", path);
		return false;
	}
	state = 1;
	snprintf(dir, len, "%s", path);
	return true;
}

static void file_of(char *buf, size_t len, const char *dir, const struct rt_cache_key *k)
{
	snprintf(buf, len, "%s/%016llx%016llx.cubin", dir, (unsigned long long)k->h[0],
		 (unsigned long long)k->h[1]);
}

void *rt_cache_get(const struct rt_cache_key *k, size_t *size)
{
	char dir[1024], path[1200];
	if (!folder(dir, sizeof(dir)))
		return NULL;
	file_of(path, sizeof(path), dir, k);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	struct stat st;
	unsigned char hdr[CACHE_HDR];
	void *cubin = NULL;
	uint64_t key[2], n = 0;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    st.st_size > CACHE_HDR && read(fd, hdr, CACHE_HDR) == CACHE_HDR) {
		memcpy(key, hdr + 8, 16);
		memcpy(&n, hdr + 24, 8);
		if (!memcmp(hdr, CACHE_MAGIC, 8) && key[0] == k->h[0] && key[1] == k->h[1] &&
		    n == (uint64_t)st.st_size - CACHE_HDR && n >= 4 && (cubin = malloc(n))) {
			if (read(fd, cubin, n) != (ssize_t)n || memcmp(cubin, "\177ELF", 4)) {
				free(cubin);
				cubin = NULL;
			}
		}
	}
	close(fd);
	if (cubin) {
		*size = n;
		utimes(path, NULL); /* recently used */
	}
	return cubin;
}

/* Removes the least recently used files until the folder holds at most
 * the bound. */
static void trim(const char *dir)
{
	const char *m = getenv("GPUX_CACHE_MAX_MB");
	uint64_t bound = (m && *m ? strtoull(m, NULL, 10) : 1024) << 20, total = 0;
	struct ent {
		char name[64];
		time_t t;
		uint64_t size;
	} *v = calloc(CACHE_MAX_FILES, sizeof(*v));
	DIR *d = v ? opendir(dir) : NULL;
	size_t n = 0;
	char path[1200];
	for (struct dirent *e; d && n < CACHE_MAX_FILES && (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		struct stat st;
		if (len != 38 || strcmp(e->d_name + 32, ".cubin"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		memcpy(v[n].name, e->d_name, len + 1); /* 38 bytes and the NUL */
		v[n].t = st.st_mtime;
		v[n].size = (uint64_t)st.st_size;
		total += v[n++].size;
	}
	if (d)
		closedir(d);
	while (total > bound && n) {
		size_t old = 0;
		for (size_t i = 1; i < n; i++)
			if (v[i].t < v[old].t)
				old = i;
		snprintf(path, sizeof(path), "%s/%s", dir, v[old].name);
		unlink(path);
		total -= v[old].size;
		v[old] = v[--n];
	}
	free(v);
}

void rt_cache_put(const struct rt_cache_key *k, const void *cubin, size_t size)
{
	char dir[1024], path[1200], tmp[1300];
	if (!folder(dir, sizeof(dir)))
		return;
	file_of(path, sizeof(path), dir, k);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	unsigned char hdr[CACHE_HDR];
	uint64_t n = size;
	memcpy(hdr, CACHE_MAGIC, 8);
	memcpy(hdr + 8, k->h, 16);
	memcpy(hdr + 24, &n, 8);
	bool ok = write(fd, hdr, CACHE_HDR) == CACHE_HDR && write(fd, cubin, size) == (ssize_t)size;
	ok = !close(fd) && ok;
	if (!ok || rename(tmp, path)) {
		unlink(tmp);
		return;
	}
	trim(dir);
}
