/* Walking the user's module: header lines, top-level declarations,
 * function definitions, and inside those the statements that are
 * probe sites. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_rw_priv.h"

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

/* Whether p, inside [start, p], lies in a comment: the probe module's
 * comments name attach points and maps as the user wrote them
 * (gdev:kernel_exit:gpux_step), which are not names it adds. */
static bool in_comment(const char *start, const char *p)
{
	const char *line = p;
	while (line > start && line[-1] != '\n')
		line--;
	if (memmem(line, (size_t)(p - line), "//", 2))
		return true;
	const char *open = NULL, *close = NULL;
	for (const char *q = start; (q = memmem(q, (size_t)(p - q), "/*", 2)); q += 2)
		open = q;
	for (const char *q = start; (q = memmem(q, (size_t)(p - q), "*/", 2)); q += 2)
		close = q;
	return open && (!close || close < open);
}

/* Whether [name, name + n) stands as a whole identifier in the probes
 * module (outside its comments) or among the rewriter's own names: a
 * name gpux puts into the module. */
static bool ours(const struct rw *rw, const char *name, size_t n)
{
	for (int i = 0; rw_added_names[i]; i++)
		if (strlen(rw_added_names[i]) == n && !memcmp(rw_added_names[i], name, n))
			return true;
	const char *p = rw->in->probes_ptx, *end = p + rw->in->probes_len;
	while ((p = memmem(p, (size_t)(end - p), name, n))) {
		if ((p == rw->in->probes_ptx || !ident_char(p[-1])) &&
		    (p + n == end || !ident_char(p[n])) && !in_comment(rw->in->probes_ptx, p))
			return true;
		p += n;
	}
	return false;
}

/* The first identifier of s that gpux adds too, into rw->clash: one
 * beginning with gpux_ (a mangled _Z9gpux_stepv or a my_gpux_x is
 * another name) that is a %register, a $label or one of ours. */
static void find_clash(struct rw *rw, const char *s)
{
	for (const char *p = strstr(s, "gpux_"); p && !rw->clash[0]; p = strstr(p + 1, "gpux_")) {
		bool reg = p > s && (p[-1] == '%' || p[-1] == '$');
		if (p > s && !reg && ident_char(p[-1]))
			continue;
		size_t n = 0;
		while (ident_char(p[n]))
			n++;
		if (reg || ours(rw, p, n))
			snprintf(rw->clash, sizeof(rw->clash), "%s%.*s", reg ? (p[-1] == '%' ? "%" : "$") : "",
				 (int)(n < 60 ? n : 60), p);
	}
}

static const char *clean(struct rw *rw, const struct ptx_tok *t)
{
	if (!ptx_clean_tok(rw->in->user, t, &rw->clean, &rw->clean_cap)) {
		rw->oom = true;
		return "";
	}
	/* Our names must not collide with the user's (comments aside). */
	find_clash(rw, rw->clean);
	return rw->clean;
}

static int begin_fn(struct rw *rw, char *name, bool is_kernel)
{
	struct ptx_rewrite_out *out = rw->out;
	struct ptx_func_sites *f = realloc(out->funcs,
					   (size_t)(out->nfuncs + 1) * sizeof(*f));
	if (!f) {
		free(name);
		return rw_fail(rw, "out of memory");
	}
	out->funcs = f;
	f += out->nfuncs;
	memset(f, 0, sizeof(*f));
	f->name = name;
	f->is_kernel = is_kernel;
	f->id = rw->in->func_id ? rw->in->func_id(rw->in->arg, name, is_kernel)
				: (uint32_t)out->nfuncs;
	out->nfuncs++;
	struct rw_fn *fn = &rw->fn;
	memset(fn->nprobes, 0, sizeof(fn->nprobes));
	memset(fn->counted, 0, sizeof(fn->counted));
	fn->any_counted = false;
	fn->nflush = 0;
	fn->sites = f;
	fn->next_site = 0;
	for (int i = 0; i < rw->in->nprobes; i++) {
		const struct ptx_probe *p = &rw->in->probes[i];
		bool entry_exit = p->kind == PTX_SITE_KERNEL_ENTRY ||
				  p->kind == PTX_SITE_FUNC_ENTRY ||
				  p->kind == PTX_SITE_FUNC_EXIT;
		/* Kernel sites only in kernels, function sites only in
		 * functions; exits and accesses wherever they are. */
		if (entry_exit && (p->kind == PTX_SITE_KERNEL_ENTRY) != is_kernel)
			continue;
		if (rw->in->match ? !rw->in->match(rw->in->arg, p, name)
				  : p->glob && !ptx_glob(p->glob, name))
			continue;
		fn->probes[p->kind][fn->nprobes[p->kind]++] = i;
	}
	rw->regs->n = 0;
	return 0;
}

/* A kernel keeps the register budget its original code had (the
 * caller's max_regs): ".maxnreg N" before its body, or a lower value in
 * the .maxnreg it has, so that a launch that fits uninstrumented still
 * fits; ptxas spills what does not fit. */
static void cap_regs(struct rw *rw, const struct ptx_tok *head, size_t open)
{
	unsigned cap = rw->in->max_regs ? rw->in->max_regs(rw->in->arg, rw->fn.sites->name) : 0;
	if (!cap)
		return;
	const char *u = rw->in->user;
	const char *m = memmem(u + head->start, head->end - head->start, ".maxnreg", 8);
	size_t t0 = rw->text.len;
	if (m) {
		const char *d = m + 8;
		while (*d == ' ' || *d == '\t')
			d++;
		size_t n = 0;
		unsigned have = 0;
		for (; d[n] >= '0' && d[n] <= '9' && n < 9; n++)
			have = have * 10 + (unsigned)(d[n] - '0');
		if (!n || have <= cap)
			return;
		ptx_buf_printf(&rw->text, "%u", cap);
		rw_edit(rw, (size_t)(d - u), n, 0, t0);
	} else {
		ptx_buf_printf(&rw->text, ".maxnreg %u\n", cap);
		rw_edit(rw, open, 0, 0, t0);
	}
	rw->fn.sites->max_regs = cap;
}

/* One function body, from its '{' to the matching '}'. */
static int walk_body(struct rw *rw, struct ptx_scan *sc, size_t open_end)
{
	struct ptx_func_sites *f = rw->fn.sites;
	bool entry_pending = true;
	int depth = 1;
	struct ptx_tok t;
	char err[128];
	while (depth > 0) {
		if (ptx_scan_next(sc, &t, err, sizeof(err)))
			return rw_fail(rw, "%s", err);
		if (t.kind == PTX_END)
			return rw_fail(rw, "%s: body not closed", f->name);
		struct ptx_insn in = { .kind = PI_OTHER };
		if (t.kind == PTX_STMT || t.kind == PTX_LABEL) {
			const char *s = clean(rw, &t);
			ptx_classify(s, &in);
			if (in.kind == PI_DECL)
				ptx_regs_add(rw->regs, s);
		} else if (t.kind == PTX_HEAD) {
			if (ptx_scan_skip_block(sc, err, sizeof(err)))
				return rw_fail(rw, "%s", err);
			continue;
		}
		/* The entry probe goes before the first statement past the
		 * declarations and the leading parameter loads. */
		if (entry_pending && t.kind != PTX_LINE &&
		    !(t.kind == PTX_STMT &&
		      (in.kind == PI_DECL || in.kind == PI_LDPARAM))) {
			rw_site(rw, t.start, f->is_kernel ? PTX_SITE_KERNEL_ENTRY
							  : PTX_SITE_FUNC_ENTRY, NULL);
			entry_pending = false;
		}
		if (t.kind == PTX_OPEN)
			depth++;
		else if (t.kind == PTX_CLOSE)
			depth--;
		else if (in.kind == PI_RET)
			rw_site(rw, t.start, f->is_kernel ? PTX_SITE_KERNEL_EXIT
							  : PTX_SITE_FUNC_EXIT, &in);
		else if (in.kind == PI_EXIT)
			rw_site(rw, t.start, PTX_SITE_KERNEL_EXIT, &in);
		else if (in.kind == PI_MEM)
			rw_site(rw, t.start, PTX_SITE_ACCESS, &in);
		if (in.kind == PI_RET || in.kind == PI_EXIT)
			rw_exit_point(rw, t.start, &in);
	}
	rw_flushes(rw);
	if (rw->fn.next_site)
		rw_decls(rw, open_end);
	return 0;
}

int rw_walk(struct rw *rw)
{
	struct ptx_scan sc = { .s = rw->in->user, .len = rw->in->user_len };
	struct ptx_tok t;
	char err[128];
	for (;;) {
		if (ptx_scan_next(&sc, &t, err, sizeof(err)))
			return rw_fail(rw, "%s", err);
		if (rw->oom)
			return rw_fail(rw, "out of memory");
		if (rw->clash[0])
			return rw_fail(rw, "the module has %s, a name gpux adds (instrumented by "
				       "gpux already, or named as gpux's own)", rw->clash);
		switch (t.kind) {
		case PTX_END:
			return 0;
		case PTX_LINE: {
			const char *s = rw->in->user + t.start;
			if (!strncmp(s, ".version", 8) && !rw->ver.end)
				rw->ver = t;
			else if (!strncmp(s, ".target", 7) && !rw->tgt.end)
				rw->tgt = t;
			else if (!strncmp(s, ".address_size", 13)) {
				rw->asz = t;
				if (!strstr(clean(rw, &t), " 64"))
					return rw_fail(rw, "only .address_size 64 is supported");
			}
			break;
		}
		case PTX_HEAD: {
			const char *h = clean(rw, &t);
			if (!ptx_has_word(h, ".entry") && !ptx_has_word(h, ".func")) {
				/* .section debug data and the like */
				if (ptx_scan_skip_block(&sc, err, sizeof(err)))
					return rw_fail(rw, "%s", err);
				break;
			}
			bool is_kernel;
			char *name = ptx_func_name(h, &is_kernel);
			if (!name)
				return rw_fail(rw, "line %u: function without a name",
					       ptx_line_of(rw->in->user, t.start));
			if (begin_fn(rw, name, is_kernel))
				return -1;
			struct ptx_tok head = t;
			if (ptx_scan_next(&sc, &t, err, sizeof(err)) ||
			    t.kind != PTX_OPEN)
				return rw_fail(rw, "%s: no body",
					       rw->fn.sites->name);
			if (is_kernel)
				cap_regs(rw, &head, t.start);
			if (walk_body(rw, &sc, t.end))
				return -1;
			break;
		}
		case PTX_OPEN:
		case PTX_CLOSE:
			return rw_fail(rw, "line %u: stray brace at module level",
				       ptx_line_of(rw->in->user, t.start));
		default: /* declarations, prototypes: copied as they are */
			clean(rw, &t);
			break;
		}
	}
}
