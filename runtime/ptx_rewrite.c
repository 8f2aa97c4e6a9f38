/* The rewriter's driver: walk the user's module with the scanner, queue
 * edits (insertions and replacements at offsets into the user's text),
 * then copy the text through the sorted edits. Trampolines: ptx_tramp.c. */
#include "ptx_rewrite.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_rw_priv.h"

#define MAX_INPUT ((size_t)1 << 30)
#define MAX_WARNINGS 64

const char *ptx_site_name(enum ptx_site_kind kind)
{
	static const char *const names[] = PTX_SITE_NAMES;
	return (unsigned)kind < PTX_SITE_COUNT ? names[kind] : "?";
}

int rw_fail(struct rw *rw, const char *fmt, ...)
{
	if (!rw->out->err[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(rw->out->err, sizeof(rw->out->err), fmt, ap);
		va_end(ap);
	}
	return -1;
}

void rw_warn(struct rw *rw, const char *fmt, ...)
{
	struct ptx_rewrite_out *out = rw->out;
	if (out->nwarnings > MAX_WARNINGS || rw->oom)
		return;
	char msg[512];
	if (out->nwarnings == MAX_WARNINGS) {
		snprintf(msg, sizeof(msg), "more warnings left out");
	} else {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
	}
	char **w = realloc(out->warnings,
			   (size_t)(out->nwarnings + 1) * sizeof(*w));
	char *m = strdup(msg);
	if (!w || !m) {
		free(m);
		if (w)
			out->warnings = w;
		rw->oom = true;
		return;
	}
	out->warnings = w;
	w[out->nwarnings++] = m;
}

void rw_edit(struct rw *rw, size_t off, size_t del, int prio, size_t t0)
{
	if (rw->nedits == rw->capedits) {
		size_t cap = rw->capedits ? rw->capedits * 2 : 64;
		struct rw_edit *e = realloc(rw->edits, cap * sizeof(*e));
		if (!e) {
			rw->oom = true;
			return;
		}
		rw->edits = e;
		rw->capedits = cap;
	}
	rw->edits[rw->nedits++] = (struct rw_edit){
		.off = off, .del = del, .prio = prio, .seq = rw->nedits,
		.t0 = t0, .tlen = rw->text.len - t0,
	};
}

static int edit_cmp(const void *a, const void *b)
{
	const struct rw_edit *x = a, *y = b;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio - y->prio;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* "9.0" -> 900 */
static int version_num(const char *s)
{
	int major = 0, minor = 0;
	if (sscanf(s, "%d.%d", &major, &minor) != 2)
		return -1;
	return major * 100 + minor;
}

/* The token after a directive word, e.g. "sm_80" of ".target sm_80, debug". */
static size_t dir_arg(const char *s, size_t n, size_t *len)
{
	size_t i = 0;
	while (i < n && s[i] != ' ' && s[i] != '\t')
		i++;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t j = i;
	while (j < n && s[j] != ' ' && s[j] != '\t' && s[j] != ',' &&
	       s[j] != '\r' && s[j] != '\n' && s[j] != '/')
		j++;
	*len = j - i;
	return i;
}

static int sm_num(const char *s, size_t n)
{
	if (n < 4 || memcmp(s, "sm_", 3))
		return -1;
	return atoi(s + 3);
}

/* The probes module's header values and its body (everything else). */
static int probes_header(struct rw *rw)
{
	const char *s = rw->in->probes_ptx;
	size_t n = rw->in->probes_len, i = 0;
	size_t t0 = rw->text.len;
	ptx_buf_printf(&rw->text, "\n" PTX_PROBES_BEGIN "\n");
	while (i < n) {
		size_t e = i;
		while (e < n && s[e] != '\n')
			e++;
		size_t k = i, alen;
		while (k < e && (s[k] == ' ' || s[k] == '\t'))
			k++;
		bool ver = e - k >= 8 && !memcmp(s + k, ".version", 8);
		bool tgt = e - k >= 7 && !memcmp(s + k, ".target", 7);
		bool asz = e - k >= 13 && !memcmp(s + k, ".address_size", 13);
		if (ver || tgt) {
			size_t a = k + dir_arg(s + k, e - k, &alen);
			char *dst = ver ? rw->pver : rw->ptgt;
			if (alen == 0 || alen >= sizeof(rw->pver))
				return rw_fail(rw, "probes module: bad %s line",
					       ver ? ".version" : ".target");
			memcpy(dst, s + a, alen);
			dst[alen] = 0;
		} else if (!asz && rw->in->unit != PTX_WHOLE_MODULE && e - k > 9 &&
			   !memcmp(s + k, ".visible ", 9)) {
			bool fn = e - k > 15 && !memcmp(s + k + 9, ".func ", 6);
			ptx_buf_put(&rw->text, s + i, k - i);
			if (!fn && rw->in->unit == PTX_LATER_UNIT)
				ptx_buf_put(&rw->text, ".weak ", 6);
			else if (!fn)
				ptx_buf_put(&rw->text, ".visible ", 9);
			ptx_buf_put(&rw->text, s + k + 9, e - k - 9);
			ptx_buf_put(&rw->text, "\n", 1);
		} else if (!asz) {
			ptx_buf_put(&rw->text, s + i, e - i);
			ptx_buf_put(&rw->text, "\n", 1);
		}
		i = e + 1;
	}
	/* GPUX_SYM_OFF, which every trampoline reads */
	ptx_buf_printf(&rw->text, "%s .global .align 4 .u32 " GPUX_SYM_OFF " = 0;\n"
		       PTX_PROBES_END "\n",
		       rw->in->unit == PTX_LATER_UNIT ? ".weak" : ".visible");
	rw->probes_t0 = t0;
	rw->probes_tlen = rw->text.len - t0;
	if (!rw->pver[0] || version_num(rw->pver) < 0)
		return rw_fail(rw, "probes module has no .version");
	return 0;
}

/* Header edits: the probes body after the user's header, .version and
 * .target raised when the probes need more. */
static int header_edits(struct rw *rw)
{
	const char *u = rw->in->user;
	if (!rw->ver.end || !rw->tgt.end)
		return rw_fail(rw, "user module has no .version or .target");
	size_t alen, a = rw->ver.start + dir_arg(u + rw->ver.start,
						 rw->ver.end - rw->ver.start, &alen);
	char uver[16];
	if (alen == 0 || alen >= sizeof(uver))
		return rw_fail(rw, "bad .version line");
	memcpy(uver, u + a, alen);
	uver[alen] = 0;
	int uv = version_num(uver), pv = version_num(rw->pver);
	if (uv < 0)
		return rw_fail(rw, "bad .version %s", uver);
	if (uv < pv) {
		size_t t0 = rw->text.len;
		ptx_buf_printf(&rw->text, "%s", rw->pver);
		rw_edit(rw, a, alen, 0, t0);
		rw_warn(rw, ".version raised from %s to %s (the probe library needs it)",
			uver, rw->pver);
	}
	size_t tlen, t = rw->tgt.start + dir_arg(u + rw->tgt.start,
						 rw->tgt.end - rw->tgt.start, &tlen);
	int us = sm_num(u + t, tlen), ps = sm_num(rw->ptgt, strlen(rw->ptgt));
	if (us < 0)
		return rw_fail(rw, "unsupported .target %.*s", (int)tlen, u + t);
	if (ps > us) {
		size_t t0 = rw->text.len;
		ptx_buf_printf(&rw->text, "%s", rw->ptgt);
		rw_edit(rw, t, tlen, 0, t0);
		rw_warn(rw, ".target raised from %.*s to %s (the probe library needs it)",
			(int)tlen, u + t, rw->ptgt);
	}
	size_t at = rw->asz.end ? rw->asz.end : rw->tgt.end;
	if (!rw->asz.end)
		rw_warn(rw, "no .address_size: assuming 64");
	rw_edit(rw, at, 0, 2, rw->probes_t0);
	rw->edits[rw->nedits - 1].tlen = rw->probes_tlen;
	return 0;
}

static bool probe_name_ok(const char *f)
{
	if (!f || !*f || strlen(f) > 200)
		return false;
	for (const char *p = f; *p; p++)
		if (!(*p == '_' || *p == '$' || (*p >= '0' && *p <= '9') ||
		      (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			return false;
	return true;
}

static int check_input(struct rw *rw)
{
	const struct ptx_rewrite_in *in = rw->in;
	if (!in->user || !in->user_len || in->user_len > MAX_INPUT ||
	    memchr(in->user, 0, in->user_len))
		return rw_fail(rw, "no user PTX, or not text, or over 1 GiB");
	if (!in->probes_ptx || !in->probes_len || in->probes_len > MAX_INPUT)
		return rw_fail(rw, "no probes module");
	if (in->nprobes < 0 || in->nprobes > RW_MAX_PROBES)
		return rw_fail(rw, "%d probes (at most %d)", in->nprobes,
			       RW_MAX_PROBES);
	for (int i = 0; i < in->nprobes; i++) {
		const struct ptx_probe *p = &in->probes[i];
		if ((unsigned)p->kind >= PTX_SITE_COUNT || !probe_name_ok(p->func))
			return rw_fail(rw, "probe %d: bad site kind or function name", i);
		char pat[256];
		snprintf(pat, sizeof(pat), " %s(", p->func);
		if (!memmem(in->probes_ptx, in->probes_len, pat, strlen(pat)))
			return rw_fail(rw, "probe %d: %s is not in the probes module",
				       i, p->func);
	}
	return 0;
}

static int emit(struct rw *rw)
{
	const char *u = rw->in->user;
	qsort(rw->edits, rw->nedits, sizeof(*rw->edits), edit_cmp);
	size_t max = rw->text.max;
	struct ptx_buf b = { .max = max };
	size_t cur = 0;
	for (size_t i = 0; i < rw->nedits; i++) {
		const struct rw_edit *e = &rw->edits[i];
		ptx_buf_put(&b, u + cur, e->off - cur);
		ptx_buf_put(&b, rw->text.p + e->t0, e->tlen);
		cur = e->off + e->del;
	}
	ptx_buf_put(&b, u + cur, rw->in->user_len - cur);
	if (b.full || b.oom) {
		free(b.p);
		return rw_fail(rw, b.oom ? "out of memory"
					 : "rewritten module over %zu bytes", max);
	}
	rw->out->ptx = b.p;
	rw->out->len = b.len;
	return 0;
}

int ptx_rewrite(const struct ptx_rewrite_in *in, struct ptx_rewrite_out *out)
{
	memset(out, 0, sizeof(*out));
	struct rw rw = { .in = in, .out = out };
	/* Both the queued text and the output stay under the bound. */
	rw.text.max = in->max_out ? in->max_out
		: in->user_len * 64 + in->probes_len + (1u << 20);
	rw.regs = calloc(1, sizeof(*rw.regs));
	int rc = -1;
	if (!rw.regs)
		rc = rw_fail(&rw, "out of memory");
	else if (check_input(&rw) == 0 && probes_header(&rw) == 0 &&
		 rw_walk(&rw) == 0 && header_edits(&rw) == 0) {
		if (rw.oom || rw.text.oom)
			rw_fail(&rw, "out of memory");
		else if (rw.text.full)
			rw_fail(&rw, "rewritten module over %zu bytes", rw.text.max);
		else
			rc = emit(&rw);
	}
	free(rw.regs);
	free(rw.edits);
	free(rw.fn.flush);
	free(rw.clean);
	free(rw.text.p);
	if (rc)
		out->err[0] = out->err[0] ? out->err[0] : '?';
	return rc;
}

void ptx_rewrite_free(struct ptx_rewrite_out *out)
{
	free(out->ptx);
	for (int i = 0; i < out->nfuncs; i++)
		free(out->funcs[i].name);
	free(out->funcs);
	for (int i = 0; i < out->nwarnings; i++)
		free(out->warnings[i]);
	free(out->warnings);
	memset(out, 0, sizeof(*out));
}
