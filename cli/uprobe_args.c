/* A uprobe's args from DWARF (struct program's dwarf_args): the target
 * found as an attach point's is, its function's parameters read by
 * symbols/host_dwarf.c, typed as the language reads them. */
#include "uprobe_args.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "host_dwarf.h"
#include "host_path.h"

int uprobe_dwarf_args(struct arena *a, const char *target, int target_pid, const char *func,
		      struct dwarf_args *out, const char **why)
{
	char path[PATH_MAX], err[PATH_MAX + 128];
	struct host_dparam *p;
	struct host_drecords recs;
	int np;
	if (host_resolve_target(target, target_pid, path, sizeof(path))) {
		*why = arena_printf(a, "uprobe target file '%s' not found", target);
		return -1;
	}
	if (host_dwarf_params(path, func, &p, &np, &recs, err, sizeof(err))) {
		*why = arena_strdup(a, err);
		return -1;
	}
	struct field *f = arena_zalloc(a, ((size_t)np + 1) * sizeof(*f));
	int *r = arena_zalloc(a, ((size_t)np + 1) * sizeof(*r));
	int *stars = arena_zalloc(a, ((size_t)np + 1) * sizeof(*stars));
	const char **records = arena_zalloc(a, ((size_t)np + 1) * sizeof(*records));
	for (int i = 0; i < np; i++) {
		/* integers as their size and sign say; pointers, and what
		 * cannot be read, as 64-bit addresses (str(), buf() read them) */
		bool integer = p[i].reg >= 0 && !strchr(p[i].ctype, '*');
		f[i].name = arena_strdup(a, p[i].name);
		f[i].type = integer ? TYPE_INT(p[i].size * 8, p[i].is_signed)
				    : TYPE_U64;
		f[i].unif = UNIF_UNIFORM;
		f[i].doc = arena_printf(a, "%s %s", p[i].ctype, p[i].name);
		r[i] = p[i].reg;
		records[i] = p[i].record ? arena_strdup(a, p[i].record) : NULL;
		stars[i] = p[i].stars;
	}
	*out = (struct dwarf_args){ .fields = f, .regs = r, .records = records, .stars = stars,
				    .n = (size_t)np, .ndefs = recs.n };
	out->defs = recs.defs ? arena_strdup(a, recs.defs) : NULL;
	out->def_names = arena_zalloc(a, ((size_t)recs.n + 1) * sizeof(*out->def_names));
	out->def_sizes = arena_zalloc(a, ((size_t)recs.n + 1) * sizeof(*out->def_sizes));
	for (int i = 0; i < recs.n; i++) {
		out->def_names[i] = arena_strdup(a, recs.name[i]);
		out->def_sizes[i] = recs.size[i];
	}
	host_dparams_free(p, np);
	host_drecords_free(&recs);
	return 0;
}

int uprobe_object_size(const char *target, int target_pid, const char *sym, uint64_t *size)
{
	char path[PATH_MAX];
	uint64_t addr;
	if (host_resolve_target(target, target_pid, path, sizeof(path)) ||
	    host_object_addr(path, sym, &addr, size))
		return -1;
	return 0;
}

const char *uprobe_dwarf_record(struct arena *a, const char *target, int target_pid,
				const char *rec)
{
	char path[PATH_MAX], err[PATH_MAX + 128];
	struct host_drecords recs;
	if (host_resolve_target(target, target_pid, path, sizeof(path)) ||
	    host_dwarf_record(path, rec, &recs, err, sizeof(err)))
		return NULL;
	const char *defs = recs.defs ? arena_strdup(a, recs.defs) : NULL;
	host_drecords_free(&recs);
	return defs;
}
