/* interval: periodically, on one CPU, run by gpux's own VM. */
#include "host_sec.h"
#include "provider.h"

extern const struct provider_unit interval_unit;

static const struct provider providers[] = {
	{ &interval_unit, "interval", "i", PLACE_HOST, RUNNER_GPUX, SYN_INTERVAL,
	  "periodically, on one CPU", false,
	  ATTACH_VM, false },
};

static const struct field no_fields[] = { FIELDS_END };

static const struct event events[] = {
	{ &providers[0], NULL, PLACE_HOST, FILTER_NONE, no_fields, 0, 0,
	  "every N seconds; unit s, ms, us, or hz for N times a second", 0, 0, 0, 0, NULL, 0 },
};

static const char *section(struct arena *a, const struct attach *at, const struct event *e,
			   const char *site)
{
	(void)e, (void)site;
	return arena_printf(a, HOST_SEC_INTERVAL "%llu", (unsigned long long)at->interval_ns);
}

const struct provider_unit interval_unit = {
	.providers = providers,
	.nproviders = sizeof(providers) / sizeof(providers[0]),
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.resolve = spec_resolve_period,
	.usage = ":s:N",
	.section = section,
};
