/* What the device module turns into: verified programs, the `-d bpf`
 * dump, the PTX module and the files of `--emit DIR`. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_asm.h"
#include "dev_lower.h"

int dev_compile(struct program *prog, struct dev_module *mod, struct diags *diags)
{
	if (dev_lower(prog, mod, diags) < 0)
		return -1;
	dev_map_facts(prog, mod);
	int n = 0;
	for (int k = 0; k < mod->nprobes; k++)
		if (!mod->probes[k].node->u.probe.maps_only)
			mod->probes[n++] = mod->probes[k];
	mod->nprobes = n;
	int rc = 0;
	for (int k = 0; k < mod->nprobes; k++) {
		if (simt_verify(&mod->probes[k].prog, diags, NULL) < 0)
			rc = -1;
		if (mod->probes[k].counted.ninsns &&
		    simt_verify(&mod->probes[k].counted, diags, NULL) < 0)
			rc = -1;
	}
	return rc;
}

int dev_verify_log(const struct dev_module *mod, struct diags *diags, FILE *log)
{
	int rc = 0;
	for (int k = 0; k < mod->nprobes; k++) {
		const struct dev_probe *dp = &mod->probes[k];
		struct simt_stats st;
		fprintf(log, "; %s (%s)\n", dp->func_name, dp->prog.name);
		if (simt_verify_log(&dp->prog, diags, &st, log) < 0) {
			rc = -1;
			continue;
		}
		fprintf(log, "; accepted: longest path %d insns, %d helper calls, %d map ops\n",
			st.longest_path, st.helper_calls, st.map_ops);
	}
	return rc;
}

static void dump_line(FILE *out, const struct program *prog, int line)
{
	size_t len;
	const char *text = source_line(&prog->src, line, &len);
	if (text)
		fprintf(out, "; %.*s\n", (int)len, text);
}

void dev_dump_bpf(FILE *out, const struct program *prog, const struct dev_module *mod)
{
	for (int k = 0; k < mod->nprobes; k++) {
		const struct dev_probe *dp = &mod->probes[k];
		const struct dev_prog *p = &dp->prog;
		/* The anonymous map prints as bpftrace names it: @. */
		struct dev_map *maps = calloc((size_t)p->nmaps + 1, sizeof(*maps));
		for (int m = 0; m < p->nmaps; m++) {
			maps[m] = p->maps[m];
			if (!*maps[m].name)
				maps[m].name = "@";
		}
		/* anytime: it may run at any point of a thread's life */
		fprintf(out, "%s%s: %s%s\n", k ? "\n" : "", dp->func_name, p->name,
			dp->anytime ? " ; anytime" : "");
		for (int m = 0; m < p->nmaps; m++) {
			const struct dev_map_meta *meta = &mod->map_meta[m];
			fprintf(out, ".map %s %u %u %u", maps[m].name,
				maps[m].key_size, maps[m].value_size,
				maps[m].max_entries);
			if (maps[m].agg == AGG_LHIST)
				fprintf(out, " ; lhist(%lld, %lld, %lld)",
					(long long)maps[m].lhist_min,
					(long long)maps[m].lhist_max,
					(long long)maps[m].lhist_step);
			else
				fprintf(out, " ; %s", maps[m].agg ? agg_name(maps[m].agg) : "value");
			for (int k = 0; k < meta->nkeys; k++)
				fprintf(out, "%s%s", k ? ", " : " [",
					meta->keys[k].kind == DEV_VAL_KERNEL ? "kernel id" : "int");
			fprintf(out, "%s%s%s\n", meta->nkeys ? "]" : "",
				meta->cross_layer ? " cross-layer" : "",
				maps[m].array ? " array" : "");
		}
		/* Each source line once, before the first instruction from it. */
		int nlines = 0;
		for (const char *c = prog->src.text; *c; c++)
			nlines += *c == '\n';
		char *shown = calloc((size_t)nlines + 2, 1);
		for (int i = 0; i < p->ninsns;) {
			int line = p->spans ? p->spans[i].first_line : 0;
			if (line > 0 && line <= nlines + 1 && !shown[line]) {
				shown[line] = 1;
				dump_line(out, prog, line);
			}
			fprintf(out, "%4d: ", i);
			i += bpf_disasm_insn(out, p->insns, i, p->ninsns, maps, p->nmaps);
			fputc('\n', out);
		}
		free(shown);
		free(maps);
	}
	for (int f = 0; f < mod->nfmts; f++) {
		const struct dev_printf *pf = &mod->fmts[f];
		fprintf(out, "%s; printf %d (%s): \"", f ? "" : "\n", pf->id,
			mod->probes[pf->probe].func_name);
		for (size_t c = 0; c < pf->fmt_len; c++) {
			unsigned char ch = (unsigned char)pf->fmt[c];
			if (ch == '\n')
				fputs("\\n", out);
			else if (ch == '"' || ch == '\\')
				fprintf(out, "\\%c", ch);
			else if (ch < 0x20 || ch >= 0x7f)
				fprintf(out, "\\x%02x", ch);
			else
				fputc(ch, out);
		}
		fputc('"', out);
		for (int a = 0; a < pf->nargs; a++)
			fprintf(out, " %s", pf->args[a].kind == DEV_VAL_KERNEL ? "kernel"
					   : pf->args[a].is_signed ? "s64" : "u64");
		fputc('\n', out);
	}
}

int dev_write_ptx(FILE *out, const struct dev_module *mod, const char *target,
		  const char *lib, size_t lib_len, enum ptx_link link,
		  struct diags *diags)
{
	char vbuf[16];
	/* the library's .version only where its text comes along */
	bool with_lib = lib && link == PTX_LINK_SAME_MODULE;
	const char *ver = ptx_jit_version_for(with_lib ? lib : NULL, lib_len, vbuf, sizeof(vbuf));
	/* The table is the module's; a probe-less dev_prog carries it. */
	struct dev_prog table = { .maps = mod->maps, .nmaps = mod->nmaps };
	int rc = 0;
	ptx_jit_module_header(out, ver, target, link);
	ptx_jit_map_decls(out, &table, link);
	for (int k = 0; k < mod->nprobes; k++) {
		const struct dev_probe *dp = &mod->probes[k];
		if (ptx_jit(&dp->prog, dp->func_name, out, diags) < 0)
			rc = -1;
		if (dp->counted.ninsns && ptx_jit(&dp->counted, dp->counted_name, out, diags) < 0)
			rc = -1;
	}
	if (with_lib)
		ptx_jit_append_library(out, lib, lib_len);
	return rc;
}

/* DIR/NAME: the module in one of its link forms. */
static int emit_ptx(const char *dir, const char *name, const struct dev_module *mod,
		    const char *lib, size_t lib_len, enum ptx_link link, struct diags *diags)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f) {
		diag_error_nospan(diags, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	int rc = dev_write_ptx(f, mod, "sm_80", lib, lib_len, link, diags);
	if (fclose(f) != 0 && rc == 0) {
		diag_error_nospan(diags, "cannot write %s: %s", path, strerror(errno));
		rc = -1;
	}
	return rc;
}

int dev_emit_dir(const char *dir, const struct program *prog,
		 const struct dev_module *mod, const char *lib, size_t lib_len,
		 struct diags *diags)
{
	int rc = emit_ptx(dir, "device.ptx", mod, lib, lib_len, PTX_LINK_SAME_MODULE, diags);
	/* after a success only: the JIT's diagnostics are said once */
	if (rc == 0)
		rc = emit_ptx(dir, "device.link.ptx", mod, lib, lib_len, PTX_LINK_LIBRARY_CUBIN,
			      diags);
	char path[4096];
	snprintf(path, sizeof(path), "%s/device.bpf", dir);
	FILE *f = fopen(path, "w");
	if (!f) {
		diag_error_nospan(diags, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	dev_dump_bpf(f, prog, mod);
	if (fclose(f) != 0) {
		diag_error_nospan(diags, "cannot write %s: %s", path, strerror(errno));
		rc = -1;
	}
	return rc;
}
