/* The REPL's :top in a live session: each launch that went in adds to
 * its kernel's entry in the first generation's name table (launches,
 * threads), and each launch that cuda:kernel_end's events timed adds
 * its GPU time there; the same go to its device's totals (hdr.gpus).
 * The controller sums the entries by name. */
#include "rt_hooks.h"

static struct gpux_sess_name *entry(uint32_t id)
{
	struct gpux_sess_hdr *root = rt_sess_root();
	if (!root || id >= GPUX_SESS_MAX_NAMES || id >= root->names_used)
		return NULL;
	return &gpux_sess_names(root)[id];
}

static struct gpux_sess_gpu *gpu(int dev)
{
	struct gpux_sess_hdr *root = rt_sess_root();
	return root && dev >= 0 && dev < GPUX_SESS_MAX_GPUS ? &root->gpus[dev] : NULL;
}

bool rt_live_top(void)
{
	struct gpux_sess_hdr *root = rt_live() ? rt_sess_root() : NULL;
	return root && (root->flags & GPUX_SESS_TOP);
}

void rt_live_count(CUfunction f, uint64_t threads)
{
	if (!rt_live_top() || !f)
		return;
	struct gpux_sess_name *n = entry(rt_launch_name(f).id);
	if (!n)
		return;
	__atomic_add_fetch(&n->launches, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&n->threads, threads, __ATOMIC_RELAXED);
	CUdevice d = 0;
	struct gpux_sess_gpu *g = rt_cu.CtxGetDevice && rt_cu.CtxGetDevice(&d) == CUDA_SUCCESS
					  ? gpu(d)
					  : NULL;
	if (g) {
		__atomic_add_fetch(&g->launches, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&g->threads, threads, __ATOMIC_RELAXED);
	}
}

void rt_live_timed(uint32_t id, uint64_t ns, int dev)
{
	struct gpux_sess_name *n = entry(id);
	if (!n)
		return;
	__atomic_add_fetch(&n->gpu_ns, ns, __ATOMIC_RELAXED);
	__atomic_add_fetch(&n->timed, 1, __ATOMIC_RELAXED);
	struct gpux_sess_gpu *g = gpu(dev);
	if (g) {
		__atomic_add_fetch(&g->gpu_ns, ns, __ATOMIC_RELAXED);
		__atomic_add_fetch(&g->timed, 1, __ATOMIC_RELAXED);
	}
}
