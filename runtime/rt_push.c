/* Maps cuda: probes write and gdev: probes read (rt.h: rt_host_push).
 * The traced process's VM keeps the canonical table in host memory
 * (rt_host.c); before each launch, the slots its programs changed since
 * the context's last push are written into the context's device table on
 * the launch's own stream, so the kernel sees the values as of its
 * launch, and reads device memory. A slot new to the context gets its
 * key and value before its state word; after that, only its value.
 *
 * The words go as stream memory operations (cuStreamBatchMemOp: the
 * values travel in the call, no staging, one call per launch). A copy
 * from the session's pageable memory instead made the driver wait for
 * the stream before each launch, which cost a CuPy iteration of 17
 * launches half again its time (bench/gpu/README.md). A driver without
 * them, or one that refuses them, gets the copies. */
#include "rt_ctx_priv.h"
#include "rt_host_priv.h"

#include <stdlib.h>
#include <string.h>

#define BATCH 128 /* cuStreamBatchMemOp takes fewer than 256 */

struct batch {
	CUstream s;
	unsigned n;
	CUstreamBatchMemOpParams op[BATCH];
};

/* 0 unknown, 1 stream writes work, -1 copies only */
static int memops;

static bool copy(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
	return rt_cu.MemcpyHtoDAsync(dst, src, n, s) == CUDA_SUCCESS;
}

/* The batch's writes as copies, each from its op's own value. */
static bool copy_ops(const struct batch *b)
{
	for (unsigned k = 0; k < b->n; k++) {
		const struct CUstreamMemOpWriteValueParams_st *w = &b->op[k].writeValue;
		bool ok = w->operation == CU_STREAM_MEM_OP_WRITE_VALUE_64
				  ? copy(w->address, &w->value64, 8, b->s)
				  : copy(w->address, &w->value, 4, b->s);
		if (!ok)
			return false;
	}
	return true;
}

static bool flush(struct batch *b)
{
	if (!b->n)
		return true;
	bool ok = false;
	if (memops >= 0 && rt_cu.StreamBatchMemOp) {
		CUresult rc = rt_cu.StreamBatchMemOp(b->s, b->n, b->op, 0);
		ok = rc == CUDA_SUCCESS;
		if (!ok && memops == 0)
			RT_TRACE("cross-layer maps: stream writes refused (%s), copying instead",
				 rt_cu_err(rc));
		memops = ok ? 1 : memops == 0 ? -1 : memops;
	}
	/* a refusal writes nothing: the same words as copies */
	if (!ok)
		ok = copy_ops(b);
	b->n = 0;
	return ok;
}

/* Words of 8 bytes (wide) or one of 4, each a write in stream order. */
static bool put(struct batch *b, CUdeviceptr dst, const void *src, size_t n, bool wide)
{
	for (size_t at = 0; at < n; at += wide ? 8 : 4) {
		if (b->n == BATCH && !flush(b))
			return false;
		CUstreamBatchMemOpParams *p = &b->op[b->n++];
		memset(p, 0, sizeof(*p));
		p->writeValue.address = dst + at;
		if (wide) {
			p->writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
			memcpy(&p->writeValue.value64, (const char *)src + at, 8);
		} else {
			p->writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
			memcpy(&p->writeValue.value, (const char *)src + at, 4);
		}
	}
	return true;
}

/* Device map j's table in x, and its host table. */
static CUdeviceptr dev_table(const struct rt_ctx *x, const struct gpux_sess_map *m)
{
	return x->store + (m->area_off - x->base) + sizeof(struct gpux_sess_map_area);
}

static bool push_slot(struct rt_ctx *x, uint32_t j, uint32_t i, struct batch *b)
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
	/* keys and values are whole 8-byte words (gpux_dev.h) */
	if (x->keyed[j][i] && state == GPUX_SLOT_FULL)
		return put(b, d + voff, h + voff, m->value_size, true);
	x->keyed[j][i] = state == GPUX_SLOT_FULL;
	return put(b, d + koff, h + koff, m->key_size, true) &&
	       put(b, d + voff, h + voff, m->value_size, true) &&
	       put(b, d + 4ull * i, &state, 4, false);
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
	    !rt_capturing(st, false)) {
		CUstreamCaptureMode prev = rt_relaxed_begin();
		vm_lock(rt_h.vm);
		uint64_t head = rt_h.log_head;
		bool ok = true;
		static struct batch b; /* under rt_lock */
		b.s = st;
		b.n = 0;
		if (head - x->push_pos > HOST_LOG)
			ok = push_all(x, st);
		for (uint64_t p = x->push_pos; ok && head - x->push_pos <= HOST_LOG && p < head; p++)
			ok = push_slot(x, rt_h.log[p % HOST_LOG].map, rt_h.log[p % HOST_LOG].slot, &b);
		ok = flush(&b) && ok;
		if (ok)
			x->push_pos = head;
		vm_unlock(rt_h.vm);
		rt_relaxed_end(prev);
	}
	pthread_mutex_unlock(&rt_lock);
}
