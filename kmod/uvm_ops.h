/* gpu_ext's memory struct_ops (struct gpu_mem_ops) as this module
 * registers it, the calls into the attached policy, and what its kfuncs
 * act on. */
#ifndef GPUX_KMOD_UVM_OPS_H
#define GPUX_KMOD_UVM_OPS_H

#include "uvm_types.h"

/* The two generations the module builds as (Kbuild: KMOD_ABI=decision):
 * what a prefetch hook's result and a chunk hook's third argument are. */
#ifdef KMOD_DECISION
typedef uvm_bpf_prefetch_decision_t kmod_region_out_t;
typedef uvm_bpf_pmm_decision_ctx_t kmod_chunk_arg_t;
#else
typedef uvm_va_block_region_t kmod_region_out_t;
typedef struct list_head kmod_chunk_arg_t;
#endif

struct gpu_mem_ops {
	int (*gpu_test_trigger)(const char *buf, int len);
	int (*gpu_page_prefetch)(uvm_page_index_t page_index,
				 uvm_perf_prefetch_bitmap_tree_t *bitmap_tree,
				 uvm_va_block_region_t *max_prefetch_region,
				 kmod_region_out_t *result_region);
	int (*gpu_page_prefetch_iter)(uvm_perf_prefetch_bitmap_tree_t *bitmap_tree,
				      uvm_va_block_region_t *max_prefetch_region,
				      uvm_va_block_region_t *current_region, unsigned int counter,
				      kmod_region_out_t *prefetch_region);
	int (*gpu_block_activate)(uvm_pmm_gpu_t *pmm, uvm_gpu_chunk_t *chunk,
				  kmod_chunk_arg_t *list);
	int (*gpu_block_access)(uvm_pmm_gpu_t *pmm, uvm_gpu_chunk_t *chunk,
				kmod_chunk_arg_t *list);
	int (*gpu_evict_prepare)(uvm_pmm_gpu_t *pmm, struct list_head *va_block_used,
				 struct list_head *va_block_unused);
};

/* What the kfuncs change: the runner of a workload sets it for the run
 * (runs are one at a time). A chunk or list the runner does not own is
 * refused there and counted as the policy's error. */
struct kmod_uvm_env {
	void *arg;
	void (*move)(void *arg, uvm_gpu_chunk_t *chunk, struct list_head *list, bool head);
	void (*region)(void *arg, uvm_va_block_region_t *region, u32 first, u32 outer);
};
void kmod_uvm_set_env(const struct kmod_uvm_env *env);

/* The prefetch hooks' capture point: the driver computes a fault's hint
 * here, just before calling them, and gpux's kprobe reads the VA block
 * from its first argument. */
noinline void uvm_perf_prefetch_get_hint_va_block(uvm_va_block_t *va_block,
						  void *va_block_context, u32 new_residency,
						  void *faulted_pages, u32 faulted_region,
						  uvm_perf_prefetch_bitmap_tree_t *bitmap_tree);

/* The attached policy's hooks: what it returned, or KMOD_NO_POLICY,
 * KMOD_NO_HOOK (hook_status.h). */
int kmod_uvm_prefetch(uvm_page_index_t page_index, uvm_perf_prefetch_bitmap_tree_t *tree,
		      uvm_va_block_region_t *max_region, kmod_region_out_t *result);
int kmod_uvm_prefetch_iter(uvm_perf_prefetch_bitmap_tree_t *tree, uvm_va_block_region_t *max_region,
			   uvm_va_block_region_t *current_region, unsigned int counter,
			   kmod_region_out_t *result);
int kmod_uvm_activate(uvm_pmm_gpu_t *pmm, uvm_gpu_chunk_t *chunk, kmod_chunk_arg_t *arg);
int kmod_uvm_access(uvm_pmm_gpu_t *pmm, uvm_gpu_chunk_t *chunk, kmod_chunk_arg_t *arg);
int kmod_uvm_evict_prepare(uvm_pmm_gpu_t *pmm, struct list_head *used, struct list_head *unused);
bool kmod_uvm_attached(void);

int kmod_uvm_ops_init(void);

#endif
