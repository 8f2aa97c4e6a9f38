/* Pass 1: attach points. Split "provider:event:filter", resolve each part
 * against the catalog (globs expand), and give every probe its place. */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "sema.h"
#include "suggest.h"
#include "tracepoint.h"

struct pctx {
	struct program *prog;
	struct diags *diags;
};

static bool has_glob(const char *s)
{
	return s && strpbrk(s, "*?[") != NULL;
}

/* Split text on ':' into at most 4 parts; returns the count (5 = more). */
static int split_attach(struct arena *a, const char *text, char *parts[4])
{
	int n = 0;
	const char *p = text;
	for (;;) {
		const char *c = strchr(p, ':');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		if (n == 4)
			return 5;
		parts[n++] = arena_strndup(a, p, len);
		if (!c)
			return n;
		p = c + 1;
	}
}

static void hint_providers(struct diag *dg, const char *word)
{
	size_t n;
	const struct provider *ps = catalog_providers(&n);
	const char *names[32];
	size_t k = 0;
	for (size_t i = 0; i < n && k < 32; i++)
		names[k++] = ps[i].name;
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

/* The events of provider p, as names, for hints. */
static size_t event_names(const struct provider *p, const char **names,
			  size_t max)
{
	size_t n, k = 0;
	const struct event *es = catalog_events(&n);
	for (size_t i = 0; i < n && k < max; i++)
		if (es[i].name && !strcmp(es[i].provider, p->name))
			names[k++] = es[i].name;
	return k;
}

static void list_events_hint(struct diag *dg, const struct provider *p)
{
	const char *names[32];
	size_t k = event_names(p, names, 32);
	char list[512];
	size_t off = 0;
	for (size_t i = 0; i < k && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
					i ? ", " : "", names[i]);
	diag_hint(dg, "%s events are: %s", p->name, list);
}

static void add_event(struct pctx *c, struct attach *at, const struct event *e)
{
	const struct event **ev = arena_alloc(&c->prog->arena,
					      sizeof(*ev) * (size_t)(at->nevents + 1));
	if (at->nevents)
		memcpy(ev, at->events, sizeof(*ev) * (size_t)at->nevents);
	ev[at->nevents++] = e;
	at->events = ev;
}

/* A whole unsigned number, decimal, 0x hex or 0 octal (bpftrace's). */
static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (*end || errno)
		return false;
	*out = v;
	return true;
}

/* The symbol of a uprobe, as bpftrace reads it: FUNC, FUNC+OFFSET (an
 * offset into the function; not in a uretprobe, which fires on return)
 * or an address in the file (a number). */
static int resolve_events(struct pctx *c, struct node *an, char **parts,
			  int nparts)
{
	struct attach *at = &an->u.attach;
	const struct provider *p = at->prov;
	if (nparts < 2 || !*parts[1]) {
		struct diag *dg = diag_error(c->diags, an->span,
					     "%s needs an event: %s:EVENT",
					     p->name, p->name);
		list_events_hint(dg, p);
		return -1;
	}
	size_t n;
	const struct event *es = catalog_events(&n);
	for (size_t i = 0; i < n; i++) {
		if (!es[i].name || strcmp(es[i].provider, p->name))
			continue;
		if (has_glob(parts[1]) ? !fnmatch(parts[1], es[i].name, 0)
				       : !strcmp(parts[1], es[i].name))
			add_event(c, at, &es[i]);
	}
	if (!at->nevents) {
		struct diag *dg = has_glob(parts[1])
			? diag_error(c->diags, an->span, "no %s event matches '%s'",
				     p->name, parts[1])
			: diag_error(c->diags, an->span, "unknown event '%s' for provider %s",
				     parts[1], p->name);
		const char *names[32];
		size_t k = event_names(p, names, 32);
		const char *best = has_glob(parts[1]) ? NULL
			: suggest_closest(parts[1], names, k);
		if (best)
			diag_hint(dg, "did you mean '%s:%s'?", p->name, best);
		else
			list_events_hint(dg, p);
		return -1;
	}
	if (nparts > 3) {
		diag_error(c->diags, an->span,
			   "too many ':' parts in '%s': expected %s:EVENT[:FILTER]",
			   at->text, p->name);
		return -1;
	}
	/* a sampled perf event is one event, counted every N */
	if (p->attach == ATTACH_PERF_EVENT && at->nevents > 1) {
		diag_error(c->diags, an->span, "%s:%s names %d events: a %s probe samples one",
			   p->name, parts[1], at->nevents, p->name);
		return -1;
	}
	if (at->events[0]->filter == FILTER_COUNT) {
		at->perf_count = at->events[0]->perf_period;
		if (nparts == 3 && (!parse_u64(parts[2], &at->perf_count) || !at->perf_count)) {
			diag_error(c->diags, an->span,
				   "%s count must be a positive integer, not '%s'", p->name, parts[2]);
			return -1;
		}
		return 0;
	}
	if (nparts == 3) {
		for (int i = 0; i < at->nevents; i++) {
			if (at->events[i]->filter != FILTER_NONE)
				continue;
			char buf[64];
			struct diag *dg = diag_error(c->diags, an->span,
				"%s takes no filter, but '%s' was given",
				event_str(at->events[i], buf, sizeof(buf)), parts[2]);
			diag_hint(dg, "remove ':%s'", parts[2]);
			return -1;
		}
		if (!*parts[2]) {
			diag_error(c->diags, an->span, "empty filter in '%s'", at->text);
			return -1;
		}
	}
	return 0;
}

static int parse_usym(struct pctx *c, struct node *an, const char *sym)
{
	struct attach *at = &an->u.attach;
	struct arena *a = &c->prog->arena;
	const char *plus = strchr(sym, '+');
	at->ufunc = sym;
	at->uname = sym;
	if (!plus) {
		if (!parse_u64(sym, &at->uoffset))
			return 0;
		at->ufunc = NULL;
		at->uaddr = true;
		at->uname = arena_printf(a, "%llu", (unsigned long long)at->uoffset);
		return 0;
	}
	if (at->prov->attach != ATTACH_UPROBE) {
		struct diag *dg = diag_error(c->diags, an->span,
			"%s takes no offset: it fires when the function returns", at->prov->name);
		diag_hint(dg, "an offset into a function needs uprobe:TARGET:FUNC+OFFSET");
		return -1;
	}
	if (strchr(plus + 1, '+')) {
		diag_error(c->diags, an->span, "more than one offset in '%s'", sym);
		return -1;
	}
	char *fn = arena_strndup(a, sym, (size_t)(plus - sym));
	if (!*fn) {
		diag_error(c->diags, an->span, "an offset needs a function: FUNC+OFFSET, not '%s'",
			   sym);
		return -1;
	}
	if (has_glob(fn)) {
		diag_error(c->diags, an->span, "an offset cannot follow a glob ('%s')", sym);
		return -1;
	}
	if (!parse_u64(plus + 1, &at->uoffset)) {
		struct diag *dg = diag_error(c->diags, an->span, "invalid offset '%s' in '%s'",
					     plus + 1, sym);
		diag_hint(dg, "an offset is a number of bytes: FUNC+8, FUNC+0x10");
		return -1;
	}
	at->ufunc = fn;
	at->uname = at->uoffset ? arena_printf(a, "%s+%llu", fn, (unsigned long long)at->uoffset)
				: fn;
	return 0;
}

static int resolve_uprobe(struct pctx *c, struct node *an, char **parts,
			  int nparts)
{
	struct attach *at = &an->u.attach;
	if (nparts != 3 || !*parts[1] || !*parts[2]) {
		struct diag *dg = diag_error(c->diags, an->span,
			"%s needs a target and a symbol: %s:LIB_OR_PATH:SYMBOL",
			at->prov->name, at->prov->name);
		diag_hint(dg, "for example %s:libcuda:cuLaunchKernel", at->prov->name);
		return -1;
	}
	add_event(c, at, catalog_event(at->prov, NULL));
	return parse_usym(c, an, parts[2]);
}

/* usdt:TARGET:PROBE or usdt:TARGET:PROVIDER:PROBE (globs in both);
 * bpftrace's forms. An empty TARGET means every file of the -p process,
 * which codegen checks (it knows the pid). The notes themselves are read
 * by codegen too: the front end reads no file. */
static int resolve_usdt(struct pctx *c, struct node *an, char **parts, int nparts)
{
	struct attach *at = &an->u.attach;
	if (nparts != 3 && nparts != 4) {
		struct diag *dg = diag_error(c->diags, an->span,
			"%s needs a target and a probe: %s:TARGET:[PROVIDER:]PROBE",
			at->prov->name, at->prov->name);
		diag_hint(dg, "for example %s:/usr/bin/python3:function__entry", at->prov->name);
		return -1;
	}
	/* an empty provider (usdt:BIN::probe) is any, as in bpftrace */
	at->usdt_provider = nparts == 4 && *parts[2] ? parts[2] : "*";
	at->usdt_probe = parts[nparts - 1];
	if (!*at->usdt_probe) {
		diag_error(c->diags, an->span, "empty probe name in '%s'", at->text);
		return -1;
	}
	add_event(c, at, catalog_event(at->prov, NULL));
	return 0;
}

/* A glob (tracepoint:syscalls:sys_enter_open*) becomes one attach point
 * per tracepoint it matches, as bpftrace attaches them: an is the first
 * (parts[1], parts[2] its category and name), the others follow it in
 * the probe's list and are resolved in their turn. */
static int expand_tracepoints(struct pctx *c, struct node *an, char **parts)
{
	struct arena *a = &c->prog->arena;
	char **names;
	size_t n;
	int rc = tracepoint_list(a, has_glob(parts[1]) ? NULL : parts[1], &names, &n);
	if (rc < 0) {
		diag_error(c->diags, an->span, "cannot list the tracepoints %s matches: %s",
			   an->u.attach.text,
			   rc == -ENODEV ? "tracefs is not mounted" : strerror(-rc));
		return -1;
	}
	const char *cat = parts[1], *name = parts[2];
	struct node *last = an;
	int k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *colon = strchr(names[i], ':');
		char *tc = colon ? arena_strndup(a, names[i], (size_t)(colon - names[i])) : NULL;
		if (!tc || fnmatch(cat, tc, 0) || fnmatch(name, colon + 1, 0))
			continue;
		const char *text = arena_printf(a, "%s:%s", an->u.attach.prov->name, names[i]);
		if (k++ == 0) {
			an->u.attach.text = text;
			parts[1] = tc;
			parts[2] = arena_printf(a, "%s", colon + 1);
			continue;
		}
		struct node *m = arena_alloc(a, sizeof(*m));
		*m = *an;
		m->u.attach.text = text;
		m->next = last->next;
		last->next = m;
		last = m;
	}
	if (!k) {
		diag_error(c->diags, an->span, "tracepoints not found: %s:%s", cat, name);
		return -1;
	}
	an->u.attach.event = parts[1];
	an->u.attach.filter = parts[2];
	return 0;
}

static int resolve_tracepoint(struct pctx *c, struct node *an, char **parts,
			      int nparts)
{
	struct attach *at = &an->u.attach;
	if (nparts != 3 || !*parts[1] || !*parts[2]) {
		diag_error(c->diags, an->span,
			   "tracepoint needs a category and a name: tracepoint:CATEGORY:NAME");
		return -1;
	}
	if ((has_glob(parts[1]) || has_glob(parts[2])) && expand_tracepoints(c, an, parts))
		return -1;
	add_event(c, at, catalog_event(at->prov, NULL));
	struct field *fields = NULL;
	size_t n = 0;
	int rc = tracepoint_fields(&c->prog->arena, parts[1], parts[2], &fields, &n);
	if (rc == -ENOENT || rc == -EINVAL) {
		diag_error(c->diags, an->span, "tracepoint not found: %s:%s",
			   parts[1], parts[2]);
		return -1;
	}
	if (rc < 0) {
		diag_warning(c->diags, an->span,
			     "cannot read the format of tracepoint %s:%s (%s); its args are not checked",
			     parts[1], parts[2], strerror(-rc));
		return 0;
	}
	at->tp_fields = fields;
	at->ntp_fields = (int)n;
	return 0;
}

static int resolve_interval(struct pctx *c, struct node *an, char **parts,
			    int nparts)
{
	static const struct { const char *unit; uint64_t ns; bool hz; } units[] = {
		{ "s", 1000000000ULL, false }, { "ms", 1000000ULL, false },
		{ "us", 1000ULL, false },      { "hz", 0, true },
	};
	struct attach *at = &an->u.attach;
	const char *prov = at->prov->name;
	if (nparts != 3) {
		struct diag *dg = diag_error(c->diags, an->span,
			"%s needs a unit and a count: %s:UNIT:N", prov, prov);
		diag_hint(dg, "for example %s:s:1 or %s:ms:100", prov, prov);
		return -1;
	}
	size_t i;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(parts[1], units[i].unit))
			break;
	if (i == sizeof(units) / sizeof(units[0])) {
		struct diag *dg = diag_error(c->diags, an->span,
			"%s is not an accepted unit of time", parts[1]);
		diag_hint(dg, "units are s, ms, us and hz");
		return -1;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(parts[2], &end, 10);
	if (!*parts[2] || *end || errno || v == 0 || parts[2][0] == '-' ||
	    (!units[i].hz && v > UINT64_MAX / units[i].ns) ||
	    (units[i].hz && v > 1000000000ULL)) {
		diag_error(c->diags, an->span,
			   "%s count must be a positive integer, not '%s'", prov,
			   parts[2]);
		return -1;
	}
	at->interval_ns = units[i].hz ? 1000000000ULL / v : v * units[i].ns;
	at->interval_hz = units[i].hz ? v : 0;
	add_event(c, at, catalog_event(at->prov, NULL));
	return 0;
}

/* x86-64 passes six integer arguments in registers */
#define WP_REG_ARGS 6

/* FUNC+argN: the pointer argument N (a register of x86-64's six) of
 * FUNC in the -p/-c program, watched once FUNC is called. */
static int parse_wp_func(struct pctx *c, struct node *an, const char *spec, const char *plus)
{
	struct attach *at = &an->u.attach;
	const char *n = plus + 1;
	char *end;
	if (strncmp(n, "arg", 3) || n[3] < '0' || n[3] > '9' || plus == spec ||
	    has_glob(spec)) {
		struct diag *dg = diag_error(c->diags, an->span,
					     "invalid watched argument '%s'", spec);
		diag_hint(dg, "write FUNC+argN: the function's pointer argument N, "
			  "e.g. increment+arg0");
		return -1;
	}
	errno = 0;
	unsigned long v = strtoul(n + 3, &end, 10);
	if (*end || errno) {
		diag_error(c->diags, an->span, "invalid watched argument '%s'", spec);
		return -1;
	}
	if (v >= WP_REG_ARGS) {
		struct diag *dg = diag_error(c->diags, an->span,
					     "x86_64 doesn't support arg%lu", v);
		diag_hint(dg, "arg0 to arg5 are passed in registers");
		return -1;
	}
	at->wp_func = arena_strndup(&c->prog->arena, spec, (size_t)(plus - spec));
	at->wp_arg = (int)v;
	return 0;
}

/* The access mode: letters of r, w and x, each once, sorted, and one
 * of the combinations x86-64's debug registers offer. */
static int parse_wp_mode(struct pctx *c, struct node *an, const char *mode)
{
	static const char order[] = "rwx";
	char sorted[4] = "";
	int k = 0;
	bool seen[3] = { false, false, false };
	if (!*mode || strspn(mode, order) != strlen(mode)) {
		struct diag *dg = diag_error(c->diags, an->span,
					     "watchpoint mode must be combination of (r,w,x)");
		diag_hint(dg, "w for writes, rw for reads and writes, x for execution");
		return -1;
	}
	for (const char *m = mode; *m; m++) {
		int i = (int)(strchr(order, *m) - order);
		if (seen[i]) {
			diag_error(c->diags, an->span, "watchpoint modes may not be duplicated");
			return -1;
		}
		seen[i] = true;
	}
	for (int i = 0; i < 3; i++)
		if (seen[i])
			sorted[k++] = order[i];
	if (strcmp(sorted, "w") && strcmp(sorted, "rw") && strcmp(sorted, "x")) {
		struct diag *dg = diag_error(c->diags, an->span, "invalid watchpoint mode: %s",
					     sorted);
		diag_hint(dg, "x86-64 watches w, rw or x (reads alone cannot be watched)");
		return -1;
	}
	an->u.attach.wp_mode = arena_strdup(&c->prog->arena, sorted);
	return 0;
}

/* watchpoint:ADDRESS:LENGTH:MODE or watchpoint:FUNC+argN:LENGTH:MODE
 * (asyncwatchpoint: the second form only); bpftrace's forms. Whether
 * there is a process to watch is codegen's to check (it knows -p/-c). */
static int resolve_watchpoint(struct pctx *c, struct node *an, char **parts, int nparts)
{
	struct attach *at = &an->u.attach;
	if (nparts != 4) {
		struct diag *dg = diag_error(c->diags, an->span,
			"%s needs an address, a length and a mode: %s:ADDRESS:LENGTH:MODE",
			at->prov->name, at->prov->name);
		diag_hint(dg, "for example %s:0x10000000:8:w, or %s:increment+arg0:4:w",
			  at->prov->name, at->prov->name);
		return -1;
	}
	const char *plus = strchr(parts[1], '+');
	if (plus) {
		if (parse_wp_func(c, an, parts[1], plus))
			return -1;
	} else if (at->prov->id == PROV_ASYNCWATCHPOINT) {
		struct diag *dg = diag_error(c->diags, an->span,
					     "asyncwatchpoint requires a function name");
		diag_hint(dg, "asyncwatchpoint:FUNC+argN:LENGTH:MODE; an address takes watchpoint:");
		return -1;
	} else if (!parse_u64(parts[1], &at->wp_addr)) {
		struct diag *dg = diag_error(c->diags, an->span,
					     "invalid watchpoint address '%s'", parts[1]);
		diag_hint(dg, "an address is a number (0x10000000), or FUNC+argN for a "
			  "function's pointer argument");
		return -1;
	}
	uint64_t len;
	if (!parse_u64(parts[2], &len) || (len != 1 && len != 2 && len != 4 && len != 8)) {
		diag_error(c->diags, an->span, "watchpoint length must be one of (1,2,4,8)");
		return -1;
	}
	at->wp_len = (unsigned)len;
	if (parse_wp_mode(c, an, parts[3]))
		return -1;
	add_event(c, at, catalog_event(at->prov, NULL));
	return 0;
}

/* bpftrace's providers that gpux lacks, with their short names: named
 * as such rather than "unknown", with a misleading closest match. */
static const char *bpftrace_only(const char *name)
{
	static const char *const names[][2] = {
		{ "kprobe", "k" }, { "kretprobe", "kr" }, { "kfunc", "f" },
		{ "kretfunc", "fr" }, { "fentry", NULL }, { "fexit", NULL },
		{ "rawtracepoint", "rt" }, { "iter", "it" },
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
		diag_hint(dg, "gpux probes the GPU, CUDA calls and user space: uprobe, uretprobe, "
			  "usdt, watchpoint, tracepoint, profile, software, hardware, BEGIN, END, "
			  "interval (see gpux -l)");
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
	switch (at->prov->syntax) {
	case SYN_BARE:
		if (nparts != 1) {
			diag_error(c->diags, an->span, "%s takes no arguments",
				   at->prov->name);
			return -1;
		}
		add_event(c, at, catalog_event(at->prov, NULL));
		return 0;
	case SYN_EVENT:
		return resolve_events(c, an, parts, nparts);
	case SYN_UPROBE:
		return resolve_uprobe(c, an, parts, nparts);
	case SYN_USDT:
		return resolve_usdt(c, an, parts, nparts);
	case SYN_TRACEPOINT:
		return resolve_tracepoint(c, an, parts, nparts);
	case SYN_INTERVAL:
		return resolve_interval(c, an, parts, nparts > 4 ? 4 : nparts);
	case SYN_WATCHPOINT:
		return resolve_watchpoint(c, an, parts, nparts);
	}
	return -1;
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

int sema_probes(struct program *prog, struct diags *diags)
{
	struct pctx c = { prog, diags };
	int rc = 0, index = 0;
	for (struct node *p = prog->probes; p; p = p->next)
		if (resolve_probe(&c, p, index++))
			rc = -1;
	return rc;
}
