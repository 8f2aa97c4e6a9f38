/* Test driver for the PTX rewriter:
 *   rewrite_ptx -p PROBES.ptx [-P KIND:GLOB:FUNC[:ONLY]]... [-R KERNEL=N]...
 *               [-u 1|2] [-V] [-s SITES] IN.ptx
 * prints the rewritten module, writes per-function site counts and the
 * warnings to SITES (or stderr). KIND is a ptx_site_name; ONLY the
 * probe's GPUX_SITE_* bits (abi/probe_site.h, default 0); GLOB "*"
 * matches every function; -R caps KERNEL at N registers (max_regs);
 * -u makes IN the first (1) or a later (2) unit of a relocatable link;
 * -V remaps the module's variables as for a live session's copy
 * (ptx_vars.h) and lists them, in table order, with the sites.
 * Exit 1 with the error if the rewrite fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_rewrite.h"
#include "ptx_vars.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *p = malloc(cap);
	size_t got;
	while (p && (got = fread(p + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *q = realloc(p, cap *= 2);
			if (!q) {
				free(p);
				p = NULL;
			}
			p = q;
		}
	}
	fclose(f);
	*len = n;
	return p;
}

static int parse_probe(char *spec, struct ptx_probe *p)
{
	char *glob = strchr(spec, ':');
	char *func = glob ? strchr(glob + 1, ':') : NULL;
	if (!func)
		return -1;
	*glob++ = 0;
	*func++ = 0;
	char *only = strchr(func, ':');
	if (only)
		*only++ = 0;
	for (int k = 0; k < PTX_SITE_COUNT; k++)
		if (!strcmp(spec, ptx_site_name(k))) {
			p->kind = k;
			p->glob = strcmp(glob, "*") ? glob : NULL;
			p->func = func;
			p->only = only ? (unsigned)strtoul(only, NULL, 0) : 0;
			return 0;
		}
	return -1;
}

struct cap {
	const char *name;
	unsigned regs;
};
static struct cap caps[64];
static int ncaps;

static unsigned max_regs(void *arg, const char *name)
{
	(void)arg;
	for (int i = 0; i < ncaps; i++)
		if (!strcmp(caps[i].name, name))
			return caps[i].regs;
	return 0;
}

int main(int argc, char **argv)
{
	struct ptx_probe probes[64];
	int nprobes = 0;
	const char *probes_path = NULL, *sites_path = NULL, *in_path = NULL;
	int unit = 0;
	int vars = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-p") && i + 1 < argc)
			probes_path = argv[++i];
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			sites_path = argv[++i];
		else if (!strcmp(argv[i], "-P") && i + 1 < argc && nprobes < 64) {
			if (parse_probe(argv[++i], &probes[nprobes++])) {
				fprintf(stderr, "bad probe %s\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "-V")) {
			vars = 1;
		} else if (!strcmp(argv[i], "-u") && i + 1 < argc) {
			unit = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-R") && i + 1 < argc && ncaps < 64) {
			char *eq = strchr(argv[++i], '=');
			if (!eq) {
				fprintf(stderr, "bad cap %s\n", argv[i]);
				return 2;
			}
			*eq = 0;
			caps[ncaps++] = (struct cap){ argv[i], (unsigned)strtoul(eq + 1, NULL, 10) };
		} else
			in_path = argv[i];
	}
	if (!probes_path || !in_path) {
		fprintf(stderr, "usage: rewrite_ptx -p PROBES.ptx [-P KIND:GLOB:FUNC]... [-s SITES] IN.ptx\n");
		return 2;
	}
	struct ptx_rewrite_in in = { .probes = probes, .nprobes = nprobes,
				     .max_regs = ncaps ? max_regs : NULL, .unit = (enum ptx_unit)unit };
	in.user = slurp(in_path, &in.user_len);
	in.probes_ptx = slurp(probes_path, &in.probes_len);
	if (!in.user || !in.probes_ptx) {
		fprintf(stderr, "cannot read %s or %s\n", in_path, probes_path);
		return 2;
	}
	struct ptx_rewrite_out out;
	int rc = ptx_rewrite(&in, &out);
	FILE *s = sites_path ? fopen(sites_path, "w") : stderr;
	if (!s)
		s = stderr;
	char *remapped = NULL;
	size_t rlen = 0;
	struct ptx_var_list list = { 0 };
	if (!rc && vars) {
		int v = ptx_vars_list(out.ptx, out.len, &list, out.err, sizeof(out.err));
		if (!v)
			v = ptx_vars_remap(out.ptx, out.len, &remapped, &rlen, out.err,
					   sizeof(out.err));
		rc = v < 0;
	}
	if (rc) {
		fprintf(stderr, "error: %s\n", out.err);
	} else {
		if (remapped)
			fwrite(remapped, 1, rlen, stdout);
		else
			fwrite(out.ptx, 1, out.len, stdout);
		for (size_t i = 0; i < list.n; i++)
			fprintf(s, "var %zu %s\n", i, list.name[i]);
		for (int i = 0; i < out.nfuncs; i++) {
			const struct ptx_func_sites *f = &out.funcs[i];
			fprintf(s, "%s %s id=%u", f->is_kernel ? "kernel" : "func",
				f->name, f->id);
			for (int k = 0; k < PTX_SITE_COUNT; k++)
				fprintf(s, " %s=%u", ptx_site_name(k), f->sites[k]);
			fprintf(s, " ld=%u st=%u atom=%u red=%u generic=%u skipped=%u",
				f->loads, f->stores, f->atomics, f->reds,
				f->generic, f->skipped);
			if (f->max_regs)
				fprintf(s, " maxnreg=%u", f->max_regs);
			fputc('\n', s);
		}
		for (int i = 0; i < out.nwarnings; i++)
			fprintf(s, "warning: %s\n", out.warnings[i]);
	}
	if (s != stderr)
		fclose(s);
	ptx_rewrite_free(&out);
	ptx_var_list_free(&list);
	free(remapped);
	free((char *)in.user);
	free((char *)in.probes_ptx);
	return rc ? 1 : 0;
}
