/* Maps gdev: probes write and cuda: probes only read (rt_host_priv.h:
 * mirrors). The device's copies are one table per shard per context;
 * after each snapshot the VM's table is emptied and refilled from every
 * live context's latest snapshot, shards and contexts folded as the
 * map's aggregation says (counts add, min and max keep theirs, a plain
 * value is the last context's). A cuda: probe so reads the state as of
 * the last snapshot: a kernel completion point at most 10 ms old, or
 * the synchronize that fired it. Runs under rt_lock, and under the VM's
 * lock, so no program sees a table half refilled. */
#include "rt_ctx_priv.h"
#include "rt_host_priv.h"

#include <string.h>

static int64_t fold(uint32_t how, int64_t have, int64_t v)
{
	gpux_merge_values((enum gpux_sess_merge)how, 0, (unsigned char *)&have,
			  (const unsigned char *)&v, sizeof(v));
	return have;
}

static void refill(struct gpux_sess_hdr *h, uint32_t d)
{
	const struct gpux_sess_map *m = &gpux_sess_maps(h)[d];
	struct vm_map *vm_map = rt_h.mirror_map[d];
	if (m->value_size != 8 || m->key_size > 64)
		return; /* codegen mirrors one-word values only */
	vm_map_clear(rt_h.vm, vm_map);
	for (int c = 0; c < nctx; c++) {
		const struct rt_ctx *x = &ctxs[c];
		if (x->dead || !x->slot || !x->size)
			continue;
		struct gpux_sess_map_area *a = gpux_sess_area(h, x->slot, d);
		for (uint32_t k = 0; k < gpux_sess_shards(m); k++) {
			const unsigned char *t = gpux_area_table(a, m, k);
			const uint32_t *state = (const uint32_t *)t;
			const unsigned char *keys = t + GPUX_SHARD_KEYS(m->max_entries);
			const unsigned char *vals = t + GPUX_SHARD_VALUES(m->max_entries, m->key_size);
			for (uint32_t j = 0; j < m->max_entries; j++) {
				if (state[j] != GPUX_SLOT_FULL)
					continue;
				const unsigned char *key = keys + (uint64_t)j * m->key_size;
				int64_t v, have;
				memcpy(&v, vals + (uint64_t)j * 8, 8);
				if (vm_map_lookup(rt_h.vm, vm_map, key, &have) == 0)
					v = fold(rt_h.mirror[d], have, v);
				vm_map_update(rt_h.vm, vm_map, key, &v, 0);
			}
		}
	}
}

void rt_host_mirror(void)
{
	if (!__atomic_load_n(&rt_h.nmirrors, __ATOMIC_RELAXED))
		return;
	struct gpux_sess_hdr *h = rt_sess();
	vm_lock(rt_h.vm);
	for (uint32_t d = 0; d < h->nmaps && d < HOST_MAX_BINDS; d++)
		if (rt_h.mirror_map[d])
			refill(h, d);
	vm_unlock(rt_h.vm);
}
