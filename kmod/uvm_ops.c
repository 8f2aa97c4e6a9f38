// SPDX-License-Identifier: GPL-2.0
/* struct gpu_mem_ops registered with BPF as gpu_ext's nvidia-uvm does
 * (one instance attached at a time), its kfuncs, and the calls the
 * workload runner makes into the attached policy. The kernel's verifier
 * checks each program against this module's BTF; the kernel keeps
 * authority: a hook's return value outside the decisions is the
 * runner's to ignore, and detaching leaves the default path. */
#include <linux/bpf.h>
#include <linux/bpf_verifier.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>

#include "uvm_ops.h"

static struct gpu_mem_ops __rcu *attached;
static DEFINE_MUTEX(reg_lock);
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
	return rcu_access_pointer(attached) != NULL;
}

#define CALL(member, ...)                                                      \
	({                                                                     \
		int r_ = KMOD_NO_POLICY;                                       \
		struct gpu_mem_ops *o_;                                        \
		rcu_read_lock();                                               \
		o_ = rcu_dereference(attached);                                \
		if (o_)                                                        \
			r_ = o_->member ? o_->member(__VA_ARGS__) : KMOD_NO_HOOK; \
		rcu_read_unlock();                                             \
		r_;                                                            \
	})

int kmod_uvm_prefetch(uvm_page_index_t page_index, uvm_perf_prefetch_bitmap_tree_t *tree,
		      uvm_va_block_region_t *max_region, uvm_va_block_region_t *result)
{
	return CALL(gpu_page_prefetch, page_index, tree, max_region, result);
}

int kmod_uvm_prefetch_iter(uvm_perf_prefetch_bitmap_tree_t *tree, uvm_va_block_region_t *max_region,
			   uvm_va_block_region_t *current_region, unsigned int counter,
			   uvm_va_block_region_t *result)
{
	return CALL(gpu_page_prefetch_iter, tree, max_region, current_region, counter, result);
}

int kmod_uvm_activate(uvm_pmm_gpu_t *pmm, uvm_gpu_chunk_t *chunk, struct list_head *list)
{
	return CALL(gpu_block_activate, pmm, chunk, list);
}

int kmod_uvm_access(uvm_pmm_gpu_t *pmm, uvm_gpu_chunk_t *chunk, struct list_head *list)
{
	return CALL(gpu_block_access, pmm, chunk, list);
}

int kmod_uvm_evict_prepare(uvm_pmm_gpu_t *pmm, struct list_head *used, struct list_head *unused)
{
	return CALL(gpu_evict_prepare, pmm, used, unused);
}

/* ---- kfuncs ---- */

__bpf_kfunc_start_defs();

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

__bpf_kfunc void bpf_gpu_set_prefetch_region(uvm_va_block_region_t *region, uvm_page_index_t first,
					     uvm_page_index_t outer)
{
	const struct kmod_uvm_env *e = READ_ONCE(env);

	if (e && e->region)
		e->region(e->arg, region, first, outer);
}

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(uvm_kfunc_ids)
BTF_ID_FLAGS(func, bpf_gpu_block_move_head)
BTF_ID_FLAGS(func, bpf_gpu_block_move_tail)
BTF_ID_FLAGS(func, bpf_gpu_set_prefetch_region)
BTF_KFUNCS_END(uvm_kfunc_ids)

static const struct btf_kfunc_id_set uvm_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &uvm_kfunc_ids,
};

/* ---- struct_ops ---- */

static bool ops_is_valid_access(int off, int size, enum bpf_access_type type,
				const struct bpf_prog *prog, struct bpf_insn_access_aux *info)
{
	return bpf_tracing_btf_ctx_access(off, size, type, prog, info);
}

static const struct bpf_verifier_ops ops_verifier = {
	.get_func_proto = bpf_base_func_proto,
	.is_valid_access = ops_is_valid_access,
};

static int ops_init(struct btf *btf)
{
	return 0;
}

static int ops_init_member(const struct btf_type *t, const struct btf_member *member, void *kdata,
			   const void *udata)
{
	return 0; /* function pointers only: the kernel fills them */
}

static int ops_reg(void *kdata, struct bpf_link *link)
{
	int rc = 0;

	mutex_lock(&reg_lock);
	if (rcu_access_pointer(attached))
		rc = -EBUSY; /* one policy at a time, as the driver */
	else
		rcu_assign_pointer(attached, (struct gpu_mem_ops *)kdata);
	mutex_unlock(&reg_lock);
	return rc;
}

static void ops_unreg(void *kdata, struct bpf_link *link)
{
	mutex_lock(&reg_lock);
	if (rcu_access_pointer(attached) == kdata)
		RCU_INIT_POINTER(attached, NULL);
	mutex_unlock(&reg_lock);
	synchronize_rcu(); /* no hook runs the detached programs after this */
}

static int stub_trigger(const char *buf, int len)
{
	return 0;
}

static int stub_prefetch(uvm_page_index_t page_index, uvm_perf_prefetch_bitmap_tree_t *bitmap_tree,
			 uvm_va_block_region_t *max_prefetch_region,
			 uvm_va_block_region_t *result_region)
{
	return 0;
}

static int stub_iter(uvm_perf_prefetch_bitmap_tree_t *bitmap_tree,
		     uvm_va_block_region_t *max_prefetch_region,
		     uvm_va_block_region_t *current_region, unsigned int counter,
		     uvm_va_block_region_t *prefetch_region)
{
	return 0;
}

static int stub_chunk(uvm_pmm_gpu_t *pmm, uvm_gpu_chunk_t *chunk, struct list_head *list)
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
	.verifier_ops = &ops_verifier,
	.init = ops_init,
	.init_member = ops_init_member,
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
