/* software:, hardware: every N of a perf event, on every CPU; attached
 * by providers/perf_events_attach.c. */
#include <linux/perf_event.h>

#include "provider.h"

extern const struct provider_unit perf_events_unit;

static const struct provider providers[] = {
	{ &perf_events_unit, "software", "s", PLACE_HOST, RUNNER_KERNEL, SYN_EVENT,
	  "every N of a kernel software event, on every CPU: software:EVENT[:N]", false,
	  ATTACH_PERF_EVENT, false },
	{ &perf_events_unit, "hardware", "h", PLACE_HOST, RUNNER_KERNEL, SYN_EVENT,
	  "every N of a CPU's hardware counter, on every CPU: hardware:EVENT[:N]", false,
	  ATTACH_PERF_EVENT, false },
};

static const struct field no_fields[] = { FIELDS_END };

/* sampled every N of a perf event (FILTER_COUNT: the probe's N, else
 * the default), on every CPU; an alias is a row of its own */
#define PERF_ROW(prov, ev, type, cfg, n, doc)                                         \
	{ prov, ev, PLACE_HOST, FILTER_COUNT, no_fields, 0, 0, doc, 0, type, cfg, n, NULL, 0 }
#define PERF_SW(ev, cfg, n, doc) \
	PERF_ROW(&providers[0], ev, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##cfg, n, doc)
#define PERF_SW_ALIAS(ev, cfg, n, of) PERF_SW(ev, cfg, n, "the same as " of)
#define PERF_HW(ev, cfg, n, doc) \
	PERF_ROW(&providers[1], ev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_##cfg, n, doc)
#define PERF_HW_ALIAS(ev, cfg, n, of) PERF_HW(ev, cfg, n, "the same as " of)

static const struct event events[] = {
	PERF_SW("cpu-clock", CPU_CLOCK, 1000000,
		"every N nanoseconds of a CPU's clock (default 1000000)"),
	PERF_SW_ALIAS("cpu", CPU_CLOCK, 1000000, "cpu-clock"),
	PERF_SW("task-clock", TASK_CLOCK, 1000000,
		"every N nanoseconds of a task's clock (default 1000000)"),
	PERF_SW("page-faults", PAGE_FAULTS, 100,
		"every N page faults (default 100)"),
	PERF_SW_ALIAS("faults", PAGE_FAULTS, 100, "page-faults"),
	PERF_SW("context-switches", CONTEXT_SWITCHES, 1000,
		"every N context switches (default 1000)"),
	PERF_SW_ALIAS("cs", CONTEXT_SWITCHES, 1000, "context-switches"),
	PERF_SW("cpu-migrations", CPU_MIGRATIONS, 1,
		"every N migrations to another CPU (default 1)"),
	PERF_SW("minor-faults", PAGE_FAULTS_MIN, 100,
		"every N minor page faults (default 100)"),
	PERF_SW("major-faults", PAGE_FAULTS_MAJ, 1,
		"every N major page faults (default 1)"),
	PERF_SW("alignment-faults", ALIGNMENT_FAULTS, 1,
		"every N alignment faults (default 1)"),
	PERF_SW("emulation-faults", EMULATION_FAULTS, 1,
		"every N emulated instructions (default 1)"),
	PERF_SW("dummy", DUMMY, 1,
		"never (a placeholder event)"),
	PERF_SW("bpf-output", BPF_OUTPUT, 1,
		"every N bpf_perf_event_output calls (default 1)"),
	PERF_HW("cpu-cycles", CPU_CYCLES, 1000000,
		"every N CPU cycles (default 1000000)"),
	PERF_HW_ALIAS("cycles", CPU_CYCLES, 1000000, "cpu-cycles"),
	PERF_HW("instructions", INSTRUCTIONS, 1000000,
		"every N instructions retired (default 1000000)"),
	PERF_HW("cache-references", CACHE_REFERENCES, 1000000,
		"every N last-level cache accesses (default 1000000)"),
	PERF_HW("cache-misses", CACHE_MISSES, 1000000,
		"every N last-level cache misses (default 1000000)"),
	PERF_HW("branch-instructions", BRANCH_INSTRUCTIONS, 100000,
		"every N branches retired (default 100000)"),
	PERF_HW_ALIAS("branches", BRANCH_INSTRUCTIONS, 100000, "branch-instructions"),
	PERF_HW("branch-misses", BRANCH_MISSES, 100000,
		"every N mispredicted branches (default 100000)"),
	PERF_HW("bus-cycles", BUS_CYCLES, 100000,
		"every N bus cycles (default 100000)"),
	PERF_HW("frontend-stalls", STALLED_CYCLES_FRONTEND, 1000000,
		"every N cycles stalled in the front end (default 1000000)"),
	PERF_HW("backend-stalls", STALLED_CYCLES_BACKEND, 1000000,
		"every N cycles stalled in the back end (default 1000000)"),
	PERF_HW("ref-cycles", REF_CPU_CYCLES, 1000000,
		"every N reference cycles, unscaled by frequency (default 1000000)"),
};

const struct provider_unit perf_events_unit = {
	.providers = providers,
	.nproviders = sizeof(providers) / sizeof(providers[0]),
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.resolve = spec_resolve_events,
	.usage = NULL,
	.section = spec_section_perf_event,
};
