/* Build-time driver for the GPU app cases: splices the probes of one gpux
 * program (`gpux -d ptx` output) into an nvcc-made PTX module with the
 * runtime's rewriter, giving every function the kernel id the case
 * expects (the func_id callback), so the GPU run can check the id that
 * lands in map keys.
 *
 *   app_rewrite -p PROBES.ptx -b DEVICE.bpf -o OUT.ptx [-s SITES]
 *               [-i NAME=ID]... IN.ptx
 *
 * The probes to splice come from DEVICE.bpf (`gpux --emit`): each
 * `gpux_probe_N: gdev:KIND` line becomes { KIND, all functions,
 * gpux_probe_N }. Every function the rewriter asks an id for must have a
 * -i (exit 1 otherwise), so no id is left to the default index by
 * accident. SITES gets one line per function:
 *   kernel|func NAME id=ID KIND=N... ld=N st=N atom=N red=N generic=N skipped=N
 * then the rewriter's warnings. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_rewrite.h"

#define MAX_IDS 32
#define MAX_PROBES 16

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	if (b) {
		b[n] = 0;
		*len = (size_t)n;
	}
	fclose(f);
	return b;
}

struct ids {
	int n;
	const char *name[MAX_IDS];
	uint32_t id[MAX_IDS];
	const char *missing; /* first function without a -i */
};

static uint32_t func_id(void *arg, const char *name, bool is_kernel)
{
	struct ids *ids = arg;
	(void)is_kernel;
	for (int i = 0; i < ids->n; i++)
		if (!strcmp(ids->name[i], name))
			return ids->id[i];
	if (!ids->missing)
		ids->missing = strdup(name);
	return 0xffffffffu;
}

/* `gpux_probe_N: gdev:KIND` lines of device.bpf. */
static int parse_probes(char *bpf, struct ptx_probe *p, char names[][32])
{
	int n = 0;
	for (char *line = strtok(bpf, "\n"); line; line = strtok(NULL, "\n")) {
		char fn[32], kind[32];
		if (sscanf(line, "%31[a-z_0-9]: gdev:%31s", fn, kind) != 2 ||
		    strncmp(fn, "gpux_probe_", 11))
			continue;
		if (n == MAX_PROBES)
			return -1;
		int k;
		for (k = 0; k < PTX_SITE_COUNT; k++)
			if (!strcmp(kind, ptx_site_name(k)))
				break;
		if (k == PTX_SITE_COUNT) {
			fprintf(stderr, "app_rewrite: probe %s: no rewriter site for gdev:%s\n",
				fn, kind);
			return -1;
		}
		snprintf(names[n], 32, "%s", fn);
		p[n] = (struct ptx_probe){ (enum ptx_site_kind)k, NULL, names[n], 0 };
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *probes_path = NULL, *bpf_path = NULL, *out_path = NULL,
		   *sites_path = NULL, *in_path = NULL;
	struct ids ids = { 0 };
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-p") && i + 1 < argc)
			probes_path = argv[++i];
		else if (!strcmp(argv[i], "-b") && i + 1 < argc)
			bpf_path = argv[++i];
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out_path = argv[++i];
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			sites_path = argv[++i];
		else if (!strcmp(argv[i], "-i") && i + 1 < argc && ids.n < MAX_IDS) {
			char *eq = strchr(argv[++i], '=');
			if (!eq) {
				fprintf(stderr, "app_rewrite: bad -i %s\n", argv[i]);
				return 2;
			}
			*eq = 0;
			ids.name[ids.n] = argv[i];
			ids.id[ids.n++] = (uint32_t)strtoul(eq + 1, NULL, 0);
		} else if (argv[i][0] != '-' && !in_path)
			in_path = argv[i];
		else {
			in_path = NULL;
			break;
		}
	}
	if (!probes_path || !bpf_path || !out_path || !in_path) {
		fprintf(stderr, "usage: app_rewrite -p PROBES.ptx -b DEVICE.bpf -o OUT.ptx "
				"[-s SITES] [-i NAME=ID]... IN.ptx\n");
		return 2;
	}
	size_t bpf_len;
	char *bpf = slurp(bpf_path, &bpf_len);
	struct ptx_probe probes[MAX_PROBES];
	char names[MAX_PROBES][32];
	int nprobes = bpf ? parse_probes(bpf, probes, names) : -1;
	if (nprobes <= 0) {
		fprintf(stderr, "app_rewrite: no usable probes in %s\n", bpf_path);
		return 1;
	}
	struct ptx_rewrite_in in = { .probes = probes, .nprobes = nprobes,
				     .func_id = func_id, .arg = &ids };
	in.user = slurp(in_path, &in.user_len);
	in.probes_ptx = slurp(probes_path, &in.probes_len);
	if (!in.user || !in.probes_ptx) {
		fprintf(stderr, "app_rewrite: cannot read %s or %s\n", in_path, probes_path);
		return 1;
	}
	struct ptx_rewrite_out out;
	int rc = ptx_rewrite(&in, &out);
	if (rc) {
		fprintf(stderr, "app_rewrite: %s: %s\n", in_path, out.err);
	} else if (ids.missing) {
		fprintf(stderr, "app_rewrite: no -i for function %s\n", ids.missing);
		rc = 1;
	} else {
		FILE *o = fopen(out_path, "wb");
		if (!o || fwrite(out.ptx, 1, out.len, o) != out.len || fclose(o)) {
			fprintf(stderr, "app_rewrite: cannot write %s\n", out_path);
			rc = 1;
		}
		FILE *s = sites_path ? fopen(sites_path, "w") : stderr;
		for (int i = 0; s && i < out.nfuncs; i++) {
			const struct ptx_func_sites *f = &out.funcs[i];
			fprintf(s, "%s %s id=%u", f->is_kernel ? "kernel" : "func", f->name,
				f->id);
			for (int k = 0; k < PTX_SITE_COUNT; k++)
				fprintf(s, " %s=%u", ptx_site_name(k), f->sites[k]);
			fprintf(s, " ld=%u st=%u atom=%u red=%u generic=%u skipped=%u\n",
				f->loads, f->stores, f->atomics, f->reds, f->generic, f->skipped);
		}
		for (int i = 0; s && i < out.nwarnings; i++)
			fprintf(s, "warning: %s\n", out.warnings[i]);
		if (s && s != stderr)
			fclose(s);
	}
	ptx_rewrite_free(&out);
	free((char *)in.user);
	free((char *)in.probes_ptx);
	free(bpf);
	free((char *)ids.missing);
	return rc ? 1 : 0;
}
