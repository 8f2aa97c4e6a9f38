/* kprobe:, kretprobe: a kernel function's entry (or a byte into it) and
 * its return, as bpftrace 0.17 writes them (kprobe:FUNCTION,
 * kprobe:FUNCTION+OFFSET, globs), and in one module:
 * kprobe:MODULE:FUNCTION. A glob is expanded when attaching, one
 * attachment per function, func and probe naming each; attached by
 * providers/kprobe_attach.c. */
#include <fnmatch.h>
#include <string.h>

#include "provider.h"
#include "tracepoint.h"

extern const struct provider_unit kprobe_unit;

static const struct provider providers[] = {
	{ &kprobe_unit, "kprobe", "k", PLACE_HOST, RUNNER_KERNEL, SYN_UNIT,
	  "entry of a kernel function, or a byte into it", false, ATTACH_KPROBE, true },
	{ &kprobe_unit, "kretprobe", "kr", PLACE_HOST, RUNNER_KERNEL, SYN_UNIT,
	  "return of a kernel function", false, ATTACH_KPROBE, true },
};

static const struct event events[] = {
	{ &providers[0], NULL, PLACE_HOST, FILTER_NONE, spec_regs_entry_fields, 0, 0,
	  "entry of FUNCTION (a glob), or OFFSET bytes into it, in the kernel or in MODULE",
	  0, 0, 0, 0, NULL, 0 },
	{ &providers[1], NULL, PLACE_HOST, FILTER_NONE, spec_regs_return_fields, 0, 0,
	  "return of FUNCTION (a glob), in the kernel or in MODULE", 0, 0, 0, 0, NULL, 0 },
};

/* FUNCTION or FUNCTION+OFFSET (decimal, 0x hex or 0 octal), as
 * bpftrace reads them; the probe is named with the offset in decimal. */
static int parse_function(struct spec *s, const char *text)
{
	struct attach *at = &s->an->u.attach;
	const char *plus = strchr(text, '+');
	at->func = text;
	at->sym = text;
	if (!plus)
		return 0;
	if (at->prov == &providers[1]) {
		struct diag *dg = spec_error(s, "%s takes no offset: it fires when the function "
					     "returns", at->prov->name);
		diag_hint(dg, "an offset into a function needs kprobe:FUNCTION+OFFSET");
		return -1;
	}
	char *fn = arena_strndup(&s->prog->arena, text, (size_t)(plus - text));
	if (!*fn) {
		spec_error(s, "an offset needs a function: FUNCTION+OFFSET, not '%s'", text);
		return -1;
	}
	if (spec_has_glob(fn) || spec_has_glob(at->module)) {
		spec_error(s, "an offset cannot follow a glob ('%s')", at->text);
		return -1;
	}
	if (!spec_parse_u64(plus + 1, &at->offset)) {
		struct diag *dg = spec_error(s, "invalid offset '%s' in '%s'", plus + 1, text);
		diag_hint(dg, "an offset is a number of bytes: FUNCTION+8, FUNCTION+0x10");
		return -1;
	}
	at->func = fn;
	at->sym = at->offset ? arena_printf(&s->prog->arena, "%s+%llu", fn,
					    (unsigned long long)at->offset)
			     : fn;
	return 0;
}

/* kprobe:FUNCTION[+OFFSET] or kprobe:MODULE:FUNCTION[+OFFSET] */
static int resolve(struct spec *s)
{
	struct attach *at = &s->an->u.attach;
	const char *name = at->prov->name;
	if (s->nparts < 2 || s->nparts > 3 || !*s->parts[s->nparts - 1] ||
	    (s->nparts == 3 && !*s->parts[1])) {
		struct diag *dg = spec_error(s, "%s needs a function: %s:[MODULE:]FUNCTION%s", name,
					     name, at->prov == &providers[0] ? "[+OFFSET]" : "");
		diag_hint(dg, "for example %s:vfs_read, or %s:ext4:ext4_file_open", name, name);
		return -1;
	}
	at->module = s->nparts == 3 ? s->parts[1] : NULL;
	if (parse_function(s, s->parts[s->nparts - 1]))
		return -1;
	if (at->prov == &providers[1] && kretprobe_banned(at->func)) {
		spec_error(s, "kretprobe:%s can't be used as it might lock up your system",
			   at->func);
		return -1;
	}
	spec_add_event(s, catalog_event(at->prov, NULL));
	at->by_cookie = spec_has_glob(at->func) || spec_has_glob(at->module);
	if (at->by_cookie)
		return 0; /* matched when attaching; none is an error there */
	/* as bpftrace warns, a function tracefs does not list (unreadable
	 * included) */
	struct kfunc *fs;
	size_t n = 0;
	if (tracefs_functions(&s->prog->arena, at->func, at->module, &fs, &n) || !n)
		spec_warning(s, "%s is not traceable (either non-existing, inlined, or marked as "
			     "\"notrace\"); attaching to it will likely fail", at->func);
	return 0;
}

static int list(struct arena *a, const struct provider *p, const char *glob, bool verbose,
		struct listed_probe **out, size_t *n)
{
	struct kfunc *fs;
	size_t nf;
	(void)verbose; /* the event's fields are each function's */
	int err = tracefs_functions(a, NULL, NULL, &fs, &nf);
	if (err)
		return err;
	*out = arena_zalloc(a, (nf + 1) * sizeof(**out));
	*n = 0;
	for (size_t i = 0; i < nf; i++) {
		const char *probe = fs[i].module
			? arena_printf(a, "%s:%s:%s", p->name, fs[i].module, fs[i].name)
			: arena_printf(a, "%s:%s", p->name, fs[i].name);
		if (!fnmatch(glob, probe, 0))
			(*out)[(*n)++].name = probe;
	}
	return 0;
}

static const char *section(struct arena *a, const struct attach *at, const struct event *e,
			   const char *site)
{
	(void)e, (void)site; /* a glob is expanded when attaching */
	return arena_printf(a, "%s/%s%s%s", at->prov->name, at->module ? at->module : "",
			    at->module ? ":" : "", at->func);
}

const struct provider_unit kprobe_unit = {
	.providers = providers,
	.nproviders = sizeof(providers) / sizeof(providers[0]),
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.resolve = resolve,
	.usage = ":[MODULE:]FUNCTION",
	.list = list,
	.section = section,
};
