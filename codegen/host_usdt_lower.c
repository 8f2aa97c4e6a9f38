/* usdt probes: the sites an attach point names, read from the files'
 * notes at compile time (so an argument a site lacks is an error where
 * it is used, as bpftrace's), and each site's arguments as its note
 * says to read them. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host_path.h"
#include "host_priv.h"

struct sites {
	struct hl_usdt_site *v;
	int n, cap;
};

static void add_site(struct hctx *h, struct sites *out, const char *path, const char *shown,
		     const struct host_usdt_site *s)
{
	struct arena *a = &h->obj->arena;
	if (out->n == out->cap) {
		int cap = out->cap ? 2 * out->cap : 8;
		struct hl_usdt_site *v = arena_zalloc(a, (size_t)cap * sizeof(*v));
		if (out->n)
			memcpy(v, out->v, (size_t)out->n * sizeof(*v));
		out->v = v;
		out->cap = cap;
	}
	struct hl_usdt_site *u = &out->v[out->n++];
	u->s = *s;
	u->s.path = NULL;
	u->s.provider = arena_strdup(a, s->provider);
	u->s.name = arena_strdup(a, s->name);
	u->s.bad_spec = s->bad_spec ? arena_strdup(a, s->bad_spec) : NULL;
	u->path = arena_strdup(a, path);
	u->where = arena_printf(a, "%s:%s:%s", shown, s->provider, s->name);
	u->probe = arena_printf(a, "usdt:%s", u->where);
}

/* The sites of all that match the attach point's globs, named in
 * probe strings with shown in place of their file (NULL: the file). */
static void add_matching(struct hctx *h, const struct attach *at,
			 const struct host_usdt_sites *all, const char *shown, struct sites *out)
{
	for (int i = 0; i < all->n; i++)
		if (host_usdt_match(&all->v[i], at->usdt_provider, at->usdt_probe))
			add_site(h, out, all->v[i].path, shown ? shown : all->v[i].path,
				 &all->v[i]);
}

int hl_usdt_sites(struct hctx *h, const struct node *an, struct hl_usdt_site **out, int *n)
{
	const struct attach *at = &an->u.attach;
	int pid = h->opts->lib_pid;
	struct sites s = { 0 };
	char path[PATH_MAX], real[PATH_MAX], in_proc[PATH_MAX + 64];
	const char *shown = NULL;
	*out = NULL;
	*n = 0;
	if (!*at->event) {
		if (pid <= 0) {
			struct diag *d = host_err(h, an, "usdt probe must specify at least path or "
						  "pid to probe");
			if (d)
				diag_hint(d, "usdt:PATH:%s%s%s, or -p PID with an empty path",
					  at->nparts == 4 ? at->usdt_provider : "",
					  at->nparts == 4 ? ":" : "", at->usdt_probe);
			return -1;
		}
	} else {
		if (host_resolve_target(at->event, pid, path, sizeof(path)) || access(path, R_OK)) {
			host_err(h, an, "usdt target file '%s' does not exist or is not executable",
				 at->event);
			return -1;
		}
		/* with -p, bpftrace names the file through the process's root */
		shown = strchr(at->event, '/') ? at->event : path;
		if (pid > 0 && realpath(path, real)) {
			snprintf(in_proc, sizeof(in_proc), "/proc/%d/root%s", pid, real);
			shown = in_proc;
		}
	}
	/* the notes of every file the process maps, or of the one target */
	struct host_usdt_sites all = { 0 };
	char err[PATH_MAX + 128];
	int rc = *at->event ? host_usdt_read(path, &all, err, sizeof(err))
			    : host_usdt_read_pid(pid, &all, err, sizeof(err));
	if (rc)
		host_err(h, an, "%s", err);
	else
		add_matching(h, at, &all, shown, &s);
	host_usdt_free(&all);
	if (rc)
		return -1;
	if (!s.n) {
		host_err(h, an, "no usdt probe %s:%s in %s", at->usdt_provider, at->usdt_probe,
			 *at->event ? at->event : "the process's files");
		return -1;
	}
	*out = s.v;
	*n = s.n;
	return 0;
}

/* v's low size bytes, extended to 64 bits by sign or by zeros */
static LLVMValueRef extend(struct hctx *h, LLVMValueRef v, const struct host_usdt_arg *a)
{
	if (a->size >= 8)
		return v;
	LLVMValueRef sh = host_const(h, 64 - 8 * a->size);
	v = LLVMBuildShl(h->b, v, sh, "");
	return a->is_signed ? LLVMBuildAShr(h->b, v, sh, "") : LLVMBuildLShr(h->b, v, sh, "");
}

LLVMValueRef hl_usdt_arg(struct hctx *h, const struct node *n, const char *name)
{
	const struct hl_usdt_site *u = h->usdt;
	int i = atoi(name + 3);
	if (u->s.nargs < 0) {
		struct diag *d = host_err(h, n, "couldn't get argument %d for %s", i, u->where);
		if (d)
			diag_hint(d, "gpux cannot read its note's argument '%s'", u->s.bad_spec);
		return NULL;
	}
	if (i >= u->s.nargs) {
		struct diag *d = host_err(h, n, "couldn't get argument %d for %s", i, u->where);
		if (d && u->s.nargs == 1)
			diag_hint(d, "%s:%s has 1 argument: arg0", u->s.provider, u->s.name);
		else if (d && u->s.nargs)
			diag_hint(d, "%s:%s has %d arguments: arg0 to arg%d", u->s.provider,
				  u->s.name, u->s.nargs, u->s.nargs - 1);
		else if (d)
			diag_hint(d, "%s:%s has no arguments", u->s.provider, u->s.name);
		return NULL;
	}
	const struct host_usdt_arg *a = &u->s.args[i];
	if (a->loc == HOST_USDT_CONST)
		return extend(h, host_const(h, (uint64_t)a->val), a);
	LLVMValueRef v = hl_reg(h, a->reg);
	if (a->loc == HOST_USDT_REG)
		return extend(h, v, a);
	/* memory of the traced process: 0 where it cannot be read */
	LLVMValueRef at = LLVMBuildAdd(h->b, v, host_const(h, (uint64_t)a->val), "");
	LLVMValueRef buf = host_alloca_zero(h, 8, "usdtarg");
	LLVMValueRef args[] = { buf, LLVMConstInt(h->i32, a->size, false),
				LLVMBuildIntToPtr(h->b, at, h->ptr, "") };
	host_helper(h, BPF_H_PROBE_READ_USER, h->i64, args, 3);
	return extend(h, LLVMBuildLoad2(h->b, h->i64, buf, ""), a);
}
