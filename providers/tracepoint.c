/* tracepoint: the kernel's tracepoints, their fields read from tracefs
 * (lang/tracepoint.c); attached by providers/tracepoint_attach.c. */
#include <errno.h>
#include <fnmatch.h>
#include <string.h>

#include "provider.h"
#include "tracepoint.h"

extern const struct provider_unit tracepoint_unit;

static const struct provider providers[] = {
	{ &tracepoint_unit, "tracepoint", "t", PLACE_HOST, RUNNER_KERNEL, SYN_TRACEPOINT,
	  "a Linux kernel tracepoint", false,
	  ATTACH_TRACEPOINT, false },
};

static const struct field no_fields[] = { FIELDS_END };

static const struct event events[] = {
	{ &providers[0], NULL, PLACE_HOST, FILTER_NONE, no_fields, 0, 0,
	  "kernel tracepoint CATEGORY:NAME; fields come from tracefs", 0, 0, 0, 0, NULL, 0 },
};

/* A glob (tracepoint:syscalls:sys_enter_open*) becomes one attach point
 * per tracepoint it matches, as bpftrace attaches them: an is the first
 * (s->parts[1], s->parts[2] its category and name), the others follow it in
 * the probe's list and are resolved in their turn. */
static int expand_tracepoints(struct spec *s)
{
	struct arena *a = &s->prog->arena;
	char **names;
	size_t n;
	int rc = tracepoint_list(a, spec_has_glob(s->parts[1]) ? NULL : s->parts[1], &names, &n);
	if (rc < 0) {
		spec_error(s, "cannot list the tracepoints %s matches: %s",
			   s->an->u.attach.text,
			   rc == -ENODEV ? "tracefs is not mounted" : strerror(-rc));
		return -1;
	}
	const char *cat = s->parts[1], *name = s->parts[2];
	struct node *last = s->an;
	int k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *colon = strchr(names[i], ':');
		char *tc = colon ? arena_strndup(a, names[i], (size_t)(colon - names[i])) : NULL;
		if (!tc || fnmatch(cat, tc, 0) || fnmatch(name, colon + 1, 0))
			continue;
		const char *text = arena_printf(a, "%s:%s", s->an->u.attach.prov->name, names[i]);
		if (k++ == 0) {
			s->an->u.attach.text = text;
			s->parts[1] = tc;
			s->parts[2] = arena_printf(a, "%s", colon + 1);
			continue;
		}
		struct node *m = arena_alloc(a, sizeof(*m));
		*m = *s->an;
		m->u.attach.text = text;
		m->next = last->next;
		last->next = m;
		last = m;
	}
	if (!k) {
		spec_error(s, "tracepoints not found: %s:%s", cat, name);
		return -1;
	}
	s->an->u.attach.event = s->parts[1];
	s->an->u.attach.filter = s->parts[2];
	return 0;
}

static int resolve(struct spec *s)
{
	struct attach *at = &s->an->u.attach;
	if (s->nparts != 3 || !*s->parts[1] || !*s->parts[2]) {
		spec_error(s, "tracepoint needs a category and a name: tracepoint:CATEGORY:NAME");
		return -1;
	}
	if ((spec_has_glob(s->parts[1]) || spec_has_glob(s->parts[2])) && expand_tracepoints(s))
		return -1;
	spec_add_event(s, catalog_event(at->prov, NULL));
	struct field *fields = NULL;
	size_t n = 0;
	int rc = tracepoint_fields(&s->prog->arena, s->parts[1], s->parts[2], &fields, &n);
	if (rc == -ENOENT || rc == -EINVAL) {
		spec_error(s, "tracepoint not found: %s:%s",
			   s->parts[1], s->parts[2]);
		return -1;
	}
	if (rc < 0) {
		spec_warning(s, "cannot read the format of tracepoint %s:%s (%s); its args are not checked",
			     s->parts[1], s->parts[2], strerror(-rc));
		return 0;
	}
	at->args = fields;
	at->nargs = (int)n;
	return 0;
}

/* The kernel's tracepoints matching glob ("tracepoint:CATEGORY:NAME"),
 * with verbose each one's fields from tracefs. */
static int list(struct arena *a, const struct provider *p, const char *glob, bool verbose,
		struct listed_probe **out, size_t *n)
{
	size_t skip = strlen(p->name) + 1, clen;
	const char *rest = glob + skip, *colon = strchr(rest, ':');
	char **names;
	size_t nn;
	/* a literal category reads one directory instead of all */
	const char *category = NULL;
	if (colon && (clen = (size_t)(colon - rest)) < strcspn(rest, "*?[\\"))
		category = arena_strndup(a, rest, clen);
	int err = tracepoint_list(a, category, &names, &nn);
	*n = 0;
	if (err == -ENOENT || err == -EINVAL)
		return 0;
	if (err)
		return err;
	*out = arena_zalloc(a, (nn + 1) * sizeof(**out));
	for (size_t i = 0; i < nn; i++) {
		const char *full = arena_printf(a, "%s:%s", p->name, names[i]);
		if (fnmatch(glob, full, 0))
			continue;
		struct listed_probe *lp = &(*out)[(*n)++];
		lp->name = full;
		if (!verbose)
			continue;
		char *c = arena_strdup(a, names[i]), *nm = strchr(c, ':');
		struct field *f = NULL;
		size_t nf;
		*nm++ = '\0';
		int r = tracepoint_fields(a, c, nm, &f, &nf);
		lp->own = true;
		lp->fields = f;
		lp->doc = r ? arena_printf(a, "fields unreadable: %s", strerror(-r)) : NULL;
	}
	return 0;
}

static const char *section(struct arena *a, const struct attach *at, const struct event *e,
			   const char *site)
{
	(void)e, (void)site;
	return arena_printf(a, "tracepoint/%s/%s", at->event, at->filter);
}

const struct provider_unit tracepoint_unit = {
	.providers = providers,
	.nproviders = sizeof(providers) / sizeof(providers[0]),
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.resolve = resolve,
	.usage = ":CATEGORY:NAME",
	.list = list,
	.section = section,
};
