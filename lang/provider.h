/* A kind of probe as one unit. Each unit of providers/ holds everything
 * its kind is to the front end: its catalog rows (providers, events and
 * their fields), how its attach points are read, how `gpux -l` shows
 * them and the ELF section its host programs are compiled into. Where
 * its probes attach in the kernel, its attacher (providers/NAME_attach.c,
 * attach/kattach_unit.h) sits beside it and is built into
 * libgpux-host.so, where libbpf is. providers/units.def registers both.
 *
 * The rest of gpux reaches a provider only through this interface and
 * the catalog's data (lang/catalog.h): it never compares a name. */
#ifndef GPUX_PROVIDER_H
#define GPUX_PROVIDER_H

#include <stdarg.h>

#include "ast.h"
#include "catalog.h"
#include "diag.h"

/* Ends a { NULL }-terminated array of an event's fields. */
#define FIELDS_END { .name = NULL }

/* One attach point being read: what a unit's resolve reads and writes. */
struct spec {
	struct program *prog; /* its arena holds what resolve makes */
	struct diags *diags;
	struct node *an;      /* the attach point: an->u.attach */
	char **parts;         /* its ':'-separated parts; parts[0] the provider */
	int nparts;           /* 1 to 4, 5 for more */
};

/* One probe a unit lists; with own, its fields and description (NULL:
 * none) instead of its event's. */
struct listed_probe {
	const char *name;
	bool own;
	const struct field *fields;
	const char *doc;
};

struct provider_unit {
	const struct provider *providers;
	size_t nproviders;
	const struct event *events; /* each names its provider (event.prov) */
	size_t nevents;
	/* Reads s->parts into s->an->u.attach: the events it matches
	 * (spec_add_event) and its site (what host lowering and the
	 * attacher need). 0, or -1 after a located error. May add attach
	 * points after s->an (a glob that matches several). */
	int (*resolve)(struct spec *s);
	/* `gpux -l`'s line for a provider with one nameless event, after
	 * its name (":TARGET:SYMBOL"; "" for BEGIN); NULL where each event
	 * is listed by name. */
	const char *usage;
	/* `gpux -l PROVIDER:GLOB`: the probes of provider p it can attach
	 * to here that match glob (whole names, the provider's full name
	 * first), into the arena; with verbose, each one's own fields where
	 * it has them (a tracepoint's). 0, or -errno where they cannot be
	 * read. NULL: the usage line is listed. */
	int (*list)(struct arena *a, const struct provider *p, const char *glob, bool verbose,
		    struct listed_probe **out, size_t *n);
	/* The ELF section of a host program for at (its event e); libbpf
	 * takes the program's type from the prefix. site is what host
	 * lowering found for it (a usdt site, a driver hook's member), else
	 * NULL. NULL where the unit's probes compile to no host program. */
	const char *(*section)(struct arena *a, const struct attach *at, const struct event *e,
			       const char *site);
};

/* The registered units, in the order `gpux -l` lists them
 * (providers/registry.c). */
const struct provider_unit *const *provider_units(size_t *n);

/* What units read specs with (lang/spec.c). */
bool spec_has_glob(const char *s);
/* A whole unsigned number, decimal, 0x hex or 0 octal (bpftrace's). */
bool spec_parse_u64(const char *s, uint64_t *out);
void spec_add_event(struct spec *s, const struct event *e);
/* Errors and warnings located at the attach point. */
struct diag *spec_error(struct spec *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
struct diag *spec_warning(struct spec *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Readers that several units share:
 * - BEGIN, END: nothing after the name;
 * - provider:EVENT[:FILTER], the catalog's named events (globs expand),
 *   the filter as the event says (a glob, or FILTER_COUNT's N);
 * - provider:UNIT:N, a period (s, ms, us) or a rate (hz). */
int spec_resolve_bare(struct spec *s);
/* The section of a program attached by hand to perf events (a unit's
 * section: profile, software, hardware, watchpoints); libbpf's type is
 * perf_event. */
const char *spec_section_perf_event(struct arena *a, const struct attach *at,
				    const struct event *e, const char *site);
/* The fields of a function's entry and return where the context is the
 * CPU's registers (provider.regs): argN, sargN, func; retval, func. */
extern const struct field spec_regs_entry_fields[];
extern const struct field spec_regs_return_fields[];
int spec_resolve_events(struct spec *s);
int spec_resolve_period(struct spec *s);

#endif
