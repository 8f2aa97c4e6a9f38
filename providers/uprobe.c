/* uprobe:, uretprobe: a user-space function's entry (or a byte into it,
 * or an address) and its return, in a file or library by name; attached
 * by providers/uprobe_attach.c. */
#include <string.h>

#include "provider.h"

extern const struct provider_unit uprobe_unit;

static const struct provider providers[] = {
	{ &uprobe_unit, "uprobe", "u", PLACE_HOST, RUNNER_KERNEL, SYN_UPROBE,
	  "entry of a user-space function", true,
	  ATTACH_UPROBE, true },
	{ &uprobe_unit, "uretprobe", "ur", PLACE_HOST, RUNNER_KERNEL, SYN_UPROBE,
	  "return of a user-space function", true,
	  ATTACH_URETPROBE, true },
};

static const struct event events[] = {
	{ &providers[0], NULL, PLACE_HOST, FILTER_NONE, spec_regs_entry_fields, 0, 0,
	  "entry of SYMBOL in TARGET (a path or library name)", 0, 0, 0, 0, NULL, 0 },
	{ &providers[1], NULL, PLACE_HOST, FILTER_NONE, spec_regs_return_fields, 0, 0,
	  "return of SYMBOL in TARGET (a path or library name)", 0, 0, 0, 0, NULL, 0 },
};

/* The symbol of a uprobe, as bpftrace reads it: FUNC, FUNC+OFFSET (an
 * offset into the function; not in a uretprobe, which fires on return)
 * or an address in the file (a number). */
static int parse_usym(struct spec *s, const char *sym)
{
	struct attach *at = &s->an->u.attach;
	struct arena *a = &s->prog->arena;
	const char *plus = strchr(sym, '+');
	at->func = sym;
	at->sym = sym;
	if (!plus) {
		if (!spec_parse_u64(sym, &at->offset))
			return 0;
		at->func = NULL;
		at->addr = true;
		at->sym = arena_printf(a, "%llu", (unsigned long long)at->offset);
		return 0;
	}
	if (at->prov->attach != ATTACH_UPROBE) {
		struct diag *dg = spec_error(s, "%s takes no offset: it fires when the function returns", at->prov->name);
		diag_hint(dg, "an offset into a function needs uprobe:TARGET:FUNC+OFFSET");
		return -1;
	}
	if (strchr(plus + 1, '+')) {
		spec_error(s, "more than one offset in '%s'", sym);
		return -1;
	}
	char *fn = arena_strndup(a, sym, (size_t)(plus - sym));
	if (!*fn) {
		spec_error(s, "an offset needs a function: FUNC+OFFSET, not '%s'",
			   sym);
		return -1;
	}
	if (spec_has_glob(fn)) {
		spec_error(s, "an offset cannot follow a glob ('%s')", sym);
		return -1;
	}
	if (!spec_parse_u64(plus + 1, &at->offset)) {
		struct diag *dg = spec_error(s, "invalid offset '%s' in '%s'",
					     plus + 1, sym);
		diag_hint(dg, "an offset is a number of bytes: FUNC+8, FUNC+0x10");
		return -1;
	}
	at->func = fn;
	at->sym = at->offset ? arena_printf(a, "%s+%llu", fn, (unsigned long long)at->offset)
				: fn;
	return 0;
}

/* args.NAME: a function's parameters, from the DWARF of its file, as
 * bpftrace 0.17 reads them at a function's entry; read when a probe
 * uses them (sema), since a large file's DWARF takes time */
static int args_from_dwarf(struct spec *s)
{
	struct attach *at = &s->an->u.attach;
	if (at->prov != &providers[0])
		at->args_why = "a uretprobe fires when the function returns, its arguments gone";
	else if (spec_has_glob(at->func) || at->addr || at->offset)
		at->args_why = "args are read at the entry of one function named whole";
	else
		at->args_dwarf = true;
	return 0;
}

static int resolve(struct spec *s)
{
	struct attach *at = &s->an->u.attach;
	if (s->nparts != 3 || !*s->parts[1] || !*s->parts[2]) {
		struct diag *dg = spec_error(s, "%s needs a target and a symbol: %s:LIB_OR_PATH:SYMBOL",
			at->prov->name, at->prov->name);
		diag_hint(dg, "for example %s:libcuda:cuLaunchKernel", at->prov->name);
		return -1;
	}
	spec_add_event(s, catalog_event(at->prov, NULL));
	if (parse_usym(s, s->parts[2]))
		return -1;
	/* a library by name is found, a glob matched and an address named
	 * only when attaching */
	at->by_cookie = spec_has_glob(at->filter) || !strchr(at->event, '/') || at->addr;
	return args_from_dwarf(s);
}

static const char *section(struct arena *a, const struct attach *at, const struct event *e,
			   const char *site)
{
	(void)e, (void)site; /* a glob symbol is expanded when attaching */
	return arena_printf(a, "%s/%s:%s", at->prov->name, at->event, at->filter);
}

const struct provider_unit uprobe_unit = {
	.providers = providers,
	.nproviders = sizeof(providers) / sizeof(providers[0]),
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.resolve = resolve,
	.usage = ":TARGET:SYMBOL",
	.section = section,
};
