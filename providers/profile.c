/* profile: a sampling profiler, the CPU clock on every CPU; attached by
 * providers/perf_events_attach.c. */
#include <linux/perf_event.h>

#include "provider.h"

extern const struct provider_unit profile_unit;

static const struct provider providers[] = {
	{ &profile_unit, "profile", "p", PLACE_HOST, RUNNER_KERNEL, SYN_INTERVAL,
	  "periodically on every CPU, in whatever runs there (a sampling profiler)", false,
	  ATTACH_PERF_EVENT, false },
};

static const struct field no_fields[] = { FIELDS_END };

static const struct event events[] = {
	/* the CPU clock, its period from the probe */
	{ &providers[0], NULL, PLACE_HOST, FILTER_NONE, no_fields, 0, 0,
	  "every N s, ms or us of each CPU's time, or N times a second (hz)", 0,
	  PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, NULL, 0 },
};

const struct provider_unit profile_unit = {
	.providers = providers,
	.nproviders = sizeof(providers) / sizeof(providers[0]),
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.resolve = spec_resolve_period,
	.usage = ":s:N",
	.section = spec_section_perf_event,
};
