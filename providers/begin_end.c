/* BEGIN, END: once before every other probe and once at exit, run by
 * gpux's own VM. */
#include "host_sec.h"
#include "provider.h"

extern const struct provider_unit begin_end_unit;

static const struct provider providers[] = {
	{ &begin_end_unit, "BEGIN", NULL, PLACE_HOST, RUNNER_GPUX, SYN_BARE,
	  "once, before any other probe", false,
	  ATTACH_VM, false },
	{ &begin_end_unit, "END", NULL, PLACE_HOST, RUNNER_GPUX, SYN_BARE,
	  "once, when gpux exits", false,
	  ATTACH_VM, false },
};

static const struct field no_fields[] = { FIELDS_END };

static const struct event events[] = {
	{ &providers[0], NULL, PLACE_HOST, FILTER_NONE, no_fields, 0, 0,
	  "once, before any other probe fires", 0, 0, 0, 0, NULL, 0 },
	{ &providers[1], NULL, PLACE_HOST, FILTER_NONE, no_fields, 0, 0,
	  "once, at exit (after exit(), Ctrl-C or the traced program ends)", 0, 0, 0, 0, NULL, 0 },
};

static const char *section(struct arena *a, const struct attach *at, const struct event *e,
			   const char *site)
{
	(void)a, (void)e, (void)site;
	return at->prov == &providers[0] ? HOST_SEC_BEGIN : HOST_SEC_END;
}

const struct provider_unit begin_end_unit = {
	.providers = providers,
	.nproviders = sizeof(providers) / sizeof(providers[0]),
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.resolve = spec_resolve_bare,
	.usage = "",
	.section = section,
};
