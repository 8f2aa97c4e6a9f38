/* gpux -l 'uprobe:TARGET:GLOB' and gpux -p PID -l [GLOB]: the functions
 * of a binary one may attach to, as bpftrace 0.17 lists them, read from
 * its ELF symbols (symbols/host_path.h: no LLVM loaded). */
#include "listing.h"

#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "host_dwarf.h"
#include "host_path.h"

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "    TYPE NAME" for each parameter DWARF gives fn (nothing without) */
static void print_params(FILE *out, const char *path, const char *fn)
{
	struct host_dparam *p;
	struct host_drecords recs;
	int n;
	char err[PATH_MAX + 128];
	if (host_dwarf_params(path, fn, &p, &n, &recs, err, sizeof(err)))
		return;
	for (int i = 0; i < n; i++)
		fprintf(out, "    %s %s\n", p[i].ctype, p[i].name);
	host_dparams_free(p, n);
	host_drecords_free(&recs);
}

/* Each function of path matching sym_glob, sorted, as "PREFIX:NAME";
 * with params, a uprobe's parameters under each. */
static int print_syms(FILE *out, const char *path, const char *prefix, const char *sym_glob,
		      bool params, char *err, size_t errlen)
{
	struct host_syms s;
	if (host_glob_symbols(path, sym_glob, &s)) {
		snprintf(err, errlen, "cannot read the symbols of %s", path);
		return -1;
	}
	if (s.n > 1)
		qsort(s.name, (size_t)s.n, sizeof(*s.name), by_name);
	int count = 0;
	for (int i = 0; i < s.n; i++) {
		fprintf(out, "%s:%s\n", prefix, s.name[i]);
		if (params)
			print_params(out, path, s.name[i]);
		count++;
	}
	host_syms_free(&s);
	return count;
}

/* A target that is a glob (uprobe:./bin/x*:main): the functions of each
 * ELF file it matches, in order; files that are no ELF are passed over. */
static int list_files(FILE *out, const char *prov, const char *target_glob, const char *sym,
		      bool params)
{
	glob_t g;
	if (glob(target_glob, 0, NULL, &g))
		return 0;
	int count = 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char prefix[PATH_MAX + 16], err[PATH_MAX + 64];
		if (access(g.gl_pathv[i], R_OK))
			continue;
		snprintf(prefix, sizeof(prefix), "%s:%s", prov, g.gl_pathv[i]);
		int n = print_syms(out, g.gl_pathv[i], prefix, sym, params, err, sizeof(err));
		if (n > 0)
			count += n;
	}
	globfree(&g);
	return count;
}

/* With -p: the process's executable, seen through /proc/PID/root as
 * bpftrace names it; glob's last part ("uprobe:FUNC", as a -p program
 * names one) picks its functions. */
static int list_process(FILE *out, const char *glob, long pid, bool verbose,
			char *err, size_t errlen)
{
	char link[64], exe[PATH_MAX], path[PATH_MAX + 64], prefix[PATH_MAX + 96];
	snprintf(link, sizeof(link), "/proc/%ld/exe", pid);
	ssize_t n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(err, errlen, "cannot read %s: is process %ld running?", link, pid);
		return -1;
	}
	exe[n] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/root%s", pid, exe);
	snprintf(prefix, sizeof(prefix), "uprobe:%s", path);
	const char *sym = glob && strrchr(glob, ':') ? strrchr(glob, ':') + 1 : "*";
	return print_syms(out, path, prefix, *sym ? sym : "*", verbose, err, errlen);
}

int listing_uprobes(FILE *out, const char *glob, long pid, bool verbose, char *err,
		    size_t errlen)
{
	/* the provider as the catalog knows it, aliases ("u:") too */
	const char *pc = glob ? strchr(glob, ':') : NULL;
	char pname[32] = "";
	if (pc && (size_t)(pc - glob) < sizeof(pname))
		snprintf(pname, sizeof(pname), "%.*s", (int)(pc - glob), glob);
	const struct provider *prov = *pname ? catalog_provider(pname) : NULL;
	bool up = prov && prov->syntax == SYN_UPROBE;
	if (pid > 0 && glob && *glob && !up && strcmp(glob, "*"))
		return LISTING_NOT_MINE;
	const char *target = up ? pc + 1 : NULL;
	const char *colon = target ? strchr(target, ':') : NULL;
	if (pid <= 0) {
		/* a target: "uprobe:*" is the catalog's template */
		if (!colon || colon == target)
			return LISTING_NOT_MINE;
	}
	if (pid > 0)
		return list_process(out, glob, pid, verbose, err, errlen);
	char t[PATH_MAX];
	snprintf(t, sizeof(t), "%.*s", (int)(colon - target), target);
	const char *sym = *(colon + 1) ? colon + 1 : "*";
	/* a uretprobe's are gone when it fires: bpftrace lists none */
	bool params = verbose && prov->regs && prov->attach == ATTACH_UPROBE;
	if (strpbrk(t, "*?["))
		return list_files(out, prov->name, t, sym, params);
	char path[PATH_MAX], prefix[PATH_MAX + 16];
	/* a library need not be executable: it is mapped, not run */
	if (host_resolve_target(t, 0, path, sizeof(path)) || access(path, R_OK)) {
		snprintf(err, errlen, "uprobe target file '%s' does not exist or is not readable", t);
		return -1;
	}
	snprintf(prefix, sizeof(prefix), "%s:%s", prov->name, path);
	return print_syms(out, path, prefix, sym, params, err, errlen);
}
