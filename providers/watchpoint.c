/* watchpoint:, asyncwatchpoint: hardware breakpoints on memory of the
 * -p/-c process (or the kernel's); attached by
 * providers/watchpoint_attach.c, set where codegen/host_watch.c says. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "provider.h"

extern const struct provider_unit watchpoint_unit;

static const struct provider providers[] = {
	{ &watchpoint_unit, "watchpoint", "w", PLACE_HOST, RUNNER_KERNEL, SYN_WATCHPOINT,
	  "a memory access (hardware breakpoint) in the -p/-c process, else the kernel", true,
	  ATTACH_WATCHPOINT, false },
	{ &watchpoint_unit, "asyncwatchpoint", "aw", PLACE_HOST, RUNNER_KERNEL,
	  SYN_WATCHPOINT, "as watchpoint:FUNC+argN, without stopping the process to set it",
	  true, ATTACH_WATCHPOINT, false },
};

static const struct field no_fields[] = { FIELDS_END };

static const struct event events[] = {
	{ &providers[0], NULL, PLACE_HOST, FILTER_NONE, no_fields, 0, 0,
	  "LENGTH bytes at ADDRESS, or at the pointer argN of FUNC once it is called, "
	  "read (r), written (w) or run (x)", 0, 0, 0, 0, NULL, 0 },
	{ &providers[1], NULL, PLACE_HOST, FILTER_NONE, no_fields, 0, 0,
	  "the pointer argN of FUNC, watched once FUNC is called; the process runs on meanwhile", 0, 0, 0, 0, NULL, 0 },
};

/* x86-64 passes six integer arguments in registers */
#define WP_REG_ARGS 6

/* FUNC+argN: the pointer argument N (a register of x86-64's six) of
 * FUNC in the -p/-c program, watched once FUNC is called. */
static int parse_wp_func(struct spec *s, const char *spec, const char *plus)
{
	struct attach *at = &s->an->u.attach;
	const char *n = plus + 1;
	char *end;
	if (strncmp(n, "arg", 3) || n[3] < '0' || n[3] > '9' || plus == spec ||
	    spec_has_glob(spec)) {
		struct diag *dg = spec_error(s, "invalid watched argument '%s'", spec);
		diag_hint(dg, "write FUNC+argN: the function's pointer argument N, "
			  "e.g. increment+arg0");
		return -1;
	}
	errno = 0;
	unsigned long v = strtoul(n + 3, &end, 10);
	if (*end || errno) {
		spec_error(s, "invalid watched argument '%s'", spec);
		return -1;
	}
	if (v >= WP_REG_ARGS) {
		struct diag *dg = spec_error(s, "x86_64 doesn't support arg%lu", v);
		diag_hint(dg, "arg0 to arg5 are passed in registers");
		return -1;
	}
	at->wp_func = arena_strndup(&s->prog->arena, spec, (size_t)(plus - spec));
	at->wp_arg = (int)v;
	return 0;
}

/* The access mode: letters of r, w and x, each once, sorted, and one
 * of the combinations x86-64's debug registers offer. */
static int parse_wp_mode(struct spec *s, const char *mode)
{
	static const char order[] = "rwx";
	char sorted[4] = "";
	int k = 0;
	bool seen[3] = { false, false, false };
	if (!*mode || strspn(mode, order) != strlen(mode)) {
		struct diag *dg = spec_error(s, "watchpoint mode must be combination of (r,w,x)");
		diag_hint(dg, "w for writes, rw for reads and writes, x for execution");
		return -1;
	}
	for (const char *m = mode; *m; m++) {
		int i = (int)(strchr(order, *m) - order);
		if (seen[i]) {
			spec_error(s, "watchpoint modes may not be duplicated");
			return -1;
		}
		seen[i] = true;
	}
	for (int i = 0; i < 3; i++)
		if (seen[i])
			sorted[k++] = order[i];
	if (strcmp(sorted, "w") && strcmp(sorted, "rw") && strcmp(sorted, "x")) {
		struct diag *dg = spec_error(s, "invalid watchpoint mode: %s",
					     sorted);
		diag_hint(dg, "x86-64 watches w, rw or x (reads alone cannot be watched)");
		return -1;
	}
	s->an->u.attach.wp_mode = arena_strdup(&s->prog->arena, sorted);
	return 0;
}

/* watchpoint:ADDRESS:LENGTH:MODE or watchpoint:FUNC+argN:LENGTH:MODE
 * (asyncwatchpoint: the second form only); bpftrace's forms. Whether
 * there is a process to watch is codegen's to check (it knows -p/-c). */
static int resolve(struct spec *s)
{
	struct attach *at = &s->an->u.attach;
	if (s->nparts != 4) {
		struct diag *dg = spec_error(s, "%s needs an address, a length and a mode: %s:ADDRESS:LENGTH:MODE",
			at->prov->name, at->prov->name);
		diag_hint(dg, "for example %s:0x10000000:8:w, or %s:increment+arg0:4:w",
			  at->prov->name, at->prov->name);
		return -1;
	}
	const char *plus = strchr(s->parts[1], '+');
	if (plus) {
		if (parse_wp_func(s, s->parts[1], plus))
			return -1;
	} else if (at->prov == &providers[1]) { /* asyncwatchpoint */
		struct diag *dg = spec_error(s, "asyncwatchpoint requires a function name");
		diag_hint(dg, "asyncwatchpoint:FUNC+argN:LENGTH:MODE; an address takes watchpoint:");
		return -1;
	} else if (!spec_parse_u64(s->parts[1], &at->wp_addr)) {
		struct diag *dg = spec_error(s, "invalid watchpoint address '%s'", s->parts[1]);
		diag_hint(dg, "an address is a number (0x10000000), or FUNC+argN for a "
			  "function's pointer argument");
		return -1;
	}
	uint64_t len;
	if (!spec_parse_u64(s->parts[2], &len) || (len != 1 && len != 2 && len != 4 && len != 8)) {
		spec_error(s, "watchpoint length must be one of (1,2,4,8)");
		return -1;
	}
	at->wp_len = (unsigned)len;
	if (parse_wp_mode(s, s->parts[3]))
		return -1;
	at->wp_async = at->prov == &providers[1];
	spec_add_event(s, catalog_event(at->prov, NULL));
	return 0;
}

const struct provider_unit watchpoint_unit = {
	.providers = providers,
	.nproviders = sizeof(providers) / sizeof(providers[0]),
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.resolve = resolve,
	.usage = ":ADDRESS|FUNC+argN:LENGTH:MODE",
	.section = spec_section_perf_event,
};
