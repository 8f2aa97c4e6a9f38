/* The driver ABIs gpux knows by heart (docs/ARCHITECTURE.md, "Driver policies"). Choosing
 * one from the running driver's BTF is a later step; until then these
 * are what host_compile lays struct_ops out against.
 *
 * Offsets marked "placeholder" are guesses to be replaced by BTF
 * discovery: the kernel verifier checks every such access against the
 * driver's BTF at load, so a wrong guess is refused, never misread. */
#include "llvm_host.h"

static const char *const uvm_members[] = {
	"uvm_prefetch_before_compute",
	"uvm_prefetch_on_tree_iter",
	"uvm_pmm_chunk_activate",
	"uvm_pmm_chunk_used",
	"uvm_pmm_eviction_prepare",
	NULL,
};

static const struct host_sops_hook uvm_hooks[] = {
	/* (pmm, chunk, list) */
	{ "gpu_mem:activate", "uvm_pmm_chunk_activate",
	  { { "chunk", 1, -1, 8 }, { "list", 2, -1, 8 } }, 2 },
	{ "gpu_mem:access", "uvm_pmm_chunk_used",
	  { { "chunk", 1, -1, 8 }, { "list", 2, -1, 8 } }, 2 },
	/* (pmm, used_list, unused_list) */
	{ "gpu_mem:evict_prepare", "uvm_pmm_eviction_prepare",
	  { { "used_list", 1, -1, 8 }, { "unused_list", 2, -1, 8 } }, 2 },
	/* (page_index, bitmap_tree, max_prefetch_region, result_region);
	 * a region is {first, outer} page indices (placeholder: u32 each) */
	{ "gpu_mem:prefetch", "uvm_prefetch_before_compute",
	  { { "page_index", 0, -1, 8 }, { "max_first", 2, 0, 4 },
	    { "max_outer", 2, 4, 4 }, { "result_region", 3, -1, 8 } }, 4 },
};

static const struct host_sops_kfunc uvm_kfuncs[] = {
	{ ACT_MOVE_HEAD, "bpf_uvm_pmm_chunk_move_head", { "$0", "list" }, 2 },
	{ ACT_MOVE_TAIL, "bpf_uvm_pmm_chunk_move_tail", { "$0", "list" }, 2 },
	{ ACT_SET_PREFETCH_REGION, "bpf_uvm_set_va_block_region",
	  { "result_region", "$0", "$1" }, 3 },
};

const struct host_sops_abi host_abi_uvm_gpu_ext = {
	"uvm_gpu_ext", "gpu_mem", uvm_members,
	uvm_hooks, sizeof(uvm_hooks) / sizeof(uvm_hooks[0]),
	uvm_kfuncs, sizeof(uvm_kfuncs) / sizeof(uvm_kfuncs[0]),
};

static const char *const sched_members[] = {
	"on_task_init",
	"on_bind",
	"on_task_destroy",
	NULL,
};

/* (ctx); the ctx fields' offsets are placeholders */
#define SCHED_CTX { "ctx", 0, -1, 8 }, { "tsg_id", 0, 0, 8 }
static const struct host_sops_hook sched_hooks[] = {
	{ "gpu_sched:task_init", "on_task_init",
	  { SCHED_CTX, { "timeslice", 0, 8, 8 }, { "interleave", 0, 16, 4 } }, 4 },
	{ "gpu_sched:bind", "on_bind", { SCHED_CTX }, 2 },
	{ "gpu_sched:task_destroy", "on_task_destroy", { SCHED_CTX }, 2 },
};

static const struct host_sops_kfunc sched_kfuncs[] = {
	{ ACT_SET_TIMESLICE, "bpf_nv_gpu_set_timeslice", { "ctx", "$0" }, 2 },
	{ ACT_SET_INTERLEAVE, "bpf_nv_gpu_set_interleave", { "ctx", "$0" }, 2 },
	{ ACT_REJECT_BIND, "bpf_nv_gpu_reject_bind", { "ctx" }, 1 },
};

const struct host_sops_abi host_abi_nv_gpu_sched = {
	"nv_gpu_sched_ops", "gpu_sched", sched_members,
	sched_hooks, sizeof(sched_hooks) / sizeof(sched_hooks[0]),
	sched_kfuncs, sizeof(sched_kfuncs) / sizeof(sched_kfuncs[0]),
};
