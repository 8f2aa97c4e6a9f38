/* The driver's types, under the names and shapes gpu_ext's nvidia-uvm
 * gives them, as far as its struct_ops hooks, kfuncs and the capture
 * kprobe reach: a policy compiled by gpux binds to this module's BTF
 * exactly as it would to the driver's (codegen/host_bind.c resolves each
 * field by name). Only the members a policy can read are here; the
 * module fills them from its UVM model. */
#ifndef GPUX_KMOD_UVM_TYPES_H
#define GPUX_KMOD_UVM_TYPES_H

#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/types.h>

typedef u8 NvU8;
typedef u16 NvU16;
typedef u64 NvU64;

#define UVM_VA_BLOCK_PAGES 512

typedef NvU16 uvm_page_index_t;

typedef struct uvm_va_block_region {
	uvm_page_index_t first;
	uvm_page_index_t outer;
} uvm_va_block_region_t;

typedef struct {
	unsigned long bitmap[UVM_VA_BLOCK_PAGES / BITS_PER_LONG];
} uvm_page_mask_t;

typedef struct uvm_perf_prefetch_bitmap_tree {
	uvm_page_mask_t pages;
	uvm_page_index_t offset;
	NvU16 leaf_count;
	NvU8 level_count;
} uvm_perf_prefetch_bitmap_tree_t;

/* chunk -> va_block -> managed_range -> va_range.va_space ->
 * va_space_mm.mm -> owner: the path a policy's `owner` follows */
typedef struct uvm_va_space_mm_struct {
	struct mm_struct *mm;
} uvm_va_space_mm_t;

typedef struct uvm_va_space_struct {
	NvU64 initialization_flags;
	uvm_va_space_mm_t va_space_mm;
} uvm_va_space_t;

typedef struct uvm_va_range_struct {
	uvm_va_space_t *va_space;
	NvU64 start, end;
} uvm_va_range_t;

typedef struct uvm_va_range_managed_struct {
	uvm_va_range_t va_range;
} uvm_va_range_managed_t;

typedef struct uvm_va_block_struct {
	NvU64 kref;
	uvm_va_range_managed_t *managed_range;
	NvU64 start;
	NvU64 end;
} uvm_va_block_t;

typedef struct uvm_gpu_chunk_struct {
	NvU64 address;
	u32 type : 2;
	u32 in_eviction : 1;
	u32 inject_split_error : 1;
	u32 is_zero : 1;
	u32 is_referenced : 1;
	u32 state : 3;
	u32 log2_size : 6;
	u32 va_block_page_index : 10;
	u32 gpu_index : 7;
	struct list_head list;
	uvm_va_block_t *va_block;
	void *parent;
	void *suballoc;
} uvm_gpu_chunk_t;

typedef struct uvm_pmm_gpu_struct {
	NvU64 chunk_size;
	struct list_head va_block_used;
	struct list_head va_block_unused;
} uvm_pmm_gpu_t;

#ifdef KMOD_DECISION
/* gpu_ext's newest generation hands the hooks decision contexts: a
 * policy requests, and the driver applies the request after the hook. */
typedef struct uvm_bpf_prefetch_decision {
	u8 attempted;
	u8 conflict;
	u64 first, outer; /* the region asked for (bpf_gpu_set_prefetch_region) */
} uvm_bpf_prefetch_decision_t;

typedef struct uvm_bpf_pmm_decision_ctx {
	uvm_pmm_gpu_t *pmm;
	void *root_chunk;        /* the hook's own chunk */
	u64 observed;
	u64 request_destination; /* KMOD_REORDER_*: what the policy asked for */
	u64 request_position;
} uvm_bpf_pmm_decision_ctx_t;

#define KMOD_REORDER_USED 1
#define KMOD_REORDER_HEAD 1
#define KMOD_REORDER_TAIL 2
#endif

/* The hooks' decisions (gpu_ext's). */
enum { UVM_BPF_ACTION_DEFAULT = 0, UVM_BPF_ACTION_BYPASS = 1, UVM_BPF_ACTION_ENTER_LOOP = 2 };

#endif
