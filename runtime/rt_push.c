/* Maps cuda: probes write and gdev: probes read (rt.h: rt_host_push).
 * The traced process's VM keeps the canonical table in host memory
 * (rt_host.c); before each launch, the slots its programs changed since
 * the context's last push are copied into the context's device table on
 * the launch's own stream, so the kernel sees the values as of its
 * launch, and reads device memory. A slot new to the context gets its
 * key and value before its state word; after that, only its value. */
#include "rt_ctx_priv.h"
#include "rt_host_priv.h"

#include <stdlib.h>

static bool copy(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
	return rt_cu.MemcpyHtoDAsync(dst, src, n, s) == CUDA_SUCCESS;
}

/* Device map j's table in x, and its host table. */
static CUdeviceptr dev_table(const struct rt_ctx *x, const struct gpux_sess_map *m)
{
	return x->store + (m->area_off - x->base) + sizeof(struct gpux_sess_map_area);
}

static bool push_slot(struct rt_ctx *x, uint32_t j, uint32_t i, CUstream s)
{
	const struct gpux_sess_map *m = &gpux_sess_maps(rt_sess())[j];
	const unsigned char *h = rt_h.table[j];
	if (!h || i >= m->max_entries || j >= 64)
		return true;
	if (!x->keyed[j] && !(x->keyed[j] = calloc(m->max_entries, 1)))
		return false;
	CUdeviceptr d = dev_table(x, m);
	uint64_t koff = GPUX_SHARD_KEYS(m->max_entries) + (uint64_t)i * m->key_size;
	uint64_t voff = GPUX_SHARD_VALUES(m->max_entries, m->key_size) + (uint64_t)i * m->value_size;
	uint32_t state = __atomic_load_n((const uint32_t *)h + i, __ATOMIC_ACQUIRE);
	if (x->keyed[j][i] && state == GPUX_SLOT_FULL)
		return copy(d + voff, h + voff, m->value_size, s);
	x->keyed[j][i] = state == GPUX_SLOT_FULL;
	return copy(d + koff, h + koff, m->key_size, s) &&
	       copy(d + voff, h + voff, m->value_size, s) &&
	       copy(d + 4ull * i, &state, 4, s);
}

/* Too far behind the log: every shared table, whole. */
static bool push_all(struct rt_ctx *x, CUstream s)
{
	const struct gpux_sess_hdr *h = rt_sess();
	for (uint32_t j = 0; j < h->nmaps && j < HOST_MAX_BINDS; j++) {
		const struct gpux_sess_map *m = &gpux_sess_maps(rt_sess())[j];
		if (!rt_h.table[j])
			continue;
		if (!copy(dev_table(x, m), rt_h.table[j],
			  GPUX_SHARD_BYTES(m->max_entries, m->key_size, m->value_size), s))
			return false;
		if (j < 64 && x->keyed[j])
			for (uint32_t i = 0; i < m->max_entries; i++)
				x->keyed[j][i] = ((const uint32_t *)rt_h.table[j])[i] == GPUX_SLOT_FULL;
	}
	return true;
}

static bool capturing(CUstream s)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	return rt_cu.StreamIsCapturing && rt_cu.StreamIsCapturing(s, &st) == CUDA_SUCCESS &&
	       st != CU_STREAM_CAPTURE_STATUS_NONE;
}

void rt_host_push(CUstream s, bool per_thread)
{
	if (!__atomic_load_n(&rt_h.nshared, __ATOMIC_RELAXED) || !rt_cu_ready())
		return;
	CUcontext c = NULL;
	if (rt_cu.CtxGetCurrent(&c) != CUDA_SUCCESS || !c)
		return;
	CUstream st = s ? s : per_thread ? CU_STREAM_PER_THREAD : NULL;
	pthread_mutex_lock(&rt_lock);
	struct rt_ctx *x = rt_ctx_of(c);
	/* a captured copy would replay stale values: the next launch
	 * outside the capture pushes them */
	if (x && x->store && x->push_pos != __atomic_load_n(&rt_h.log_head, __ATOMIC_ACQUIRE) &&
	    !capturing(st)) {
		CUstreamCaptureMode prev = rt_relaxed_begin();
		vm_lock(rt_h.vm);
		uint64_t head = rt_h.log_head;
		bool ok = true;
		if (head - x->push_pos > HOST_LOG)
			ok = push_all(x, st);
		for (uint64_t p = x->push_pos; ok && head - x->push_pos <= HOST_LOG && p < head; p++)
			ok = push_slot(x, rt_h.log[p % HOST_LOG].map, rt_h.log[p % HOST_LOG].slot, st);
		if (ok)
			x->push_pos = head;
		vm_unlock(rt_h.vm);
		rt_relaxed_end(prev);
	}
	pthread_mutex_unlock(&rt_lock);
}
