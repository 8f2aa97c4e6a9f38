/* usdt: statically defined probes (sys/sdt.h) of a file, or of every
 * file of the -p process; attached by providers/usdt_attach.c, one
 * program per site. */
#include "provider.h"

extern const struct provider_unit usdt_unit;

static const struct provider providers[] = {
	{ &usdt_unit, "usdt", "U", PLACE_HOST, RUNNER_KERNEL, SYN_USDT,
	  "a statically defined probe (sys/sdt.h) in a user-space binary", true,
	  ATTACH_USDT, false },
};

/* argN is read as the probe site's note says (a register, memory, a
 * constant), extended by its sign to 64 bits; typed u64, as bpftrace's */
static const struct field usdt_fields[] = {
	{ "arg0", TYPE_U64, UNIF_UNIFORM, "the probe's argument 0" },
	{ "arg1", TYPE_U64, UNIF_UNIFORM, "the probe's argument 1" },
	{ "arg2", TYPE_U64, UNIF_UNIFORM, "the probe's argument 2" },
	{ "arg3", TYPE_U64, UNIF_UNIFORM, "the probe's argument 3" },
	{ "arg4", TYPE_U64, UNIF_UNIFORM, "the probe's argument 4" },
	{ "arg5", TYPE_U64, UNIF_UNIFORM, "the probe's argument 5" },
	{ "arg6", TYPE_U64, UNIF_UNIFORM, "the probe's argument 6" },
	{ "arg7", TYPE_U64, UNIF_UNIFORM, "the probe's argument 7" },
	{ "arg8", TYPE_U64, UNIF_UNIFORM, "the probe's argument 8" },
	{ "arg9", TYPE_U64, UNIF_UNIFORM, "the probe's argument 9" },
	{ "arg10", TYPE_U64, UNIF_UNIFORM, "the probe's argument 10" },
	{ "arg11", TYPE_U64, UNIF_UNIFORM, "the probe's argument 11" },
	FIELDS_END,
};

static const struct event events[] = {
	{ &providers[0], NULL, PLACE_HOST, FILTER_NONE, usdt_fields, 0, 0,
	  "USDT probe [PROVIDER:]PROBE of TARGET (a path; with -p, any file the process maps)", 0, 0, 0, 0, NULL, 0 },
};

/* usdt:TARGET:PROBE or usdt:TARGET:PROVIDER:PROBE (globs in both);
 * bpftrace's forms. An empty TARGET means every file of the -p process,
 * which codegen checks (it knows the pid). The notes themselves are read
 * by codegen too: the front end reads no file. */
static int resolve(struct spec *s)
{
	struct attach *at = &s->an->u.attach;
	if (s->nparts != 3 && s->nparts != 4) {
		struct diag *dg = spec_error(s, "%s needs a target and a probe: %s:TARGET:[PROVIDER:]PROBE",
			at->prov->name, at->prov->name);
		diag_hint(dg, "for example %s:/usr/bin/python3:function__entry", at->prov->name);
		return -1;
	}
	/* an empty provider (usdt:BIN::probe) is any, as in bpftrace */
	at->usdt_provider = s->nparts == 4 && *s->parts[2] ? s->parts[2] : "*";
	at->usdt_probe = s->parts[s->nparts - 1];
	if (!*at->usdt_probe) {
		spec_error(s, "empty probe name in '%s'", at->text);
		return -1;
	}
	spec_add_event(s, catalog_event(at->prov, NULL));
	return 0;
}

/* libbpf's name; the site is the program's host_prog */
static const char *section(struct arena *a, const struct attach *at, const struct event *e,
			   const char *site)
{
	(void)at, (void)e;
	return arena_printf(a, "usdt/%s", site);
}

const struct provider_unit usdt_unit = {
	.providers = providers,
	.nproviders = sizeof(providers) / sizeof(providers[0]),
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.resolve = resolve,
	.usage = ":TARGET:[PROVIDER:]PROBE",
	.section = section,
};
