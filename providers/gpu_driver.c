/* gpu_mem:, gpu_sched: the GPU driver's policy hooks (in the order of
 * the driver ABIs, HOST_DRV_* in codegen/llvm_host.h), compiled to
 * struct_ops programs (object/sops_abi.h) and attached by
 * attach/kattach_driver.c. */
#include "provider.h"

#define DEC(d) DECISION_BIT(DECISION_##d)
#define ACT(a) ACTION_BIT(ACT_##a)

extern const struct provider_unit gpu_driver_unit;

static const struct provider providers[] = {
	{ &gpu_driver_unit, "gpu_mem", NULL, PLACE_DRIVER, RUNNER_DRIVER, SYN_EVENT,
	  "GPU memory policy hooks (UVM eviction, prefetch) in the driver", false,
	  ATTACH_STRUCT_OPS, false },
	{ &gpu_driver_unit, "gpu_sched", NULL, PLACE_DRIVER, RUNNER_DRIVER, SYN_EVENT,
	  "GPU scheduling policy hooks (TSG timeslice, interleave)", false,
	  ATTACH_STRUCT_OPS, false },
};

static const struct field mem_chunk_fields[] = {
	{ "chunk", TYPE_PTR("chunk"), UNIF_UNIFORM,
	  "the memory chunk (block)" },
	{ "list", TYPE_PTR("list"), UNIF_UNIFORM,
	  "the eviction list holding it" },
	{ "va", TYPE_U64, UNIF_UNIFORM,
	  "start of the 2 MB VA block it backs" },
	{ "owner", TYPE_U64, UNIF_UNIFORM,
	  "pid of the process whose memory it holds" },
	FIELDS_END,
};

static const struct field mem_evict_fields[] = {
	{ "used_list", TYPE_PTR("list"), UNIF_UNIFORM,
	  "chunks in use, head evicted first" },
	{ "unused_list", TYPE_PTR("list"), UNIF_UNIFORM,
	  "chunks allocated but unused" },
	{ "head", TYPE_PTR("chunk"), UNIF_UNIFORM,
	  "the chunk at the head of the used list (the next victim; read again after a move)" },
	FIELDS_END,
};

static const struct field mem_prefetch_fields[] = {
	{ "page_index", TYPE_U32, UNIF_UNIFORM,
	  "faulting page within its 2 MB block" },
	{ "max_first", TYPE_U32, UNIF_UNIFORM,
	  "first page of the max prefetch region" },
	{ "max_outer", TYPE_U32, UNIF_UNIFORM,
	  "end (exclusive) of the max prefetch region" },
	{ "va", TYPE_U64, UNIF_UNIFORM,
	  "start of the faulting 2 MB VA block" },
	{ "owner", TYPE_U64, UNIF_UNIFORM,
	  "pid of the process whose memory faults" },
	FIELDS_END,
};

static const struct field mem_prefetch_iter_fields[] = {
	{ "first", TYPE_U32, UNIF_UNIFORM,
	  "first page of this level's subregion" },
	{ "outer", TYPE_U32, UNIF_UNIFORM,
	  "end (exclusive) of this level's subregion" },
	{ "counter", TYPE_U32, UNIF_UNIFORM,
	  "pages of the subregion resident or faulting" },
	{ "max_first", TYPE_U32, UNIF_UNIFORM,
	  "first page of the max prefetch region" },
	{ "max_outer", TYPE_U32, UNIF_UNIFORM,
	  "end (exclusive) of the max prefetch region" },
	{ "va", TYPE_U64, UNIF_UNIFORM,
	  "start of the faulting 2 MB VA block" },
	{ "owner", TYPE_U64, UNIF_UNIFORM,
	  "pid of the process whose memory faults" },
	FIELDS_END,
};

static const struct field sched_init_fields[] = {
	{ "tsg_id", TYPE_U64, UNIF_UNIFORM, "time-slice group id" },
	{ "engine", TYPE_U32, UNIF_UNIFORM, "engine type (0 graphics/compute, 1 copy, ...)" },
	{ "timeslice", TYPE_U64, UNIF_UNIFORM, "default timeslice, us" },
	{ "interleave", TYPE_U32, UNIF_UNIFORM, "default interleave level (0 low, 1 medium, 2 high)" },
	{ "runlist", TYPE_U32, UNIF_UNIFORM, "runlist id" },
	FIELDS_END,
};

static const struct field sched_bind_fields[] = {
	{ "tsg_id", TYPE_U64, UNIF_UNIFORM, "time-slice group id" },
	{ "runlist", TYPE_U32, UNIF_UNIFORM, "runlist id" },
	{ "channels", TYPE_U32, UNIF_UNIFORM, "channels in the group" },
	{ "timeslice", TYPE_U64, UNIF_UNIFORM, "timeslice, us" },
	{ "interleave", TYPE_U32, UNIF_UNIFORM, "interleave level" },
	FIELDS_END,
};

static const struct field sched_tsg_fields[] = {
	{ "tsg_id", TYPE_U64, UNIF_UNIFORM, "time-slice group id" },
	FIELDS_END,
};

static const struct event events[] = {
	{ &providers[0], "activate", PLACE_DRIVER, FILTER_NONE, mem_chunk_fields,
	  DEC(DEFAULT), ACT(MOVE_HEAD) | ACT(MOVE_TAIL),
	  "chunk becomes evictable (uvm_pmm_chunk_activate / gpu_block_activate)", 0, 0, 0, 0, NULL, 0 },
	{ &providers[0], "access", PLACE_DRIVER, FILTER_NONE, mem_chunk_fields,
	  DEC(DEFAULT) | DEC(BYPASS) | DEC(ENTER_LOOP),
	  ACT(MOVE_HEAD) | ACT(MOVE_TAIL),
	  "chunk used (uvm_pmm_chunk_used / gpu_block_access)", 0, 0, 0, 0, NULL, 0 },
	{ &providers[0], "evict_prepare", PLACE_DRIVER, FILTER_NONE,
	  mem_evict_fields, DEC(DEFAULT), ACT(MOVE_HEAD) | ACT(MOVE_TAIL),
	  "before picking a victim (uvm_pmm_eviction_prepare / gpu_evict_prepare)", 0, 0, 0, 0, NULL, 0 },
	{ &providers[0], "prefetch", PLACE_DRIVER, FILTER_NONE,
	  mem_prefetch_fields, DEC(DEFAULT) | DEC(BYPASS) | DEC(ENTER_LOOP),
	  ACT(SET_PREFETCH_REGION),
	  "fault prefetch (uvm_prefetch_before_compute / gpu_page_prefetch)", 0, 0, 0, 0, NULL, 0 },
	{ &providers[0], "prefetch_iter", PLACE_DRIVER, FILTER_NONE,
	  mem_prefetch_iter_fields, DEC(DEFAULT) | DEC(BYPASS),
	  ACT(SET_PREFETCH_REGION),
	  "one level of the prefetch tree walk after ENTER_LOOP; BYPASS keeps the region set "
	  "(uvm_prefetch_on_tree_iter / gpu_page_prefetch_iter)", 0, 0, 0, 0, NULL, 0 },
	{ &providers[1], "task_init", PLACE_DRIVER, FILTER_NONE,
	  sched_init_fields, DEC(DEFAULT),
	  ACT(SET_TIMESLICE) | ACT(SET_INTERLEAVE),
	  "new time-slice group (nv_gpu_sched_ops.on_task_init)", 0, 0, 0, 0, NULL, 0 },
	{ &providers[1], "bind", PLACE_DRIVER, FILTER_NONE, sched_bind_fields,
	  DEC(DEFAULT), ACT(SET_INTERLEAVE) | ACT(REJECT_BIND),
	  "group bound to a runlist (nv_gpu_sched_ops.on_bind)", 0, 0, 0, 0, NULL, 0 },
	{ &providers[1], "task_destroy", PLACE_DRIVER, FILTER_NONE,
	  sched_tsg_fields, DEC(DEFAULT), 0,
	  "group destroyed (nv_gpu_sched_ops.on_task_destroy)", 0, 0, 0, 0, NULL, 0 },
};

static const char *section(struct arena *a, const struct attach *at, const struct event *e,
			   const char *site)
{
	(void)at, (void)e; /* site: the hook's member of the ops */
	return arena_printf(a, "struct_ops/%s", site);
}

const struct provider_unit gpu_driver_unit = {
	.providers = providers,
	.nproviders = sizeof(providers) / sizeof(providers[0]),
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.resolve = spec_resolve_events,
	.usage = NULL,
	.section = section,
};
