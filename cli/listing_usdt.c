/* gpux -l 'usdt:TARGET[:[PROVIDER:]PROBE]' and gpux -p PID -l 'usdt:*':
 * the USDT probes of a binary (or of every file the process maps), as
 * bpftrace 0.17 lists them: sorted, each probe once however many sites
 * it has. The notes are read with symbols/host_usdt.h (no LLVM loaded). */
#include "listing.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "host_path.h"
#include "host_usdt.h"

static int by_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sites matching the globs as "usdt:FILE:PROVIDER:NAME" lines, FILE
 * shown (NULL: each site's own), sorted and each once. */
static int print_sites(FILE *out, const struct host_usdt_sites *all, const char *shown,
		       const char *prov, const char *name, char *err, size_t errlen)
{
	char **lines = calloc((size_t)all->n + 1, sizeof(*lines));
	int n = 0, rc = 0;
	for (int i = 0; lines && rc == 0 && i < all->n; i++) {
		const struct host_usdt_site *s = &all->v[i];
		if (!host_usdt_match(s, prov, name))
			continue;
		size_t len = strlen(shown ? shown : s->path) + strlen(s->provider) +
			     strlen(s->name) + 8;
		if (!(lines[n] = malloc(len)))
			rc = -1;
		else
			snprintf(lines[n++], len, "usdt:%s:%s:%s", shown ? shown : s->path,
				 s->provider, s->name);
	}
	if (!lines || rc) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	if (n > 1)
		qsort(lines, (size_t)n, sizeof(*lines), by_line);
	int count = 0;
	for (int i = 0; rc == 0 && i < n; i++)
		if (i == 0 || strcmp(lines[i], lines[i - 1])) {
			fprintf(out, "%s\n", lines[i]);
			count++;
		}
	for (int i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	return rc ? -1 : count;
}

int listing_usdt(FILE *out, const char *glob, long pid, char *err, size_t errlen)
{
	char buf[PATH_MAX + 256], *parts[5] = { NULL };
	int n = 0;
	if (!glob || snprintf(buf, sizeof(buf), "%s", glob) >= (int)sizeof(buf))
		return LISTING_NOT_MINE;
	for (char *p = buf; n < 5 && p; n++) {
		parts[n] = p;
		if ((p = strchr(p, ':')))
			*p++ = '\0';
	}
	const struct provider *prov = catalog_provider(parts[0]);
	if (!prov || prov->syntax != SYN_USDT || n > 4)
		return LISTING_NOT_MINE;
	const char *target = n > 1 ? parts[1] : "";
	/* without -p, a target must be one file: "usdt:*" is the template */
	bool whole_process = pid > 0 && !strchr(target, '/');
	if (!whole_process && (!*target || strpbrk(target, "*?[")))
		return LISTING_NOT_MINE;
	const char *pglob = n == 4 ? parts[2] : "*";
	const char *nglob = n >= 3 ? parts[n - 1] : "*";
	struct host_usdt_sites all = { 0 };
	char path[PATH_MAX], real[PATH_MAX], shown[PATH_MAX + 64];
	const char *as = NULL;
	int rc;
	if (whole_process) {
		rc = host_usdt_read_pid((int)pid, &all, err, errlen);
	} else if (host_resolve_target(target, (int)pid, path, sizeof(path)) ||
		   access(path, X_OK)) {
		snprintf(err, errlen, "usdt target file '%s' does not exist or is not executable",
			 target);
		return -1;
	} else {
		/* as written; with -p through the process's root, as bpftrace */
		as = strchr(target, '/') ? target : path;
		if (pid > 0 && realpath(path, real)) {
			snprintf(shown, sizeof(shown), "/proc/%ld/root%s", pid, real);
			as = shown;
		}
		rc = host_usdt_read(path, &all, err, errlen);
	}
	if (rc == 0)
		rc = print_sites(out, &all, as, pglob, nglob, err, errlen);
	host_usdt_free(&all);
	return rc;
}
