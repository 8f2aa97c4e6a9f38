/* Pass 1: attach points. Split "provider:event:filter", find the
 * provider in the catalog, have its unit read the rest (lang/provider.h;
 * globs expand), and give every probe its place. */
#include <stdlib.h>
#include <string.h>

#include "provider.h"
#include "sema.h"
#include "suggest.h"

struct pctx {
	struct program *prog;
	struct diags *diags;
};

/* Split text on ':' into at most 4 parts; returns the count (5 = more).
 * A quoted run ("ns::f()") is one piece of its part, quotes dropped, as
 * bpftrace reads uprobe:BIN:"sym"+OFF. */
static int split_attach(struct arena *a, const char *text, char *parts[4])
{
	int n = 0;
	const char *p = text;
	for (;;) {
		if (n == 4)
			return 5;
		char *part = arena_alloc(a, strlen(p) + 1), *o = part;
		bool quoted = false;
		for (; *p && (quoted || *p != ':'); p++) {
			if (*p == '"')
				quoted = !quoted;
			else
				*o++ = *p;
		}
		*o = '\0';
		parts[n++] = part;
		if (!*p)
			return n;
		p++;
	}
}

static void hint_providers(struct diag *dg, const char *word)
{
	size_t n;
	const struct provider *const *ps = catalog_providers(&n);
	const char *names[32];
	size_t k = 0;
	for (size_t i = 0; i < n && k < 32; i++)
		names[k++] = ps[i]->name;
	const char *best = suggest_closest(word, names, k);
	if (best) {
		diag_hint(dg, "did you mean '%s'?", best);
		return;
	}
	char list[512];
	size_t off = 0;
	for (size_t i = 0; i < k && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
					i ? ", " : "", names[i]);
	diag_hint(dg, "providers are: %s (see gpux -l)", list);
}

/* bpftrace's providers that gpux lacks, with their short names: named
 * as such rather than "unknown", with a misleading closest match. */
static const char *bpftrace_only(const char *name)
{
	static const char *const names[][2] = {
		{ "kfunc", "f" },
		{ "kretfunc", "fr" }, { "fentry", NULL }, { "fexit", NULL },
		{ "rawtracepoint", "rt" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i][0]) || (names[i][1] && !strcmp(name, names[i][1])))
			return names[i][0];
	return NULL;
}

/* $N in an attach point is the script's argument N as it stands ("" if
 * not given), as bpftrace substitutes it: uprobe:$1:main. */
static const char *with_positionals(struct pctx *c, const char *text)
{
	if (!strchr(text, '$'))
		return text;
	size_t longest = 0, k = 0;
	for (int i = 0; i < c->prog->npositional; i++)
		if (strlen(c->prog->positional[i]) > longest)
			longest = strlen(c->prog->positional[i]);
	for (const char *p = strchr(text, '$'); p; p = strchr(p + 1, '$'))
		k++;
	char *out = arena_alloc(&c->prog->arena, strlen(text) + k * longest + 1), *o = out;
	for (const char *p = text; *p;) {
		if (p[0] != '$' || p[1] < '0' || p[1] > '9') {
			*o++ = *p++;
			continue;
		}
		char *end;
		unsigned long n = strtoul(p + 1, &end, 10);
		p = end;
		const char *v = n >= 1 && n <= (unsigned long)c->prog->npositional
					? c->prog->positional[n - 1] : "";
		size_t len = strlen(v);
		memcpy(o, v, len);
		o += len;
	}
	*o = '\0';
	return out;
}

static int resolve_attach(struct pctx *c, struct node *an)
{
	struct attach *at = &an->u.attach;
	at->text = with_positionals(c, at->text);
	char *parts[4];
	int nparts = split_attach(&c->prog->arena, at->text, parts);
	at->nparts = nparts;
	at->provider = parts[0];
	at->event = nparts > 1 ? parts[1] : NULL;
	at->filter = nparts > 2 ? parts[2] : NULL;
	at->prov = catalog_provider(parts[0]);
	const char *bt = at->prov ? NULL : bpftrace_only(parts[0]);
	if (bt) {
		struct diag *dg = diag_error(c->diags, an->span,
					     "gpux does not support bpftrace's %s probes", bt);
		char list[512];
		size_t n, off = 0;
		const struct provider *const *ps = catalog_providers(&n);
		for (size_t i = 0; i < n && off < sizeof(list); i++)
			if (ps[i]->place == PLACE_HOST && ps[i]->runner != RUNNER_TARGET)
				off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
							off ? ", " : "", ps[i]->name);
		diag_hint(dg, "gpux probes the GPU, CUDA calls, user space and the kernel: %s "
			  "(see gpux -l)", list);
		return -1;
	}
	if (!at->prov) {
		struct diag *dg = diag_error(c->diags, an->span,
					     "unknown probe provider '%s'", parts[0]);
		hint_providers(dg, parts[0]);
		return -1;
	}
	/* by its full name: later passes and the controllers compare it
	 * ("u:" is "uprobe:") */
	at->provider = at->prov->name;
	struct spec sp = { c->prog, c->diags, an, parts, nparts };
	return at->prov->unit->resolve(&sp);
}

/* All attach points of one probe must run in one place: the code is
 * compiled once for it. */
static int resolve_probe(struct pctx *c, struct node *pn, int index)
{
	struct probe *p = &pn->u.probe;
	const struct node *first = NULL;
	int rc = 0;
	p->index = index;
	p->place = 0;
	for (struct node *a = p->attach; a; a = a->next) {
		if (resolve_attach(c, a)) {
			rc = -1;
			continue;
		}
		enum place pl = a->u.attach.prov->place;
		if (!first) {
			first = a;
			p->place = pl;
		} else if (pl != p->place) {
			struct diag *dg = diag_error(c->diags, a->span,
				"probe mixes %s and %s attach points (%s, %s)",
				place_name(p->place), place_name(pl),
				first->u.attach.text, a->u.attach.text);
			diag_hint(dg, "split it into one probe per place; they can share @maps");
			rc = -1;
		}
	}
	if (rc == 0 && p->place == PLACE_DRIVER)
		p->policy = true;
	if (rc)
		p->place = 0; /* unresolved: later passes skip it */
	return rc;
}

/* An iterator runs once, when the probes are attached, and its end ends
 * the run: nothing else may attach beside it, only gpux's own BEGIN,
 * END and interval run around it. */
static int iterator_alone(struct pctx *c)
{
	const struct node *iter = NULL, *other = NULL;
	for (struct node *p = c->prog->probes; p; p = p->next)
		for (struct node *a = p->u.probe.place ? p->u.probe.attach : NULL; a; a = a->next) {
			const struct provider *pv = a->u.attach.prov;
			/* its body is the iterator's alone (ctx is its record) */
			if (pv->attach == ATTACH_ITER && p->u.probe.attach->next) {
				diag_error(c->diags, a->span, "Only single iter attach point is allowed.");
				return -1;
			}
			if (pv->attach == ATTACH_ITER && !iter)
				iter = a;
			else if (pv->attach == ATTACH_ITER || pv->runner != RUNNER_GPUX)
				other = other ? other : a;
		}
	if (!iter || !other)
		return 0;
	struct diag *dg = diag_error(c->diags, other->span,
				     "%s cannot run beside the iterator %s", other->u.attach.text,
				     iter->u.attach.text);
	diag_hint(dg, "an iter probe runs alone (BEGIN and END may be there): the run ends "
		  "when it has visited every object");
	return -1;
}

int sema_probes(struct program *prog, struct diags *diags)
{
	struct pctx c = { prog, diags };
	int rc = 0, index = 0;
	for (struct node *p = prog->probes; p; p = p->next)
		if (resolve_probe(&c, p, index++))
			rc = -1;
	if (rc == 0 && iterator_alone(&c))
		rc = -1;
	return rc;
}
