/* The driver ABIs gpux knows without a driver (docs/ARCHITECTURE.md,
 * "Driver policies"): gpu_ext's struct uvm_gpu_ext, its rename struct
 * gpu_mem_ops, and struct nv_gpu_sched_ops. Where a running driver's
 * BTF is found, codegen/host_bind.c derives the binding from it
 * instead (member order, offsets, kfuncs); these tables are what the
 * policy simulator runs and what --dry-run checks against.
 *
 * Offsets follow gpu_ext's headers where they fix them (regions are two
 * u16 page indices; the scheduling contexts' field order); the chain
 * from a chunk to its owner's pid is laid out compactly here, and only
 * its member names (path) matter when binding to a real driver. */
#include "sops_abi.h"

/* a field of size bytes read by nl loads at the offsets given from
 * argument a (designated: the members the binding adds stay zero) */
#define FIELD(n, a, p, sz, nl, ...)                                            \
	{ .name = n, .arg = a, .path = p, .nloads = nl, .off = { __VA_ARGS__ }, .size = sz }
/* ... by one load of size bytes at off */
#define AT(n, a, p, o, sz) FIELD(n, a, p, sz, 1, o)
#define ARG(n, a) FIELD(n, a, "", 8, 0, 0)
#define KFUNC(act, n, na, ...) { .action = act, .name = n, .args = { __VA_ARGS__ }, .nargs = na }

/* uvm_gpu_chunk_struct: address @0, bitfields @8, list @16, va_block @32;
 * uvm_va_block: managed_range @0, start @8; the owner chain then takes
 * the first member at every step. */
#define CHUNK_FIELDS(c, third)                                                 \
	ARG("chunk", c), ARG(third, c + 1),                                    \
	FIELD("va", c, "->va_block->start", 8, 2, 32, 8),                       \
	FIELD("owner", c,                                                      \
	      "->va_block->managed_range->va_range.va_space->va_space_mm.mm->owner->tgid", \
	      4, 6, 32, 0, 0, 0, 0, 0)
/* from the faulting VA block, as the capture reads them (uvm_va_block:
 * managed_range @0, start @8) */
#define BLOCK_FIELDS(b)                                                        \
	FIELD("va", b, "->start", 8, 1, 8),                                     \
	FIELD("owner", b,                                                      \
	      "->managed_range->va_range.va_space->va_space_mm.mm->owner->tgid", \
	      4, 5, 0, 0, 0, 0, 0)
#define CAPTURED(n) { .name = n, .arg = HOST_SOPS_CAPTURED, .path = "", .size = 8 }
/* the used list's first chunk: container_of(list->next, chunk, list) */
#define HEAD_FIELD(l)                                                          \
	{ .name = "head", .arg = l, .path = "->next", .nloads = 1, .off = { 0 }, .size = 8, \
	  .add = -16, .container = "uvm_gpu_chunk_struct.list" }

static const char *const uvm_members[] = {
	"uvm_bpf_test_trigger_kfunc",
	"uvm_prefetch_before_compute",
	"uvm_prefetch_on_tree_iter",
	"uvm_pmm_chunk_activate",
	"uvm_pmm_chunk_used",
	"uvm_pmm_eviction_prepare",
	NULL,
};

/* The hooks of the memory ABIs, by member name; third: the chunk
 * hooks' third argument ("list" the chunk is on, or "decision" context). */
#define MEM_HOOKS(prefetch, iter, activate, access, evict, third)              \
	/* (page_index, bitmap_tree, max_prefetch_region, result_region) */      \
	{ "gpu_mem:prefetch", prefetch,                                       \
	  { ARG("page_index", 0), AT("max_first", 2, "->first", 0, 2),          \
	    AT("max_outer", 2, "->outer", 2, 2), ARG("result_region", 3),       \
	    CAPTURED("va"), CAPTURED("owner") }, 6, 4 },                        \
	/* (bitmap_tree, max_region, current_region, counter, prefetch_region) */ \
	{ "gpu_mem:prefetch_iter", iter,                                      \
	  { AT("first", 2, "->first", 0, 2), AT("outer", 2, "->outer", 2, 2),   \
	    ARG("counter", 3), AT("max_first", 1, "->first", 0, 2),             \
	    AT("max_outer", 1, "->outer", 2, 2), ARG("result_region", 4),       \
	    CAPTURED("va"), CAPTURED("owner") }, 8, 5 }, \
	/* (pmm, chunk, list or decision) */                                    \
	{ "gpu_mem:activate", activate, { CHUNK_FIELDS(1, third) }, 4, 3 },    \
	{ "gpu_mem:access", access, { CHUNK_FIELDS(1, third) }, 4, 3 },        \
	/* (pmm, used_list, unused_list); a move here reorders the used list */ \
	{ "gpu_mem:evict_prepare", evict,                                     \
	  { ARG("used_list", 1), ARG("unused_list", 2), HEAD_FIELD(1),          \
	    ARG("list", 1) }, 4, 3 }

/* The prefetch hooks' block: uvm_perf_prefetch_get_hint_va_block(
 * va_block, va_block_context, new_residency, faulted_pages,
 * faulted_region, bitmap_tree) computes the hint that calls them. */
static const struct host_sops_capture fault_block = {
	"uvm_perf_prefetch_get_hint_va_block", { BLOCK_FIELDS(0) }, 2,
};

static const struct host_sops_hook uvm_hooks[] = {
	MEM_HOOKS("uvm_prefetch_before_compute", "uvm_prefetch_on_tree_iter",
		  "uvm_pmm_chunk_activate", "uvm_pmm_chunk_used", "uvm_pmm_eviction_prepare",
		  "list"),
};

static const struct host_sops_kfunc uvm_kfuncs[] = {
	KFUNC(ACT_MOVE_HEAD, "bpf_uvm_pmm_chunk_move_head", 2, "$0", "list"),
	KFUNC(ACT_MOVE_TAIL, "bpf_uvm_pmm_chunk_move_tail", 2, "$0", "list"),
	KFUNC(ACT_SET_PREFETCH_REGION, "bpf_uvm_set_va_block_region", 3,
	      "result_region", "$0", "$1"),
};

const struct host_sops_abi host_abi_uvm_gpu_ext = {
	"uvm_gpu_ext", "gpu_mem", uvm_members,
	uvm_hooks, sizeof(uvm_hooks) / sizeof(uvm_hooks[0]),
	uvm_kfuncs, sizeof(uvm_kfuncs) / sizeof(uvm_kfuncs[0]), &fault_block, NULL,
};

static const char *const mem_ops_members[] = {
	"gpu_test_trigger",
	"gpu_page_prefetch",
	"gpu_page_prefetch_iter",
	"gpu_block_activate",
	"gpu_block_access",
	"gpu_evict_prepare",
	NULL,
};

static const struct host_sops_hook mem_ops_hooks[] = {
	MEM_HOOKS("gpu_page_prefetch", "gpu_page_prefetch_iter", "gpu_block_activate",
		  "gpu_block_access", "gpu_evict_prepare", "list"),
};

/* bpf_gpu_list_move_first is kmod/'s, not gpu_ext's: a move of
 * evict_prepare's head, which the verifier refuses to the others (a
 * chunk computed from the list); bound only where BTF has it */
static const struct host_sops_kfunc mem_ops_kfuncs[] = {
	{ .action = ACT_MOVE_HEAD, .name = "bpf_gpu_list_move_first", .args = { "list", "=0" },
	  .nargs = 2, .self = "head" },
	{ .action = ACT_MOVE_TAIL, .name = "bpf_gpu_list_move_first", .args = { "list", "=1" },
	  .nargs = 2, .self = "head" },
	KFUNC(ACT_MOVE_HEAD, "bpf_gpu_block_move_head", 2, "$0", "list"),
	KFUNC(ACT_MOVE_TAIL, "bpf_gpu_block_move_tail", 2, "$0", "list"),
	KFUNC(ACT_SET_PREFETCH_REGION, "bpf_gpu_set_prefetch_region", 3,
	      "result_region", "$0", "$1"),
};

const struct host_sops_abi host_abi_gpu_mem_ops = {
	"gpu_mem_ops", "gpu_mem", mem_ops_members,
	mem_ops_hooks, sizeof(mem_ops_hooks) / sizeof(mem_ops_hooks[0]),
	mem_ops_kfuncs, sizeof(mem_ops_kfuncs) / sizeof(mem_ops_kfuncs[0]), &fault_block, NULL,
};

/* gpu_mem_ops with decision contexts: the chunk hooks get a
 * uvm_bpf_pmm_decision_ctx in place of the list, and a policy requests
 * that the hook's own chunk go to a list's head or tail
 * (bpf_gpu_request_reorder(ctx, destination, position): USED = 1,
 * HEAD = 1, TAIL = 2); the driver applies the request after the hook.
 * evict_prepare has no context, so no move there. */
static const struct host_sops_hook decision_hooks[] = {
	MEM_HOOKS("gpu_page_prefetch", "gpu_page_prefetch_iter", "gpu_block_activate",
		  "gpu_block_access", "gpu_evict_prepare", "decision"),
};

static const struct host_sops_kfunc decision_kfuncs[] = {
	{ .action = ACT_MOVE_HEAD, .name = "bpf_gpu_request_reorder",
	  .args = { "decision", "=1", "=1" }, .nargs = 3, .self = "chunk" },
	{ .action = ACT_MOVE_TAIL, .name = "bpf_gpu_request_reorder",
	  .args = { "decision", "=1", "=2" }, .nargs = 3, .self = "chunk" },
	KFUNC(ACT_SET_PREFETCH_REGION, "bpf_gpu_set_prefetch_region", 3,
	      "result_region", "$0", "$1"),
};

const struct host_sops_abi host_abi_gpu_mem_decision = {
	"gpu_mem_ops", "gpu_mem", mem_ops_members,
	decision_hooks, sizeof(decision_hooks) / sizeof(decision_hooks[0]),
	decision_kfuncs, sizeof(decision_kfuncs) / sizeof(decision_kfuncs[0]), &fault_block,
	"uvm_bpf_pmm_decision_ctx",
};

static const char *const sched_members[] = {
	"on_task_init",
	"on_bind",
	"on_task_destroy",
	NULL,
};

/* nv_gpu_task_init_ctx { u64 tsg_id; u32 engine_type; u64
 * default_timeslice; u32 default_interleave; u32 runlist_id; ... },
 * nv_gpu_bind_ctx { u64 tsg_id; u32 runlist_id; u32 channel_count; u64
 * timeslice_us; u32 interleave_level; u32 allow; } */
static const struct host_sops_hook sched_hooks[] = {
	{ "gpu_sched:task_init", "on_task_init",
	  { ARG("ctx", 0), AT("tsg_id", 0, "->tsg_id", 0, 8),
	    AT("engine", 0, "->engine_type", 8, 4),
	    AT("timeslice", 0, "->default_timeslice", 16, 8),
	    AT("interleave", 0, "->default_interleave", 24, 4),
	    AT("runlist", 0, "->runlist_id", 28, 4) }, 6, 1 },
	{ "gpu_sched:bind", "on_bind",
	  { ARG("ctx", 0), AT("tsg_id", 0, "->tsg_id", 0, 8),
	    AT("runlist", 0, "->runlist_id", 8, 4),
	    AT("channels", 0, "->channel_count", 12, 4),
	    AT("timeslice", 0, "->timeslice_us", 16, 8),
	    AT("interleave", 0, "->interleave_level", 24, 4) }, 6, 1 },
	{ "gpu_sched:task_destroy", "on_task_destroy",
	  { ARG("ctx", 0), AT("tsg_id", 0, "->tsg_id", 0, 8) }, 2, 1 },
};

static const struct host_sops_kfunc sched_kfuncs[] = {
	KFUNC(ACT_SET_TIMESLICE, "bpf_nv_gpu_set_timeslice", 2, "ctx", "$0"),
	KFUNC(ACT_SET_INTERLEAVE, "bpf_nv_gpu_set_interleave", 2, "ctx", "$0"),
	KFUNC(ACT_REJECT_BIND, "bpf_nv_gpu_reject_bind", 1, "ctx"),
};

const struct host_sops_abi host_abi_nv_gpu_sched = {
	"nv_gpu_sched_ops", "gpu_sched", sched_members,
	sched_hooks, sizeof(sched_hooks) / sizeof(sched_hooks[0]),
	sched_kfuncs, sizeof(sched_kfuncs) / sizeof(sched_kfuncs[0]), NULL, NULL,
};
