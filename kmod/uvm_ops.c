// SPDX-License-Identifier: GPL-2.0
/* struct gpu_mem_ops registered with BPF as gpu_ext's nvidia-uvm does
 * (one instance attached at a time), its kfuncs, and the calls the
 * workload runner makes into the attached policy. The kernel's verifier
 * checks each program against this module's BTF; the kernel keeps
 * authority: a hook's return value outside the decisions is the
 * runner's to ignore, and detaching leaves the default path. */
#include <linux/btf_ids.h>
#include <linux/module.h>

#include "sops.h"
#include "uvm_ops.h"

static struct kmod_sops_slot slot = { .lock = __MUTEX_INITIALIZER(slot.lock) };
static const struct kmod_uvm_env *env;

void kmod_uvm_set_env(const struct kmod_uvm_env *e)
{
	WRITE_ONCE(env, e);
}

noinline void uvm_perf_prefetch_get_hint_va_block(uvm_va_block_t *va_block,
						  void *va_block_context, u32 new_residency,
						  void *faulted_pages, u32 faulted_region,
						  uvm_perf_prefetch_bitmap_tree_t *bitmap_tree)
{
	/* the hint itself is the model's; this is where the driver's kprobe
	 * point is, so it must stay a real call */
	barrier();
}

bool kmod_uvm_attached(void)
{
	return rcu_access_pointer(slot.attached) != NULL;
}

#define CALL(member, ...) KMOD_SOPS_CALL(&slot, struct gpu_mem_ops, member, __VA_ARGS__)

int kmod_uvm_prefetch(uvm_page_index_t page_index, uvm_perf_prefetch_bitmap_tree_t *tree,
		      uvm_va_block_region_t *max_region, kmod_region_out_t *result)
{
	return CALL(gpu_page_prefetch, page_index, tree, max_region, result);
}

int kmod_uvm_prefetch_iter(uvm_perf_prefetch_bitmap_tree_t *tree, uvm_va_block_region_t *max_region,
			   uvm_va_block_region_t *current_region, unsigned int counter,
			   kmod_region_out_t *result)
{
	return CALL(gpu_page_prefetch_iter, tree, max_region, current_region, counter, result);
}

int kmod_uvm_activate(uvm_pmm_gpu_t *pmm, uvm_gpu_chunk_t *chunk, kmod_chunk_arg_t *arg)
{
	return CALL(gpu_block_activate, pmm, chunk, arg);
}

int kmod_uvm_access(uvm_pmm_gpu_t *pmm, uvm_gpu_chunk_t *chunk, kmod_chunk_arg_t *arg)
{
	return CALL(gpu_block_access, pmm, chunk, arg);
}

int kmod_uvm_evict_prepare(uvm_pmm_gpu_t *pmm, struct list_head *used, struct list_head *unused)
{
	return CALL(gpu_evict_prepare, pmm, used, unused);
}

/* ---- kfuncs ---- */

__bpf_kfunc_start_defs();

#ifdef KMOD_DECISION
/* requests on the hook's own chunk, applied by the runner after it */
__bpf_kfunc int bpf_gpu_request_reorder(uvm_bpf_pmm_decision_ctx_t *decision_ctx, u64 destination,
					u64 position)
{
	if (destination != KMOD_REORDER_USED ||
	    (position != KMOD_REORDER_HEAD && position != KMOD_REORDER_TAIL))
		return -EINVAL;
	decision_ctx->request_destination = destination;
	decision_ctx->request_position = position;
	return 0;
}

__bpf_kfunc int bpf_gpu_set_prefetch_region(uvm_bpf_prefetch_decision_t *decision_ctx, u64 first,
					    u64 outer)
{
	if (first > outer || outer > UVM_VA_BLOCK_PAGES)
		return -EINVAL;
	decision_ctx->attempted = 1;
	decision_ctx->first = first;
	decision_ctx->outer = outer;
	return 0;
}
#else
__bpf_kfunc void bpf_gpu_block_move_head(uvm_gpu_chunk_t *chunk, struct list_head *list)
{
	const struct kmod_uvm_env *e = READ_ONCE(env);

	if (e && e->move)
		e->move(e->arg, chunk, list, true);
}

__bpf_kfunc void bpf_gpu_block_move_tail(uvm_gpu_chunk_t *chunk, struct list_head *list)
{
	const struct kmod_uvm_env *e = READ_ONCE(env);

	if (e && e->move)
		e->move(e->arg, chunk, list, false);
}

/* Not in gpu_ext's ABI: the first block of a list, moved to its head or
 * tail. evict_prepare gets only the lists, and the verifier refuses the
 * chunk a policy computes from one (container_of(list->next) is a
 * pointer at a negative offset), so without this no policy can rotate
 * the used list there (gpu_ext's FIFO with second chances cannot load
 * on its own driver for this reason). gpux binds it where BTF has it. */
__bpf_kfunc void bpf_gpu_list_move_first(struct list_head *list, u64 tail)
{
	const struct kmod_uvm_env *e = READ_ONCE(env);

	if (e && e->move && list && !list_empty(list))
		e->move(e->arg, list_first_entry(list, uvm_gpu_chunk_t, list), list, !tail);
}

__bpf_kfunc void bpf_gpu_set_prefetch_region(uvm_va_block_region_t *region, uvm_page_index_t first,
					     uvm_page_index_t outer)
{
	const struct kmod_uvm_env *e = READ_ONCE(env);

	if (e && e->region)
		e->region(e->arg, region, first, outer);
}
#endif

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(uvm_kfunc_ids)
#ifdef KMOD_DECISION
BTF_ID_FLAGS(func, bpf_gpu_request_reorder)
BTF_ID_FLAGS(func, bpf_gpu_set_prefetch_region)
#else
BTF_ID_FLAGS(func, bpf_gpu_block_move_head)
BTF_ID_FLAGS(func, bpf_gpu_block_move_tail)
BTF_ID_FLAGS(func, bpf_gpu_list_move_first)
BTF_ID_FLAGS(func, bpf_gpu_set_prefetch_region)
#endif
BTF_KFUNCS_END(uvm_kfunc_ids)

static const struct btf_kfunc_id_set uvm_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &uvm_kfunc_ids,
};

/* ---- struct_ops ---- */

KMOD_SOPS_REG(slot)

static int stub_trigger(const char *buf, int len)
{
	return 0;
}

static int stub_prefetch(uvm_page_index_t page_index, uvm_perf_prefetch_bitmap_tree_t *bitmap_tree,
			 uvm_va_block_region_t *max_prefetch_region,
			 kmod_region_out_t *result_region)
{
	return 0;
}

static int stub_iter(uvm_perf_prefetch_bitmap_tree_t *bitmap_tree,
		     uvm_va_block_region_t *max_prefetch_region,
		     uvm_va_block_region_t *current_region, unsigned int counter,
		     kmod_region_out_t *prefetch_region)
{
	return 0;
}

static int stub_chunk(uvm_pmm_gpu_t *pmm, uvm_gpu_chunk_t *chunk, kmod_chunk_arg_t *list)
{
	return 0;
}

static int stub_evict(uvm_pmm_gpu_t *pmm, struct list_head *va_block_used,
		      struct list_head *va_block_unused)
{
	return 0;
}

static struct gpu_mem_ops ops_stubs = {
	.gpu_test_trigger = stub_trigger,
	.gpu_page_prefetch = stub_prefetch,
	.gpu_page_prefetch_iter = stub_iter,
	.gpu_block_activate = stub_chunk,
	.gpu_block_access = stub_chunk,
	.gpu_evict_prepare = stub_evict,
};

static struct bpf_struct_ops bpf_gpu_mem_ops = {
	.verifier_ops = &kmod_sops_verifier,
	.init = kmod_sops_init,
	.init_member = kmod_sops_init_member,
	.reg = ops_reg,
	.unreg = ops_unreg,
	.cfi_stubs = &ops_stubs,
	.name = "gpu_mem_ops",
	.owner = THIS_MODULE,
};

int kmod_uvm_ops_init(void)
{
	int rc = register_btf_kfunc_id_set(BPF_PROG_TYPE_STRUCT_OPS, &uvm_kfunc_set);

	if (rc)
		return rc;
	return register_bpf_struct_ops(&bpf_gpu_mem_ops, gpu_mem_ops);
}
