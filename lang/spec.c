/* What units read their attach points with (lang/provider.h): small
 * parsers, located diagnostics, and the readers several units share. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider.h"
#include "sema.h"
#include "suggest.h"

bool spec_has_glob(const char *s)
{
	return s && strpbrk(s, "*?[") != NULL;
}

bool spec_parse_u64(const char *s, uint64_t *out)
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

void spec_add_event(struct spec *s, const struct event *e)
{
	struct attach *at = &s->an->u.attach;
	const struct event **ev = arena_alloc(&s->prog->arena,
					      sizeof(*ev) * (size_t)(at->nevents + 1));
	if (at->nevents)
		memcpy(ev, at->events, sizeof(*ev) * (size_t)at->nevents);
	ev[at->nevents++] = e;
	at->events = ev;
}

struct diag *spec_error(struct spec *s, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return diag_error(s->diags, s->an->span, "%s", msg);
}

struct diag *spec_warning(struct spec *s, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return diag_warning(s->diags, s->an->span, "%s", msg);
}

int spec_resolve_bare(struct spec *s)
{
	struct attach *at = &s->an->u.attach;
	if (s->nparts != 1) {
		spec_error(s, "%s takes no arguments", at->prov->name);
		return -1;
	}
	spec_add_event(s, catalog_event(at->prov, NULL));
	return 0;
}

/* The events of provider p, as names, for hints. */
static size_t event_names(const struct provider *p, const char **names, size_t max)
{
	size_t k = 0;
	for (size_t i = 0; i < p->unit->nevents && k < max; i++) {
		const struct event *e = &p->unit->events[i];
		if (e->name && e->prov == p)
			names[k++] = e->name;
	}
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

/* The optional third part: a glob on a name, or FILTER_COUNT's N. */
static int read_filter(struct spec *s)
{
	struct attach *at = &s->an->u.attach;
	const struct provider *p = at->prov;
	if (at->events[0]->filter == FILTER_COUNT) {
		at->perf_count = at->events[0]->perf_period;
		if (s->nparts == 3 &&
		    (!spec_parse_u64(s->parts[2], &at->perf_count) || !at->perf_count)) {
			spec_error(s, "%s count must be a positive integer, not '%s'", p->name,
				   s->parts[2]);
			return -1;
		}
		return 0;
	}
	if (s->nparts < 3)
		return 0;
	for (int i = 0; i < at->nevents; i++) {
		if (at->events[i]->filter != FILTER_NONE)
			continue;
		char buf[64];
		struct diag *dg = spec_error(s, "%s takes no filter, but '%s' was given",
					     event_str(at->events[i], buf, sizeof(buf)),
					     s->parts[2]);
		diag_hint(dg, "remove ':%s'", s->parts[2]);
		return -1;
	}
	if (!*s->parts[2]) {
		spec_error(s, "empty filter in '%s'", at->text);
		return -1;
	}
	return 0;
}

int spec_resolve_events(struct spec *s)
{
	struct attach *at = &s->an->u.attach;
	const struct provider *p = at->prov;
	char **parts = s->parts;
	if (s->nparts < 2 || !*parts[1]) {
		struct diag *dg = spec_error(s, "%s needs an event: %s:EVENT", p->name, p->name);
		list_events_hint(dg, p);
		return -1;
	}
	for (size_t i = 0; i < p->unit->nevents; i++) {
		const struct event *e = &p->unit->events[i];
		if (!e->name || e->prov != p)
			continue;
		if (spec_has_glob(parts[1]) ? !fnmatch(parts[1], e->name, 0)
					    : !strcmp(parts[1], e->name))
			spec_add_event(s, e);
	}
	if (!at->nevents) {
		struct diag *dg = spec_has_glob(parts[1])
			? spec_error(s, "no %s event matches '%s'", p->name, parts[1])
			: spec_error(s, "unknown event '%s' for provider %s", parts[1], p->name);
		const char *names[32];
		size_t k = event_names(p, names, 32);
		const char *best = spec_has_glob(parts[1]) ? NULL
			: suggest_closest(parts[1], names, k);
		if (best)
			diag_hint(dg, "did you mean '%s:%s'?", p->name, best);
		else
			list_events_hint(dg, p);
		return -1;
	}
	if (s->nparts > 3) {
		spec_error(s, "too many ':' parts in '%s': expected %s:EVENT[:FILTER]", at->text,
			   p->name);
		return -1;
	}
	/* a sampled perf event is one event, counted every N */
	if (p->attach == ATTACH_PERF_EVENT && at->nevents > 1) {
		spec_error(s, "%s:%s names %d events: a %s probe samples one", p->name, parts[1],
			   at->nevents, p->name);
		return -1;
	}
	return read_filter(s);
}

int spec_resolve_period(struct spec *s)
{
	static const struct { const char *unit; uint64_t ns; bool hz; } units[] = {
		{ "s", 1000000000ULL, false }, { "ms", 1000000ULL, false },
		{ "us", 1000ULL, false },      { "hz", 0, true },
	};
	struct attach *at = &s->an->u.attach;
	const char *prov = at->prov->name;
	char **parts = s->parts;
	if (s->nparts != 3) {
		struct diag *dg = spec_error(s, "%s needs a unit and a count: %s:UNIT:N", prov,
					     prov);
		diag_hint(dg, "for example %s:s:1 or %s:ms:100", prov, prov);
		return -1;
	}
	size_t i;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(parts[1], units[i].unit))
			break;
	if (i == sizeof(units) / sizeof(units[0])) {
		struct diag *dg = spec_error(s, "%s is not an accepted unit of time", parts[1]);
		diag_hint(dg, "units are s, ms, us and hz");
		return -1;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(parts[2], &end, 10);
	if (!*parts[2] || *end || errno || v == 0 || parts[2][0] == '-' ||
	    (!units[i].hz && v > UINT64_MAX / units[i].ns) ||
	    (units[i].hz && v > 1000000000ULL)) {
		spec_error(s, "%s count must be a positive integer, not '%s'", prov, parts[2]);
		return -1;
	}
	at->interval_ns = units[i].hz ? 1000000000ULL / v : v * units[i].ns;
	at->interval_hz = units[i].hz ? v : 0;
	spec_add_event(s, catalog_event(at->prov, NULL));
	return 0;
}

const char *spec_section_perf_event(struct arena *a, const struct attach *at,
				    const struct event *e, const char *site)
{
	(void)a, (void)at, (void)e, (void)site;
	return "perf_event";
}

const struct field spec_regs_entry_fields[] = {
	{ "arg0", TYPE_U64, UNIF_UNIFORM, "first integer argument" },
	{ "arg1", TYPE_U64, UNIF_UNIFORM, "second integer argument" },
	{ "arg2", TYPE_U64, UNIF_UNIFORM, "third integer argument" },
	{ "arg3", TYPE_U64, UNIF_UNIFORM, "fourth integer argument" },
	{ "arg4", TYPE_U64, UNIF_UNIFORM, "fifth integer argument" },
	{ "arg5", TYPE_U64, UNIF_UNIFORM, "sixth integer argument" },
	{ "sarg0", TYPE_U64, UNIF_UNIFORM, "first argument on the stack (x86-64: past six)" },
	{ "sarg1", TYPE_U64, UNIF_UNIFORM, "second argument on the stack" },
	{ "sarg2", TYPE_U64, UNIF_UNIFORM, "third argument on the stack" },
	{ "sarg3", TYPE_U64, UNIF_UNIFORM, "fourth argument on the stack" },
	{ "sarg4", TYPE_U64, UNIF_UNIFORM, "fifth argument on the stack" },
	{ "sarg5", TYPE_U64, UNIF_UNIFORM, "sixth argument on the stack" },
	{ "func", TYPE_STR, UNIF_UNIFORM, "probed function name" },
	FIELDS_END,
};

const struct field spec_regs_return_fields[] = {
	{ "retval", TYPE_U64, UNIF_UNIFORM, "return value" },
	{ "func", TYPE_STR, UNIF_UNIFORM, "probed function name" },
	FIELDS_END,
};
