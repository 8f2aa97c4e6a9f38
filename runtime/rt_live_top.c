/* The REPL's :top in a live session: each launch that went in adds to
 * its kernel's entry in the first generation's name table (launches,
 * threads), and each launch that cuda:kernel_end's events timed adds
 * its GPU time there. The controller sums the entries by name. */
#include "rt_hooks.h"

static struct gpux_sess_name *entry(uint32_t id)
{
	struct gpux_sess_hdr *root = rt_sess_root();
	if (!root || id >= GPUX_SESS_MAX_NAMES || id >= root->names_used)
		return NULL;
	return &gpux_sess_names(root)[id];
}

void rt_live_count(CUfunction f, uint64_t threads)
{
	if (!rt_live() || !f)
		return;
	struct gpux_sess_name *n = entry(rt_launch_name(f).id);
	if (!n)
		return;
	__atomic_add_fetch(&n->launches, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&n->threads, threads, __ATOMIC_RELAXED);
}

void rt_live_timed(uint32_t id, uint64_t ns)
{
	struct gpux_sess_name *n = entry(id);
	if (!n)
		return;
	__atomic_add_fetch(&n->gpu_ns, ns, __ATOMIC_RELAXED);
	__atomic_add_fetch(&n->timed, 1, __ATOMIC_RELAXED);
}
