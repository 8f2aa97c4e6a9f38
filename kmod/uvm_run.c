// SPDX-License-Identifier: GPL-2.0
/* A workload through the simulator's UVM model (sim/uvm.c, the same
 * source gpux --sim runs), its decisions handed to the attached
 * gpu_mem_ops policy with the arguments the driver passes: a chunk of
 * the model is a uvm_gpu_chunk_t whose va_block leads to its owner's
 * task, the used list is a real list_head in the model's order, the
 * prefetch hooks get a bitmap tree and regions, and the capture
 * function runs before them with the faulting block. */
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "hook_status.h"
#include "uvm_ops.h"
#include "uvm_run.h"
#include "uvm.h"
#include "workload.h"

/* a tenant's objects: the chain from a block to its owner's tgid */
struct tenant_obj {
	u32 pid;
	struct task_struct *task;
	struct mm_struct *mm;
	uvm_va_space_t space;
	uvm_va_range_managed_t range;
};

struct run {
	struct uvm *u;
	uvm_pmm_gpu_t pmm;
	u32 nchunks;
	uvm_gpu_chunk_t *chunks;
	uvm_va_block_t *blocks;     /* chunk i's block */
	uvm_va_block_t fault_block; /* the prefetch hooks' */
	struct tenant_obj tenants[WL_MAX_TENANTS];
	int ntenants;
	u32 *order;
	struct kmod_run_stats *st;
};

static struct tenant_obj *tenant(struct run *r, u32 pid)
{
	struct tenant_obj *t;
	int i;

	for (i = 0; i < r->ntenants; i++)
		if (r->tenants[i].pid == pid)
			return &r->tenants[i];
	if (r->ntenants == WL_MAX_TENANTS)
		return NULL;
	t = &r->tenants[r->ntenants];
	/* only the members a policy reads are set: the kernel never sees
	 * these as a task or an mm */
	t->task = kzalloc(sizeof(*t->task), GFP_KERNEL);
	t->mm = kzalloc(sizeof(*t->mm), GFP_KERNEL);
	if (!t->task || !t->mm) {
		kfree(t->task);
		kfree(t->mm);
		t->task = NULL;
		t->mm = NULL;
		return NULL;
	}
	r->ntenants++;
	t->pid = pid;
	t->task->pid = pid;
	t->task->tgid = pid;
#ifdef CONFIG_MEMCG
	t->mm->owner = t->task;
#endif
	t->space.va_space_mm.mm = t->mm;
	t->range.va_range.va_space = &t->space;
	return t;
}

static void set_block(struct run *r, uvm_va_block_t *b, u64 block, u32 pid)
{
	struct tenant_obj *t = tenant(r, pid);

	b->start = block << 21;
	b->end = b->start + (1ull << 21) - 1;
	b->managed_range = t ? &t->range : NULL;
}

/* The used list as the model orders it, least recently used first, and
 * the unused list with the rest. */
static void sync_lists(struct run *r)
{
	int n = uvm_list_chunks(r->u, UVM_LIST_USED, r->order, (int)r->nchunks), i;

	INIT_LIST_HEAD(&r->pmm.va_block_used);
	INIT_LIST_HEAD(&r->pmm.va_block_unused);
	for (i = 0; i < (int)r->nchunks; i++)
		r->chunks[i].list.next = NULL;
	for (i = 0; i < n; i++)
		list_add_tail(&r->chunks[r->order[i]].list, &r->pmm.va_block_used);
	for (i = 0; i < (int)r->nchunks; i++)
		if (!r->chunks[i].list.next)
			list_add_tail(&r->chunks[i].list, &r->pmm.va_block_unused);
}

static void fill_chunk(struct run *r, u32 c)
{
	u64 block = uvm_chunk_block(r->u, c);

	set_block(r, &r->blocks[c], block == U64_MAX ? 0 : block, uvm_chunk_tenant(r->u, c));
}

static int decision(struct run *r, int d)
{
	if (d == KMOD_NO_POLICY)
		r->st->unattached++;
	if (d < 0)
		return UVM_DEFAULT; /* the driver's own path */
	r->st->hook_calls++;
	if (d > UVM_ENTER_LOOP) {
		r->st->bad_returns++; /* the kernel keeps authority */
		return UVM_DEFAULT;
	}
	return d;
}

/* ---- the kfuncs' effects ---- */

static void k_move(void *arg, uvm_gpu_chunk_t *chunk, struct list_head *list, bool head)
{
	struct run *r = arg;
	uintptr_t base = (uintptr_t)r->chunks, at = (uintptr_t)chunk;
	bool ok = at >= base && (at - base) % sizeof(*chunk) == 0 &&
		  (at - base) / sizeof(*chunk) < r->nchunks;

	if (!ok) {
		uvm_policy_error(r->u);
		return;
	}
	if (head)
		uvm_move_head(r->u, (u32)((at - base) / sizeof(*chunk)));
	else
		uvm_move_tail(r->u, (u32)((at - base) / sizeof(*chunk)));
	r->st->moves++;
	sync_lists(r); /* later reads in the hook see the new order */
}

static void k_region(void *arg, uvm_va_block_region_t *region, u32 first, u32 outer)
{
	struct run *r = arg;

	if (uvm_set_prefetch_region(r->u, first, outer))
		r->st->regions++;
	region->first = (uvm_page_index_t)first;
	region->outer = (uvm_page_index_t)outer;
}

/* ---- the model's hooks ---- */

#ifdef KMOD_DECISION
/* a chunk hook's context; the driver applies its request after the hook */
static int chunk_hook(struct run *r, u32 chunk,
		      int (*hook)(uvm_pmm_gpu_t *, uvm_gpu_chunk_t *, kmod_chunk_arg_t *))
{
	uvm_bpf_pmm_decision_ctx_t dc = { .pmm = &r->pmm, .root_chunk = &r->chunks[chunk] };
	int d;

	fill_chunk(r, chunk);
	sync_lists(r);
	d = decision(r, hook(&r->pmm, &r->chunks[chunk], &dc));
	if (dc.request_destination == KMOD_REORDER_USED) {
		if (dc.request_position == KMOD_REORDER_HEAD)
			uvm_move_head(r->u, chunk);
		else
			uvm_move_tail(r->u, chunk);
		r->st->moves++;
	}
	return d;
}

static void region_out(struct run *r, const kmod_region_out_t *out)
{
	if (out->attempted && uvm_set_prefetch_region(r->u, (u32)out->first, (u32)out->outer))
		r->st->regions++;
}
#else
static int chunk_hook(struct run *r, u32 chunk,
		      int (*hook)(uvm_pmm_gpu_t *, uvm_gpu_chunk_t *, kmod_chunk_arg_t *))
{
	fill_chunk(r, chunk);
	sync_lists(r);
	return decision(r, hook(&r->pmm, &r->chunks[chunk], &r->pmm.va_block_used));
}

static void region_out(struct run *r, const kmod_region_out_t *out)
{
	/* bpf_gpu_set_prefetch_region acted during the hook (k_region) */
}
#endif

static int h_activate(void *arg, struct uvm *u, u32 chunk, u32 pid)
{
	return chunk_hook(arg, chunk, kmod_uvm_activate);
}

static int h_access(void *arg, struct uvm *u, u32 chunk, u32 pid)
{
	return chunk_hook(arg, chunk, kmod_uvm_access);
}

static void h_evict(void *arg, struct uvm *u, u32 pid)
{
	struct run *r = arg;
	int i;

	for (i = 0; i < (int)r->nchunks; i++)
		fill_chunk(r, i);
	sync_lists(r);
	decision(r, kmod_uvm_evict_prepare(&r->pmm, &r->pmm.va_block_used,
					   &r->pmm.va_block_unused));
}

static void tree_of(uvm_perf_prefetch_bitmap_tree_t *t, const u64 *populated)
{
	memset(t, 0, sizeof(*t));
	memcpy(t->pages.bitmap, populated, sizeof(t->pages.bitmap));
	t->leaf_count = UVM_VA_BLOCK_PAGES;
	t->level_count = 10;
}

static int h_prefetch(void *arg, struct uvm *u, const struct uvm_prefetch_call *c)
{
	struct run *r = arg;
	uvm_perf_prefetch_bitmap_tree_t tree;
	uvm_va_block_region_t max = { (uvm_page_index_t)c->max_first,
				      (uvm_page_index_t)c->max_outer };
	kmod_region_out_t result = { 0 };
	int d;

	tree_of(&tree, c->populated);
	set_block(r, &r->fault_block, c->block, c->tenant);
	uvm_perf_prefetch_get_hint_va_block(&r->fault_block, NULL, 0, NULL, 0, &tree);
	d = decision(r, kmod_uvm_prefetch((uvm_page_index_t)c->page_index, &tree, &max, &result));
	region_out(r, &result);
	return d;
}

static int h_iter(void *arg, struct uvm *u, const struct uvm_iter_call *c)
{
	struct run *r = arg;
	uvm_perf_prefetch_bitmap_tree_t tree = { 0 };
	uvm_va_block_region_t max = { 0, UVM_VA_BLOCK_PAGES };
	uvm_va_block_region_t cur = { (uvm_page_index_t)c->first, (uvm_page_index_t)c->outer };
	kmod_region_out_t result = { 0 };
	int d;

	tree.leaf_count = UVM_VA_BLOCK_PAGES;
	tree.level_count = 10;
	d = decision(r, kmod_uvm_prefetch_iter(&tree, &max, &cur, c->counter, &result));
	region_out(r, &result);
	return d;
}

/* ---- a run ---- */

static void run_free(struct run *r)
{
	int i;

	if (r->u)
		uvm_free(r->u);
	for (i = 0; i < r->ntenants; i++) {
		kfree(r->tenants[i].task);
		kfree(r->tenants[i].mm);
	}
	kvfree(r->chunks);
	kvfree(r->blocks);
	kvfree(r->order);
}

int kmod_run(const char *spec, struct kmod_run_stats *st, char *err, size_t errlen)
{
	struct run r = { .st = st };
	struct uvm_policy hooks = { .arg = &r, .activate = h_activate, .access = h_access,
				    .evict_prepare = h_evict, .prefetch = h_prefetch,
				    .prefetch_iter = h_iter };
	struct kmod_uvm_env env = { .arg = &r, .move = k_move, .region = k_region };
	struct workload *w;
	struct wl_event ev;
	u64 gpu;
	int got, i;

	memset(st, 0, sizeof(*st));
	if (workload_open(spec, &w, err, errlen))
		return -EINVAL;
	gpu = workload_gpu_bytes(w);
	if (!gpu)
		gpu = 1ull << 30;
	r.u = uvm_new(gpu, kmod_uvm_attached() ? &hooks : NULL);
	if (!r.u)
		goto nomem;
	uvm_set_params(r.u, workload_uvm_params(w)); /* thrashing_*= keys, as --sim */
	r.nchunks = uvm_chunk_count(r.u);
	r.chunks = kvcalloc(r.nchunks, sizeof(*r.chunks), GFP_KERNEL);
	r.blocks = kvcalloc(r.nchunks, sizeof(*r.blocks), GFP_KERNEL);
	r.order = kvcalloc(r.nchunks, sizeof(*r.order), GFP_KERNEL);
	if (!r.chunks || !r.blocks || !r.order)
		goto nomem;
	r.pmm.chunk_size = 1ull << 21;
	for (i = 0; i < (int)r.nchunks; i++) {
		r.chunks[i].address = (u64)i << 21;
		r.chunks[i].log2_size = 21;
		r.chunks[i].va_block = &r.blocks[i];
	}
	sync_lists(&r);
	kmod_uvm_set_env(&env);
	while ((got = workload_next(w, &ev)) > 0) {
		switch (ev.kind) {
		case WL_ALLOC: uvm_alloc(r.u, ev.tenant, ev.va, ev.bytes); break;
		case WL_FREE: uvm_release(r.u, ev.tenant, ev.va, ev.bytes); break;
		case WL_ACCESS: uvm_access(r.u, ev.tenant, ev.va); break;
		case WL_LAUNCH: uvm_launch_end(r.u); break;
		}
		cond_resched();
	}
	uvm_launch_end(r.u);
	kmod_uvm_set_env(NULL);
	if (got < 0) {
		snprintf(err, errlen, "%s: %s", spec, workload_error(w));
		workload_close(w);
		run_free(&r);
		return -EINVAL;
	}
	st->model = *uvm_stats(r.u);
	workload_close(w);
	run_free(&r);
	return 0;
nomem:
	workload_close(w);
	run_free(&r);
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}
