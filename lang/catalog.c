/* The probe catalog: the units' providers and events (providers/), and
 * the tables of builtins, actions, hints and decisions. The lookups are
 * plain linear scans, as the tables are small and read once per name in
 * a script. */
#include "catalog.h"

#include <pthread.h>
#include <string.h>

#include "cuda_actions.h"
#include "provider.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define DEV PLACE_DEVICE
#define DRV PLACE_DRIVER
#define HOST PLACE_HOST

/* name, type, places, unif, doc; flags follow by name */
#define B(n, t, pl, u, d) .name = n, .type = t, .places = pl, .unif = u, .doc = d
static const struct builtin builtins[] = {
	{ B("kernel", TYPE_STR, DEV, UNIF_UNIFORM, "CUDA kernel name"), .lifelong = true },
	{ B("gpu", TYPE_U32, DEV | HOST, UNIF_UNIFORM,
	    "device ordinal of the event's CUDA context (gdev: and cuda: probes)"),
	  .lifelong = true, .target_only = true },
	{ B("sm", TYPE_U32, DEV, UNIF_UNIFORM, "streaming multiprocessor id") },
	{ B("warp", TYPE_U32, DEV, UNIF_UNIFORM, "warp index within the block"), .lifelong = true },
	{ B("lane", TYPE_U32, DEV, UNIF_VARYING, "lane index within the warp"), .lifelong = true },
	{ B("threadIdx", TYPE_DIM3, DEV, UNIF_VARYING,
	  "thread index in the block"), .lifelong = true },
	{ B("blockIdx", TYPE_DIM3, DEV, UNIF_UNIFORM, "block index in the grid"), .lifelong = true },
	{ B("blockDim", TYPE_DIM3, DEV, UNIF_UNIFORM, "block dimensions"), .lifelong = true },
	{ B("gridDim", TYPE_DIM3, DEV, UNIF_UNIFORM, "grid dimensions"), .lifelong = true },
	{ B("gtid", TYPE_U64, DEV, UNIF_VARYING, "global linear thread id"), .lifelong = true },
	{ B("cycles", TYPE_U64, DEV, UNIF_UNIFORM,
	  "SM clock (clock64), read by the warp leader") },
	{ B("activemask", TYPE_U32, DEV, UNIF_UNIFORM,
	  "lanes of the warp running the probe (bit per lane): divergence") },
	{ B("activelanes", TYPE_U32, DEV, UNIF_UNIFORM,
	  "how many lanes of the warp run the probe (popc of activemask)") },
	{ B("nsecs", TYPE_U64, PLACE_ANY, UNIF_UNIFORM,
	  "timestamp, ns (on the device: globaltimer)") },
	{ B("pid", TYPE_U32, DEV | DRV | HOST, UNIF_UNIFORM,
	  "process id (on the device: the traced process)"), .lifelong = true },
	{ B("tid", TYPE_U32, DEV | DRV | HOST, UNIF_UNIFORM,
	  "thread id (on the device: the traced process)"), .lifelong = true },
	{ B("cpid", TYPE_U32, HOST, UNIF_UNIFORM,
	  "process id of the command started with -c or --") },
	{ B("comm", TYPE_STR, DEV | DRV | HOST, UNIF_UNIFORM, "process name"), .lifelong = true },
	{ B("probe", TYPE_STR, PLACE_ANY, UNIF_UNIFORM,
	  "name of the probe fired"), .lifelong = true },
	{ B("cpu", TYPE_U32, DRV | HOST, UNIF_UNIFORM, "CPU id") },
	{ B("uid", TYPE_U32, DRV | HOST, UNIF_UNIFORM, "user id") },
	{ B("gid", TYPE_U32, DRV | HOST, UNIF_UNIFORM, "group id") },
	{ B("username", { .kind = TY_USERNAME }, HOST, UNIF_UNIFORM,
	  "the user id, printed as the user's name") },
	{ B("rand", TYPE_U32, DRV | HOST, UNIF_UNIFORM, "a pseudo-random number") },
	{ B("numaid", TYPE_U32, DRV | HOST, UNIF_UNIFORM, "NUMA node of the CPU") },
	{ B("cgroup", TYPE_U64, HOST, UNIF_UNIFORM, "cgroup v2 id of the task") },
	{ B("elapsed", TYPE_U64, HOST, UNIF_UNIFORM, "ns since gpux started") },
	{ B("ustack", TYPE_STACK(true, STACK_BPFTRACE, STACK_DEFAULT_LIMIT), HOST, UNIF_UNIFORM,
	  "the user stack (ustack(N), ustack(perf), ustack(perf, N))"), .kernel_only = true },
	{ B("kstack", TYPE_STACK(false, STACK_BPFTRACE, STACK_DEFAULT_LIMIT), HOST, UNIF_UNIFORM,
	  "the kernel stack (kstack(N), kstack(perf), kstack(perf, N))"), .kernel_only = true },
	{ B("curtask", TYPE_PTR("struct task_struct"), HOST, UNIF_UNIFORM,
	  "the current task_struct's address"), .kernel_only = true },
	{ B("ctx", TYPE_PTR("struct pt_regs"), HOST, UNIF_UNIFORM,
	  "the registers where the probe fired (struct pt_regs *)"), .kernel_only = true,
	  .regs_only = true },
	{ B("jiffies", TYPE_U64, HOST, UNIF_UNIFORM, "the kernel's clock ticks since boot"),
	  .kernel_only = true },
};

/* Indexed by enum action_id. hint_arg is -1 unless an argument names a
 * hint. */
#define NO_HINT .hint_arg = -1
static const struct action actions[] = {
	[ACT_MOVE_HEAD] = {
		ACT_MOVE_HEAD, "move_head", 1, { TYPE_PTR("chunk") }, NO_HINT,
		"evict next: bpf_uvm_pmm_chunk_move_head / "
		"bpf_gpu_block_move_head" },
	[ACT_MOVE_TAIL] = {
		ACT_MOVE_TAIL, "move_tail", 1, { TYPE_PTR("chunk") }, NO_HINT,
		"evict last: bpf_uvm_pmm_chunk_move_tail / "
		"bpf_gpu_block_move_tail" },
	[ACT_SET_PREFETCH_REGION] = {
		ACT_SET_PREFETCH_REGION, "set_prefetch_region", 2,
		{ TYPE_U32, TYPE_U32 }, NO_HINT,
		"prefetch pages [first, outer): bpf_uvm_set_va_block_region / "
		"bpf_gpu_set_prefetch_region" },
	[ACT_SET_TIMESLICE] = { ACT_SET_TIMESLICE, "set_timeslice", 1,
				{ TYPE_U64 }, NO_HINT,
				"timeslice in us: bpf_nv_gpu_set_timeslice" },
	[ACT_SET_INTERLEAVE] = { ACT_SET_INTERLEAVE, "set_interleave", 1,
				 { TYPE_U32 }, NO_HINT,
				 "interleave level: bpf_nv_gpu_set_interleave" },
	[ACT_REJECT_BIND] = { ACT_REJECT_BIND, "reject_bind", 0, { TYPE_NONE }, NO_HINT,
			      "refuse the bind: bpf_nv_gpu_reject_bind" },
	[ACT_PREFETCH] = {
		ACT_PREFETCH, "prefetch", 2, { TYPE_U64, TYPE_U64 }, NO_HINT,
		"prefetch(ptr, bytes): migrate managed memory to the launching GPU, "
		"ordered on the event's stream (cuMemPrefetchAsync)" },
	[ACT_EVICT] = {
		ACT_EVICT, "evict", 2, { TYPE_U64, TYPE_U64 }, NO_HINT,
		"evict(ptr, bytes): migrate managed memory to host memory, ordered "
		"on the event's stream (cuMemPrefetchAsync to the CPU)" },
	[ACT_ADVISE] = {
		ACT_ADVISE, "advise", 3, { TYPE_U64, TYPE_U64, TYPE_U64 }, 2,
		"advise(ptr, bytes, HINT): cuMemAdvise on managed memory; HINT is "
		"one of the hints `gpux -lv` lists" },
	[ACT_DEV_PREFETCH] = {
		ACT_DEV_PREFETCH, "prefetch", 1, { TYPE_U64 }, NO_HINT,
		"prefetch(addr): prefetch.global.L2 of the line at addr, once per "
		"warp (the first active lane's address)" },
};

/* advise()'s hints, by enum gpux_advise. */
static const struct hint_info hints[] = {
	{ "READ_MOSTLY", GPUX_ADVISE_READ_MOSTLY,
	  "read-mostly: GPUs read copies (CU_MEM_ADVISE_SET_READ_MOSTLY)" },
	{ "UNSET_READ_MOSTLY", GPUX_ADVISE_UNSET_READ_MOSTLY, "undo READ_MOSTLY" },
	{ "PREFERRED_GPU", GPUX_ADVISE_PREFERRED_GPU,
	  "keep it on the event's GPU (SET_PREFERRED_LOCATION)" },
	{ "PREFERRED_CPU", GPUX_ADVISE_PREFERRED_CPU,
	  "keep it in host memory (SET_PREFERRED_LOCATION)" },
	{ "UNSET_PREFERRED", GPUX_ADVISE_UNSET_PREFERRED,
	  "undo PREFERRED_GPU or PREFERRED_CPU" },
	{ "ACCESSED_BY_GPU", GPUX_ADVISE_ACCESSED_BY_GPU,
	  "keep it mapped for the event's GPU (SET_ACCESSED_BY)" },
	{ "ACCESSED_BY_CPU", GPUX_ADVISE_ACCESSED_BY_CPU,
	  "keep it mapped for the CPU (SET_ACCESSED_BY)" },
	{ "UNSET_ACCESSED_BY_GPU", GPUX_ADVISE_UNSET_ACCESSED_BY_GPU,
	  "undo ACCESSED_BY_GPU" },
	{ "UNSET_ACCESSED_BY_CPU", GPUX_ADVISE_UNSET_ACCESSED_BY_CPU,
	  "undo ACCESSED_BY_CPU" },
};

/* Indexed by enum decision. */
static const struct decision_info decisions[] = {
	[DECISION_DEFAULT] = { DECISION_DEFAULT, "DEFAULT" },
	[DECISION_BYPASS] = { DECISION_BYPASS, "BYPASS" },
	[DECISION_ENTER_LOOP] = { DECISION_ENTER_LOOP, "ENTER_LOOP" },
};

static const struct {
	enum place place;
	const char *name;
} place_names[] = {
	{ PLACE_DEVICE, "device" },
	{ PLACE_DRIVER, "driver" },
	{ PLACE_HOST, "host" },
};

_Static_assert(ARRAY_LEN(actions) == ACT_COUNT, "one action per action_id");
_Static_assert(ARRAY_LEN(hints) == GPUX_ADVISE_COUNT, "one entry per hint");
_Static_assert(ARRAY_LEN(decisions) == DECISION_COUNT,
	       "one entry per decision");

/* Every unit's providers and events in one list each, made once. */
#define MAX_PROVIDERS 64
#define MAX_EVENTS 256
static const struct provider *all_providers[MAX_PROVIDERS];
static const struct event *all_events[MAX_EVENTS];
static size_t nall_providers, nall_events;
static pthread_once_t listed = PTHREAD_ONCE_INIT;

static void list_units(void)
{
	size_t n;
	const struct provider_unit *const *u = provider_units(&n);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < u[i]->nproviders && nall_providers < MAX_PROVIDERS; k++)
			all_providers[nall_providers++] = &u[i]->providers[k];
		for (size_t k = 0; k < u[i]->nevents && nall_events < MAX_EVENTS; k++)
			all_events[nall_events++] = &u[i]->events[k];
	}
}

const struct provider *const *catalog_providers(size_t *n)
{
	pthread_once(&listed, list_units);
	*n = nall_providers;
	return all_providers;
}

const struct event *const *catalog_events(size_t *n)
{
	pthread_once(&listed, list_units);
	*n = nall_events;
	return all_events;
}

const struct builtin *catalog_builtins(size_t *n)
{
	*n = ARRAY_LEN(builtins);
	return builtins;
}

const struct action *catalog_actions(size_t *n)
{
	*n = ARRAY_LEN(actions);
	return actions;
}

const struct decision_info *catalog_decisions(size_t *n)
{
	*n = ARRAY_LEN(decisions);
	return decisions;
}

const struct hint_info *catalog_hints(size_t *n)
{
	*n = ARRAY_LEN(hints);
	return hints;
}

const struct provider *catalog_provider(const char *name)
{
	size_t n;
	const struct provider *const *ps = catalog_providers(&n);
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(ps[i]->name, name) || (ps[i]->alias && !strcmp(ps[i]->alias, name)))
			return ps[i];
	return NULL;
}

const struct event *catalog_event(const struct provider *p, const char *name)
{
	if (!p)
		return NULL;
	bool named = p->syntax == SYN_EVENT;
	if (named && !name)
		return NULL;
	for (size_t i = 0; i < p->unit->nevents; i++) {
		const struct event *e = &p->unit->events[i];
		if (e->prov != p)
			continue;
		/* Non-event providers have one nameless event: the name
		 * written (target, category...) is not ours to check. */
		if (!named || (e->name && !strcmp(e->name, name)))
			return e;
	}
	return NULL;
}

const struct field *event_field(const struct event *e, const char *name)
{
	if (!e || !name)
		return NULL;
	for (const struct field *f = e->fields; f && f->name; f++)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}

const struct builtin *catalog_builtin(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < ARRAY_LEN(builtins); i++)
		if (!strcmp(builtins[i].name, name))
			return &builtins[i];
	return NULL;
}

const struct action *catalog_action(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < ARRAY_LEN(actions); i++)
		if (!strcmp(actions[i].name, name))
			return &actions[i];
	return NULL;
}

const struct action *catalog_action_in(const char *name, const struct event *e)
{
	const struct action *first = NULL;
	for (size_t i = 0; name && i < ARRAY_LEN(actions); i++) {
		if (strcmp(actions[i].name, name))
			continue;
		if (e && (e->actions & ACTION_BIT(actions[i].id)))
			return &actions[i];
		if (!first)
			first = &actions[i];
	}
	return first;
}

const struct hint_info *catalog_hint(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_LEN(hints); i++)
		if (!strcmp(hints[i].name, name))
			return &hints[i];
	return NULL;
}

bool catalog_decision(const char *name, enum decision *out)
{
	if (!name)
		return false;
	for (size_t i = 0; i < ARRAY_LEN(decisions); i++)
		if (!strcmp(decisions[i].name, name)) {
			if (out)
				*out = decisions[i].value;
			return true;
		}
	return false;
}

const char *decision_name(enum decision d)
{
	if ((unsigned)d >= ARRAY_LEN(decisions))
		return "?";
	return decisions[d].name;
}

const char *place_name(enum place p)
{
	for (size_t i = 0; i < ARRAY_LEN(place_names); i++)
		if (place_names[i].place == p)
			return place_names[i].name;
	return "?";
}
