/* The probe catalog: the providers and events of every unit
 * (lang/provider.h, providers/), and the tables of builtins, policy
 * decisions and actions. The parser's checks, `gpux -l`, codegen and the
 * SIMT verifier all read it; nothing else should hard-code probe names. */
#ifndef GPUX_CATALOG_H
#define GPUX_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* Where probe code runs. Bit values so builtins can list several. */
enum place {
	PLACE_DEVICE = 1 << 0, /* inside CUDA kernels, warp-collective */
	PLACE_DRIVER = 1 << 1, /* struct_ops hooks in the GPU driver */
	PLACE_HOST = 1 << 2,   /* controller, kernel BPF, CUDA API events */
};
#define PLACE_ANY (PLACE_DEVICE | PLACE_DRIVER | PLACE_HOST)

/* Who runs a provider's probe code, and so which part of the controller
 * loads it and hears from it (cli/backend.h). */
enum runner {
	RUNNER_GPUX,   /* gpux's own userspace BPF VM: BEGIN, END, interval */
	RUNNER_KERNEL, /* the kernel, through libbpf: uprobes, usdt, tracepoints,
			* watchpoints */
	RUNNER_TARGET, /* the traced program, through the preloaded runtime */
	RUNNER_DRIVER, /* the GPU driver's struct_ops */
};

/* How a provider's probes are attached, and so what its compiled
 * programs need (object/host_obj.h's host_prog.attach): the loader and
 * attacher switch on it, never on names or section prefixes. */
enum attach_kind {
	ATTACH_DEVICE,     /* gdev: spliced into kernels by the runtime */
	ATTACH_VM,         /* run by a userspace VM (gpux's, or the target's) */
	ATTACH_UPROBE,     /* a function's entry, offset or address */
	ATTACH_URETPROBE,  /* a function's return */
	ATTACH_USDT,       /* a USDT site */
	ATTACH_WATCHPOINT, /* a hardware breakpoint (perf_event) */
	ATTACH_TRACEPOINT,
	ATTACH_STRUCT_OPS, /* a driver hook */
	ATTACH_KPROBE,     /* a kernel function's entry or return (and gpux's own, capturing
			    * what driver hooks read) */
	ATTACH_PERF_EVENT, /* a sampling perf event on every CPU (the event's perf_*) */
	ATTACH_ITER,       /* a kernel iterator, run once over its objects (the event's ctx_*) */
};

/* For device values: the same in every lane of a warp, or not. */
enum unif { UNIF_UNIFORM = 0, UNIF_VARYING = 1 };

/* How the text after "provider:" is read. */
enum probe_syntax {
	SYN_BARE,       /* BEGIN, END: no ':' at all */
	SYN_EVENT,      /* provider:event[:filter], events from this catalog */
	SYN_UPROBE,     /* provider:target:symbol (target a path or lib name) */
	SYN_USDT,       /* provider:target:[probe_provider:]probe, from ELF notes */
	SYN_TRACEPOINT, /* tracepoint:category:name, fields from tracefs */
	SYN_INTERVAL,   /* interval:unit:count, unit s|ms|us|hz (profile: too) */
	SYN_WATCHPOINT, /* provider:ADDRESS|FUNC+argN:LENGTH:MODE (breakpoints) */
	SYN_UNIT,       /* a shape its unit alone reads (lang/provider.h) */
};

/* What an event's optional third part filters on (SYN_EVENT only). */
enum filter_kind {
	FILTER_NONE,   /* no filter allowed */
	FILTER_KERNEL, /* glob on the CUDA kernel name */
	FILTER_FUNC,   /* glob on the device function name */
	FILTER_COUNT,  /* not a filter: sample every N events (default perf_period) */
};

enum decision {
	DECISION_DEFAULT = 0,
	DECISION_BYPASS = 1,
	DECISION_ENTER_LOOP = 2,
	DECISION_COUNT
};
#define DECISION_BIT(d) (1u << (d))

enum action_id {
	ACT_MOVE_HEAD,
	ACT_MOVE_TAIL,
	ACT_SET_PREFETCH_REGION,
	ACT_SET_TIMESLICE,
	ACT_SET_INTERLEAVE,
	ACT_REJECT_BIND,
	ACT_PREFETCH,     /* cuda: memory to the launching GPU */
	ACT_EVICT,        /* cuda: memory to the host */
	ACT_ADVISE,       /* cuda: cuMemAdvise */
	ACT_DEV_PREFETCH, /* gdev: an L2 prefetch */
	ACT_COUNT
};
#define ACTION_BIT(a) (1u << (a))

struct field {
	const char *name;
	struct type type;
	enum unif unif; /* meaningful for device events */
	const char *doc;
};

struct provider_unit; /* lang/provider.h */

struct provider {
	const struct provider_unit *unit; /* the unit it belongs to */
	const char *name;
	const char *alias; /* bpftrace-style short name ("u", "t") or NULL */
	enum place place;
	enum runner runner;
	enum probe_syntax syntax;
	const char *doc;
	/* Pointers its probes see are the traced process's (read with
	 * probe_read_user), else the kernel's. */
	bool user_memory;
	enum attach_kind attach;
	/* Its context is the CPU's registers where it fired (pt_regs):
	 * its events' argN, sargN and retval are read from them. */
	bool regs;
};

/* cuda: probes: run by the traced program's runtime on the host. */
static inline bool provider_in_target_vm(const struct provider *p)
{
	return p->runner == RUNNER_TARGET && p->attach == ATTACH_VM;
}

struct event {
	const struct provider *prov;
	const char *name; /* NULL for SYN_BARE/UPROBE/TRACEPOINT/INTERVAL */
	enum place place;
	enum filter_kind filter;
	const struct field *fields; /* terminated by a { NULL } entry */
	unsigned decisions;         /* DECISION_BITs a `return` may give */
	unsigned actions;           /* ACTION_BITs callable here */
	const char *doc;
	unsigned paths;             /* device events: DEV_PATH_* bits */
	/* ATTACH_PERF_EVENT: the perf event sampled (perf_event_attr's
	 * type and config), every perf_period of them unless the probe
	 * says (FILTER_COUNT) */
	unsigned perf_type;
	uint64_t perf_config;
	uint64_t perf_period;
	/* The kernel record ctx points to where it is not the registers (an
	 * iterator's struct bpf_iter__NAME), else NULL; ATTACH_ITER: the
	 * offset in it of the object visited, NULL in the iterator's last
	 * call, which gpux skips */
	const char *ctx_record;
	unsigned ctx_object;
};

/* How a device event's probes reach a kernel (struct event.paths): its
 * PTX rewritten (the program's own code, Triton's), or its SASS patched
 * through NVIDIA's Compute Sanitizer (kernels without PTX). */
#define DEV_PATH_PTX 1u
#define DEV_PATH_SASS 2u

struct builtin {
	const char *name;
	struct type type;
	unsigned places; /* PLACE_* bits where it is available */
	enum unif unif;  /* on the device */
	const char *doc;
	/* read with a kernel helper the userspace VMs do not have: only in
	 * probes the kernel runs (RUNNER_KERNEL) */
	bool kernel_only;
	/* on the device: the same at every point of a thread's life (not a
	 * clock, not where or with whom the thread runs now) */
	bool lifelong;
	/* on the host: only in probes the traced program runs (cuda:),
	 * where the event has a CUDA context */
	bool target_only;
	/* the registers where the probe fired: only where the provider's
	 * context is them (struct provider's regs) */
	bool regs_only;
};

struct action {
	enum action_id id;
	const char *name; /* two actions may share one, in different places */
	int nargs;
	struct type args[3];
	int hint_arg; /* the argument that names a hint (advise), or -1 */
	const char *doc;
};

/* What advise() may say, by name; the values are abi/cuda_actions.h's
 * (GPUX_ADVISE_*), which the runtime turns into cuMemAdvise calls. */
struct hint_info {
	const char *name;
	unsigned value;
	const char *doc;
};

struct decision_info {
	enum decision value;
	const char *name;
};

/* Whole tables, for listing and suggestions: every provider and event
 * of every unit (lang/provider.h), in the units' order. */
const struct provider *const *catalog_providers(size_t *n);
const struct event *const *catalog_events(size_t *n);
const struct builtin *catalog_builtins(size_t *n);
const struct action *catalog_actions(size_t *n);
const struct decision_info *catalog_decisions(size_t *n);
const struct hint_info *catalog_hints(size_t *n);

/* Lookups by exact name (provider aliases accepted); NULL when absent. */
const struct provider *catalog_provider(const char *name);
/* The one event of a non-SYN_EVENT provider, or a named SYN_EVENT event. */
const struct event *catalog_event(const struct provider *p, const char *name);
const struct field *event_field(const struct event *e, const char *name);
const struct builtin *catalog_builtin(const char *name);
const struct action *catalog_action(const char *name);
/* The action of that name callable in e (names are shared across
 * places: prefetch() in cuda: and in gdev:), else the first of that
 * name; NULL when no action has it. */
const struct action *catalog_action_in(const char *name, const struct event *e);
const struct hint_info *catalog_hint(const char *name);
/* DECISION_DEFAULT.. by name ("BYPASS"); false when not a decision. */
bool catalog_decision(const char *name, enum decision *out);
const char *decision_name(enum decision d);

/* Whether the place is a SIMT (warp-collective) execution context. */
static inline bool place_is_device(enum place p)
{
	return p == PLACE_DEVICE;
}
const char *place_name(enum place p); /* "device", "driver", "host" */

#endif
