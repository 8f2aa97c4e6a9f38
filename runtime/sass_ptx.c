/* The Sanitizer's patch module and its boot module, from the session's
 * probe module (sass_ptx.h). Text in, text out: no CUDA here. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sass_ptx.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpux_dev.h"
#include "ptx_scan.h"

#define GS_NODATA "gpux_sass_nodata"

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* One operand of "D, A, M;" into buf; the text after its separator. */
static const char *operand(const char *p, const char *end, char *buf, size_t cap)
{
	p = skip_ws(p, end);
	size_t n = 0;
	while (p < end && *p != ',' && *p != ';' && *p != '\n' && n + 1 < cap)
		buf[n++] = *p++;
	while (n && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		n--;
	buf[n] = '\0';
	return p < end && (*p == ',' || *p == ';') ? p + 1 : p;
}

/* redux.sync.OP.TYPE D, A, M; (the statement cleaned, in [p, end)) as a
 * loop over the lanes of M, each lane's A read with shfl.sync (ptxas
 * refuses redux in a tools patch), in place of the statement. false:
 * not a form we know. */
static bool redux(struct ptx_buf *b, const char *p, const char *end, int k)
{
	p = skip_ws(p, end) + strlen("redux.sync.");
	char op[8] = "", type[8] = "", d[64], a[64], m[64];
	size_t n = 0;
	while (p < end && *p != '.' && n + 1 < sizeof(op))
		op[n++] = *p++;
	op[n] = '\0';
	if (p == end || *p++ != '.')
		return false;
	for (n = 0; p < end && *p != ' ' && *p != '\t' && n + 1 < sizeof(type);)
		type[n++] = *p++;
	type[n] = '\0';
	static const char *const ops[] = { "add", "min", "max", "and", "or", "xor" };
	bool known = false;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		known |= !strcmp(op, ops[i]);
	if (!known || (strcmp(type, "u32") && strcmp(type, "s32") && strcmp(type, "b32")))
		return false;
	p = operand(p, end, d, sizeof(d));
	p = operand(p, end, a, sizeof(a));
	operand(p, end, m, sizeof(m));
	if (!*d || !*a || !*m)
		return false;
	ptx_buf_printf(b,
		       "{ // %s\n"
		       "\t.reg .b32 %%gpux_xm, %%gpux_xs, %%gpux_xa, %%gpux_xv, %%gpux_xl;\n"
		       "\t.reg .pred %%gpux_xp;\n"
		       "\tmov.b32 %%gpux_xm, %s;\n"
		       "\tmov.b32 %%gpux_xs, %s;\n"
		       "\tbfind.u32 %%gpux_xl, %%gpux_xm;\n"
		       "\tshfl.sync.idx.b32 %%gpux_xa, %%gpux_xs, %%gpux_xl, 31, %s;\n"
		       "\tshl.b32 %%gpux_xv, 1, %%gpux_xl;\n"
		       "\txor.b32 %%gpux_xm, %%gpux_xm, %%gpux_xv;\n"
		       "gpux_rx%d:\n"
		       "\tsetp.eq.b32 %%gpux_xp, %%gpux_xm, 0;\n"
		       "\t@%%gpux_xp bra gpux_rx%d_done;\n"
		       "\tbfind.u32 %%gpux_xl, %%gpux_xm;\n"
		       "\tshfl.sync.idx.b32 %%gpux_xv, %%gpux_xs, %%gpux_xl, 31, %s;\n"
		       "\t%s.%s %%gpux_xa, %%gpux_xa, %%gpux_xv;\n"
		       "\tshl.b32 %%gpux_xv, 1, %%gpux_xl;\n"
		       "\txor.b32 %%gpux_xm, %%gpux_xm, %%gpux_xv;\n"
		       "\tbra gpux_rx%d;\n"
		       "gpux_rx%d_done:\n"
		       "\tmov.b32 %s, %%gpux_xa;\n"
		       "\t}",
		       "redux.sync as shfl.sync", m, a, m, k, k, m, op, type, k, k, d);
	return true;
}

static void put_u64_of(struct ptx_buf *b, const char *sym, int slot)
{
	ptx_buf_printf(b,
		       "\tmov.u64 %%gs_a, %s;\n"
		       "\tcvta.global.u64 %%gs_a, %%gs_a;\n"
		       "\tst.u64 [%%gs_u+%d], %%gs_a;\n",
		       sym, 8 * slot);
}

static void boot_callback(struct ptx_buf *b, unsigned nmaps)
{
	ptx_buf_printf(b,
		       "\n.visible .func (.param .b32 gpux_sr) " GPUX_SASS_CB_BOOT
		       "(.param .b64 gpux_su, .param .b64 gpux_spc)\n{\n"
		       "\t.reg .b64 %%gs_u, %%gs_a;\n"
		       "\t.reg .b32 %%gs_t;\n"
		       "\tld.param.u64 %%gs_u, [gpux_su];\n");
	put_u64_of(b, GPUX_SYM_CTL, GPUX_SASS_T_CTL);
	put_u64_of(b, GPUX_SYM_CLOCK_OFF, GPUX_SASS_T_CLOCK);
	put_u64_of(b, GS_NODATA, GPUX_SASS_T_NODATA);
	put_u64_of(b, GPUX_SYM_GPU, GPUX_SASS_T_GPU);
	for (unsigned i = 0; i < nmaps; i++) {
		char sym[32];
		snprintf(sym, sizeof(sym), GPUX_SYM_MAP "%u", i);
		put_u64_of(b, sym, GPUX_SASS_T_MAPS + (int)i);
	}
	ptx_buf_printf(b, "\tmov.u32 %%gs_t, 0;\n"
			  "\tst.param.b32 [gpux_sr], %%gs_t;\n"
			  "\tret;\n}\n");
}

/* The callback for one kind of patch point: the kernel's record says
 * which probes fire; an access also passes the probe its address, size
 * and kind (Sanitizer flags: 1 read, 2 write, both for atomics, 8 a
 * prefetch, which is no access). Every test is uniform across the lanes
 * that call it together, so the probes run warp-collectively. */
static void callback(struct ptx_buf *b, enum ptx_site_kind kind, const struct ptx_probe *pr,
		     int n)
{
	bool acc = kind == PTX_SITE_ACCESS;
	const char *name = kind == PTX_SITE_KERNEL_ENTRY ? GPUX_SASS_CB_ENTER
			 : kind == PTX_SITE_KERNEL_EXIT	 ? GPUX_SASS_CB_EXIT
							 : GPUX_SASS_CB_ACCESS;
	ptx_buf_printf(b,
		       "\n.visible .func (.param .b32 gpux_sr) %s(.param .b64 gpux_su, "
		       ".param .b64 gpux_spc%s)\n{\n"
		       "\t.reg .b64 %%gs_u, %%gs_m, %%gs_b, %%gs_c0, %%gs_c1, %%gs_c2, %%gs_x;\n"
		       "\t.reg .b32 %%gs_k, %%gs_o, %%gs_t;\n"
		       "\t.reg .pred %%gs_p, %%gs_st, %%gs_ld, %%gs_at;\n"
		       "\tld.param.u64 %%gs_u, [gpux_su];\n"
		       "\tsetp.eq.u64 %%gs_p, %%gs_u, 0;\n"
		       "\t@%%gs_p bra gpux_nodata;\n"
		       "\tld.u32 %%gs_o, [%%gs_u+%zu];\n"
		       "\tsetp.eq.u32 %%gs_p, %%gs_o, 0;\n"
		       "\t@%%gs_p bra gpux_done;\n"
		       "\tld.u32 %%gs_k, [%%gs_u+%zu];\n"
		       "\tcvt.u64.u32 %%gs_c2, %%gs_k;\n",
		       name,
		       acc ? ", .param .b64 gpux_sptr, .param .b32 gpux_ssz, .param .b32 gpux_sfl, "
			     ".param .b64 gpux_sdat"
			   : "",
		       offsetof(struct gpux_sass_kernel, on),
		       offsetof(struct gpux_sass_kernel, kernel_id));
	if (acc)
		ptx_buf_printf(b, "\tld.param.u64 %%gs_c0, [gpux_sptr];\n"
				  "\tld.param.u32 %%gs_t, [gpux_ssz];\n"
				  "\tcvt.u64.u32 %%gs_c1, %%gs_t;\n"
				  "\tld.param.u32 %%gs_t, [gpux_sfl];\n"
				  "\tand.b32 %%gs_o, %%gs_t, %u;\n"
				  "\tsetp.ne.u32 %%gs_p, %%gs_o, 0;\n"
				  "\t@%%gs_p bra gpux_done;\n"
				  "\tand.b32 %%gs_o, %%gs_t, %u;\n"
				  "\tsetp.ne.u32 %%gs_st, %%gs_o, 0;\n"
				  "\tsetp.eq.u32 %%gs_ld, %%gs_o, 0;\n"
				  "\tand.b32 %%gs_o, %%gs_t, %u;\n"
				  "\tsetp.eq.u32 %%gs_at, %%gs_o, %u;\n"
				  "\tselp.u64 %%gs_x, 4294967296, 0, %%gs_st;\n"
				  "\tor.b64 %%gs_c1, %%gs_c1, %%gs_x;\n"
				  "\tselp.u64 %%gs_x, 1099511627776, 0, %%gs_at;\n"
				  "\tor.b64 %%gs_c1, %%gs_c1, %%gs_x;\n",
				  GPUX_SAN_PREFETCH, GPUX_SAN_WRITE, GPUX_SAN_READ | GPUX_SAN_WRITE,
				  GPUX_SAN_READ | GPUX_SAN_WRITE);
	else
		ptx_buf_printf(b, "\tmov.u64 %%gs_c0, 0;\n\tmov.u64 %%gs_c1, 0;\n");
	for (int i = 0; i < n && i < GPUX_SASS_MAX_PROBES; i++) {
		if (sass_ptx_point(&pr[i]) != kind)
			continue;
		ptx_buf_printf(b,
			       "\tld.u64 %%gs_m, [%%gs_u+%zu];\n"
			       "\tand.b64 %%gs_b, %%gs_m, %llu;\n"
			       "\tsetp.ne.u64 %%gs_p, %%gs_b, 0;\n",
			       offsetof(struct gpux_sass_kernel, mask) + 8 * (size_t)(i / 64),
			       1ull << (i % 64));
		if (acc && (pr[i].only & GPUX_SITE_STORES))
			ptx_buf_printf(b, "\tand.pred %%gs_p, %%gs_p, %%gs_st;\n");
		if (acc && (pr[i].only & GPUX_SITE_LOADS))
			ptx_buf_printf(b, "\tand.pred %%gs_p, %%gs_p, %%gs_ld;\n");
		if (acc && (pr[i].only & GPUX_SITE_ATOMICS))
			ptx_buf_printf(b, "\tand.pred %%gs_p, %%gs_p, %%gs_at;\n");
		static const char *const words[3] = { "%gs_c0", "%gs_c1", "%gs_c2" };
		ptx_call_probe(b, words, "@%gs_p", pr[i].func, "");
	}
	ptx_buf_printf(b, "\tbra gpux_done;\n"
			  "gpux_nodata:\n"
			  "\tred.global.add.u64 [" GS_NODATA "], 1;\n"
			  "gpux_done:\n"
			  "\tmov.u32 %%gs_t, 0;\n"
			  "\tst.param.b32 [gpux_sr], %%gs_t;\n"
			  "\tret;\n}\n");
}

enum ptx_site_kind sass_ptx_point(const struct ptx_probe *p)
{
	return p->kind == PTX_SITE_KERNEL_EXIT && (p->only & GPUX_SITE_ANYTIME)
		       ? PTX_SITE_KERNEL_ENTRY
		       : p->kind;
}

static bool has_point(const struct ptx_probe *pr, int n, enum ptx_site_kind kind)
{
	for (int i = 0; i < n; i++)
		if (sass_ptx_point(&pr[i]) == kind)
			return true;
	return false;
}

static int fail(struct sass_ptx *out, struct ptx_buf *a, struct ptx_buf *b, char *err,
		size_t errlen, const char *why)
{
	free(a->p);
	free(b->p);
	out->patch = out->boot = NULL;
	snprintf(err, errlen, "%s", why);
	return -1;
}

/* The kernel whose head (cleaned) is h: NULL when h is no kernel. */
static char *kernel_of(const char *h)
{
	bool kernel = false;
	char *name = ptx_has_word(h, ".entry") ? ptx_func_name(h, &kernel) : NULL;
	if (name && !kernel) {
		free(name);
		name = NULL;
	}
	return name;
}

int sass_ptx_make(const char *module, size_t len, const struct ptx_probe *probes,
		  int nprobes, unsigned nmaps, struct sass_ptx *out, char *err, size_t errlen)
{
	struct ptx_buf patch = { .max = 4 * len + (1u << 20) };
	struct ptx_buf boot = { .max = len + (1u << 16) };
	struct ptx_scan sc = { .s = module, .len = len };
	struct ptx_tok t;
	char *clean = NULL, why[200];
	size_t cap = 0, last = 0; /* the module is copied to the patch up to last */
	int nredux = 0;
	bool sampler = false;
	if (nprobes > GPUX_SASS_MAX_PROBES)
		return fail(out, &patch, &boot, err, errlen, "more probes than SASS patching takes");
	while (ptx_scan_next(&sc, &t, why, sizeof(why)) == 0 && t.kind != PTX_END) {
		const char *c = ptx_clean_tok(module, &t, &clean, &cap);
		char *kernel = t.kind == PTX_HEAD && c ? kernel_of(c) : NULL;
		if (!c) {
			free(clean);
			return fail(out, &patch, &boot, err, errlen, "out of memory");
		}
		if (t.kind == PTX_LINE && (ptx_has_word(c, ".version") ||
					   ptx_has_word(c, ".target") ||
					   ptx_has_word(c, ".address_size"))) {
			ptx_buf_put(&boot, module + t.start, t.end - t.start);
			ptx_buf_put(&boot, "\n", 1);
		} else if (kernel) {
			/* tools patches hold no kernels: the clock sampler goes
			 * to the boot module, the rest nowhere */
			ptx_buf_put(&patch, module + last, t.start - last);
			bool closed = ptx_scan_skip_block(&sc, why, sizeof(why)) == 0;
			if (closed && !strcmp(kernel, GPUX_SYM_CLOCK_SAMPLE)) {
				ptx_buf_put(&boot, module + t.start, sc.pos - t.start);
				ptx_buf_put(&boot, "\n", 1);
				sampler = true;
			}
			free(kernel);
			last = sc.pos;
			if (!closed) {
				free(clean);
				return fail(out, &patch, &boot, err, errlen,
					    "the probe module has an unterminated kernel");
			}
		} else if (t.kind == PTX_STMT && strstr(c, "redux.")) {
			ptx_buf_put(&patch, module + last, t.start - last);
			last = t.end;
			if (strncmp(c, "redux.sync.", 11) ||
			    !redux(&patch, c, c + strlen(c), nredux++)) {
				free(clean);
				return fail(out, &patch, &boot, err, errlen,
					    "the probe module has a redux.sync of a form gpux cannot "
					    "rewrite");
			}
		}
	}
	free(clean);
	if (t.kind != PTX_END)
		return fail(out, &patch, &boot, err, errlen, why);
	ptx_buf_put(&patch, module + last, len - last);
	if (!sampler)
		return fail(out, &patch, &boot, err, errlen,
			    "the probe module lacks the helper library's clock sampler");
	ptx_buf_printf(&patch, "\n// gpux: the Sanitizer's callbacks\n"
			       ".visible .global .align 8 .u64 " GS_NODATA ";\n");
	boot_callback(&patch, nmaps);
	static const enum ptx_site_kind kinds[] = { PTX_SITE_KERNEL_ENTRY, PTX_SITE_KERNEL_EXIT,
						    PTX_SITE_ACCESS };
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (has_point(probes, nprobes, kinds[k]))
			callback(&patch, kinds[k], probes, nprobes);
	ptx_buf_printf(&boot, "\n.visible .entry " GPUX_SASS_BOOT "()\n{\n\tret;\n}\n");
	if (patch.full || patch.oom || boot.full || boot.oom)
		return fail(out, &patch, &boot, err, errlen, "out of memory");
	out->patch = patch.p;
	out->boot = boot.p;
	return 0;
}

void sass_ptx_free(struct sass_ptx *out)
{
	free(out->patch);
	free(out->boot);
	out->patch = out->boot = NULL;
}
