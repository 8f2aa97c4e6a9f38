/* The device helper library: the trusted, warp-collective side of device
 * probes (docs/ARCHITECTURE.md, "The device execution model"). Compiled to PTX at build time
 * (nvcc -arch=sm_80 -ptx -rdc=true) and appended to JIT output, and that
 * PTX assembled into relocatable cubins per SM (runtime/helpers_cubin.cmake)
 * that the runtime links patched modules with (codegen/ptx/README.md).
 *
 * Every helper is called by the active lanes of a warp together, with the
 * eBPF argument registers r1..r5 as 64-bit parameters and r0 as the
 * result. Lanes are found with __activemask(); if the compiler split the
 * callers into several converged sets, each set aggregates itself, so the
 * totals stay exact (only the number of updates grows). Side effects are
 * made by one elected lane per warp, or per group of lanes with equal
 * keys. */
#include <stdint.h>

#include "gpux_dev.h"

typedef unsigned long long u64;
typedef long long s64;

/* GPUX_SYM_CTL */
extern "C" {
__device__ struct gpux_ctl gpux_ctl;
}

#define HELPER extern "C" __device__ __noinline__ u64

enum agg_op { AGG_COUNT, AGG_SUM, AGG_MIN, AGG_MAX, AGG_AVG, AGG_HIST, AGG_LHIST };

static __device__ __forceinline__ unsigned lane_id(void)
{
	unsigned r;
	asm("mov.u32 %0, %%laneid;" : "=r"(r));
	return r;
}

static __device__ __forceinline__ unsigned lanemask_lt(void)
{
	unsigned r;
	asm("mov.u32 %0, %%lanemask_lt;" : "=r"(r));
	return r;
}

static __device__ __forceinline__ unsigned lowest(unsigned mask)
{
	return (unsigned)__ffs((int)mask) - 1;
}

/* The lanes that run this helper call together with mine: those active
 * now that pass the same a and b (the map and the operation, or the
 * format). Lanes of one warp that reach the same helper from different
 * probes (divergent paths through a device function, say) may be
 * scheduled together; they must not share a reduction, a leader or a
 * record, and may differ in key size. Each set then works on its own. */
static __device__ __forceinline__ unsigned peers(u64 a, u64 b)
{
	unsigned mask = __activemask();
	return __match_any_sync(mask, a) & __match_any_sync(mask, b);
}

/* Lanes of mask whose key equals mine, word by word. words is the same
 * in every lane (one map), so each lane calls match the same times. */
static __device__ unsigned key_group(unsigned mask, const u64 *key,
				     unsigned words)
{
	unsigned g = mask;
	for (unsigned i = 0; i < words; i++)
		g &= __match_any_sync(mask, key[i]);
	return g;
}

/* Reductions over the active lanes, result in every lane. A full warp
 * takes the butterfly; a partial one gathers lane by lane, since
 * shuffles from inactive lanes are undefined. */
static __device__ s64 combine(int op, s64 a, s64 b)
{
	switch (op) {
	case AGG_MIN: return a < b ? a : b;
	case AGG_MAX: return a > b ? a : b;
	default: return a + b;
	}
}

static __device__ s64 warp_reduce(unsigned active, s64 x, int op)
{
	if (active == 0xffffffffu) {
		for (int d = 16; d > 0; d >>= 1)
			x = combine(op, x, __shfl_xor_sync(active, x, d));
		return x;
	}
	s64 acc = 0;
	bool first = true;
	for (unsigned m = active; m; m &= m - 1) {
		s64 y = __shfl_sync(active, x, (int)lowest(m));
		acc = first ? y : combine(op, acc, y);
		first = false;
	}
	return acc;
}

/* a is a slot's key in the shared table: read it volatile, so a line
 * another SM filled after this SM cached it is not seen stale in L1. */
static __device__ bool key_equal(const volatile u64 *a, const u64 *b,
				 unsigned words)
{
	for (unsigned i = 0; i < words; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* The slot holding key, inserting it when insert is set (init, if not
 * NULL, is the first value word); -1 when absent or the table is full.
 * Called by one lane at a time per key. */
/* Byte offset of this warp's shard (one per group of SMs). */
static __device__ __forceinline__ u64 shard_off(const struct gpux_map_desc *m)
{
	u64 shards = 1ull << ((m->kind >> GPUX_MAP_SHARD_SHIFT) & 31);
	if (shards == 1)
		return 0;
	unsigned sm;
	asm("mov.u32 %0, %%smid;" : "=r"(sm));
	return ((u64)sm & (shards - 1)) *
	       GPUX_SHARD_BYTES(m->max_entries, m->key_size, m->value_size);
}

/* off: the shard's byte offset (0 for shard 0). */
static __device__ s64 slot_get(struct gpux_map_desc *m, u64 off, const u64 *key,
			       bool insert, const s64 *init)
{
	unsigned words = m->key_size / 8, cap = m->max_entries;
	unsigned *state = (unsigned *)(m->state + off);
	u64 *keys = (u64 *)(m->keys + off);
	u64 h = gpux_key_hash(key, words);
	for (unsigned probe = 0; probe < cap; probe++) {
		unsigned i = (unsigned)(h + probe) & (cap - 1);
		u64 *slot_key = keys + (u64)i * words;
		unsigned s = *(volatile unsigned *)&state[i];
		if (s == GPUX_SLOT_EMPTY) {
			if (!insert)
				return -1;
			s = atomicCAS(&state[i], GPUX_SLOT_EMPTY, GPUX_SLOT_BUSY);
			if (s == GPUX_SLOT_EMPTY) {
				for (unsigned w = 0; w < words; w++)
					slot_key[w] = key[w];
				if (init)
					*(s64 *)(m->values + off + (u64)i * m->value_size) = *init;
				__threadfence();
				atomicExch(&state[i], GPUX_SLOT_FULL);
				return i;
			}
		}
		/* Another lane is writing this slot's key: wait for it
		 * (independent thread scheduling lets it finish even when it
		 * is in this warp). */
		while (s == GPUX_SLOT_BUSY)
			s = *(volatile unsigned *)&state[i];
		/* Order the key reads after the FULL we saw (the writer's
		 * fence + atomicExch is the matching release). */
		__threadfence();
		if (s == GPUX_SLOT_FULL && key_equal(slot_key, key, words))
			return i;
	}
	if (insert)
		atomicAdd((u64 *)&m->drops, 1ull);
	return -1;
}

static __device__ void *slot_value(struct gpux_map_desc *m, u64 off, s64 slot)
{
	return (void *)(m->values + off + (u64)slot * m->value_size);
}

static __device__ unsigned hist_bucket(s64 v, unsigned nbuckets)
{
	unsigned b = v < 0 ? 0 : v == 0 ? 1 : 2 + (63 - __clzll(v));
	return b < nbuckets ? b : nbuckets - 1;
}

static __device__ unsigned lhist_bucket(const struct gpux_map_desc *m, s64 v)
{
	unsigned n = m->value_size / 8;
	s64 step = m->lhist_step > 0 ? m->lhist_step : 1;
	if (n < 2 || v < m->lhist_min)
		return 0;
	u64 k = (u64)(v - m->lhist_min) / (u64)step;
	return k < n - 2 ? (unsigned)k + 1 : n - 1;
}

/* One aggregation step for the whole warp: lanes are grouped by key, each
 * group is reduced and its leader makes one update. Groups are handled
 * one after another so every lane takes part in every shuffle. */
static __device__ u64 aggregate(u64 map, u64 key, s64 v, int op)
{
	struct gpux_map_desc *m = (struct gpux_map_desc *)map;
	const u64 *k = (const u64 *)key;
	unsigned active = peers(map, (u64)op), lane = lane_id();
	unsigned mine = key_group(active, k, m->key_size / 8);
	u64 off = shard_off(m);
	if (op == AGG_COUNT) {
		/* No reduction to share: every group's leader updates at
		 * once (k distinct keys cost one pass, not k). */
		if (lane == lowest(mine)) {
			s64 slot = slot_get(m, off, k, true, NULL);
			if (slot >= 0)
				atomicAdd((u64 *)slot_value(m, off, slot), (u64)__popc(mine));
		}
		return 0;
	}
	for (unsigned todo = active; todo;) {
		unsigned leader = lowest(todo);
		unsigned g = __shfl_sync(active, mine, (int)leader);
		bool in = (g >> lane) & 1;
		s64 x = 0;
		if (op == AGG_SUM || op == AGG_AVG)
			x = warp_reduce(active, in ? v : 0, op);
		else if (op == AGG_MIN)
			x = warp_reduce(active, in ? v : INT64_MAX, op);
		else if (op == AGG_MAX)
			x = warp_reduce(active, in ? v : INT64_MIN, op);
		s64 slot = -1;
		if (lane == leader)
			slot = slot_get(m, off, k, true,
					op == AGG_MIN || op == AGG_MAX ? &x : NULL);
		if (op == AGG_HIST || op == AGG_LHIST) {
			/* Lanes of the group with equal buckets add once. */
			slot = __shfl_sync(active, slot, (int)leader);
			unsigned b = op == AGG_HIST ? hist_bucket(v, m->value_size / 8)
						    : lhist_bucket(m, v);
			unsigned same = __match_any_sync(active, b) & g;
			if (in && slot >= 0 && lane == lowest(same))
				atomicAdd((u64 *)slot_value(m, off, slot) + b,
					  (u64)__popc(same));
		} else if (lane == leader && slot >= 0) {
			void *val = slot_value(m, off, slot);
			switch (op) {
			case AGG_SUM:
				atomicAdd((u64 *)val, (u64)x);
				break;
			case AGG_MIN:
				atomicMin((long long *)val, x);
				break;
			case AGG_MAX:
				atomicMax((long long *)val, x);
				break;
			case AGG_AVG:
				atomicAdd((u64 *)&((struct gpux_avg *)val)->count,
					  (u64)__popc(g));
				atomicAdd((u64 *)&((struct gpux_avg *)val)->sum, (u64)x);
				break;
			}
		}
		todo &= ~g;
	}
	return 0;
}

HELPER gpux_h_agg_count(u64 map, u64 key)
{
	return aggregate(map, key, 0, AGG_COUNT);
}

HELPER gpux_h_agg_sum(u64 map, u64 key, u64 v)
{
	return aggregate(map, key, (s64)v, AGG_SUM);
}

HELPER gpux_h_map_add(u64 map, u64 key, u64 delta)
{
	return aggregate(map, key, (s64)delta, AGG_SUM);
}

HELPER gpux_h_agg_min(u64 map, u64 key, u64 v)
{
	return aggregate(map, key, (s64)v, AGG_MIN);
}

HELPER gpux_h_agg_max(u64 map, u64 key, u64 v)
{
	return aggregate(map, key, (s64)v, AGG_MAX);
}

HELPER gpux_h_agg_avg(u64 map, u64 key, u64 v)
{
	return aggregate(map, key, (s64)v, AGG_AVG);
}

HELPER gpux_h_agg_stats(u64 map, u64 key, u64 v)
{
	return aggregate(map, key, (s64)v, AGG_AVG);
}

HELPER gpux_h_agg_hist(u64 map, u64 key, u64 v)
{
	return aggregate(map, key, (s64)v, AGG_HIST);
}

HELPER gpux_h_agg_lhist(u64 map, u64 key, u64 v)
{
	return aggregate(map, key, (s64)v, AGG_LHIST);
}

/* Lookups have no side effect: every lane probes for its own key. */
HELPER gpux_h_map_lookup(u64 map, u64 key)
{
	struct gpux_map_desc *m = (struct gpux_map_desc *)map;
	s64 slot = slot_get(m, 0, (const u64 *)key, false, NULL);
	return slot < 0 ? 0 : (u64)slot_value(m, 0, slot);
}

/* One write per distinct key in the warp, by the group's lowest lane. */
HELPER gpux_h_map_update(u64 map, u64 key, u64 value)
{
	struct gpux_map_desc *m = (struct gpux_map_desc *)map;
	const u64 *k = (const u64 *)key;
	unsigned active = peers(map, 0);
	unsigned g = key_group(active, k, m->key_size / 8);
	s64 slot = -1;
	if (lane_id() == lowest(g)) {
		slot = slot_get(m, 0, k, true, NULL);
		if (slot >= 0) {
			u64 *dst = (u64 *)slot_value(m, 0, slot);
			const u64 *src = (const u64 *)value;
			for (unsigned w = 0; w < m->value_size / 8; w++)
				dst[w] = src[w];
		}
	}
	slot = __shfl_sync(active, slot, (int)lowest(g));
	return slot < 0 ? (u64)-1 : 0;
}

HELPER gpux_h_map_delete(u64 map, u64 key)
{
	struct gpux_map_desc *m = (struct gpux_map_desc *)map;
	const u64 *k = (const u64 *)key;
	unsigned active = peers(map, 0);
	unsigned g = key_group(active, k, m->key_size / 8);
	unsigned found = 0;
	if (lane_id() == lowest(g)) {
		s64 slot = slot_get(m, 0, k, false, NULL);
		if (slot >= 0)
			found = atomicCAS((unsigned *)m->state + slot, GPUX_SLOT_FULL,
					  GPUX_SLOT_DEAD) == GPUX_SLOT_FULL;
	}
	found = __shfl_sync(active, found, (int)lowest(g));
	return found ? 0 : (u64)-1;
}

/* The ring this warp writes to: the runtime's ring for its SM, or the
 * inline one. */
static __device__ __forceinline__ struct gpux_ring *my_ring(void)
{
	if (!gpux_ctl.ring_ptr)
		return &gpux_ctl.ring;
	unsigned sm, n = gpux_ctl.nrings ? gpux_ctl.nrings : 1;
	asm("mov.u32 %0, %%smid;" : "=r"(sm));
	return (struct gpux_ring *)(gpux_ctl.ring_ptr + (u64)(sm & (n - 1)) * GPUX_RING_STRIDE);
}

/* Room for len bytes in the ring, or ~0 when it is full (or absent):
 * then the record is dropped and counted, never waited for. The claim
 * on taken backs the reservation on head (struct gpux_ring). */
static __device__ u64 ring_reserve(struct gpux_ring *r, u64 len)
{
	if (!r->data)
		return ~0ull;
	u64 size = r->size, tail = *(volatile u64 *)&r->tail;
	/* full as far as a plain read says: no atomic on the claim */
	if (*(volatile u64 *)&r->taken + len - tail > size) {
		atomicAdd((u64 *)&r->drops, 1ull);
		return ~0ull;
	}
	u64 t = atomicAdd((u64 *)&r->taken, len);
	if (t + len - *(volatile u64 *)&r->tail > size) {
		atomicAdd((u64 *)&r->taken, (u64)0 - len);
		atomicAdd((u64 *)&r->drops, 1ull);
		return ~0ull;
	}
	return atomicAdd((u64 *)&r->head, len);
}

/* One record per warp: the leader reserves, each lane copies its own
 * arguments at its rank, the leader publishes the header. */
HELPER gpux_h_printf(u64 fmt, u64 args, u64 size)
{
	struct gpux_ring *r = my_ring();
	unsigned active = peers(fmt, size), lane = lane_id();
	unsigned leader = lowest(active);
	u64 payload = (u64)__popc(active) * size;
	u64 len = (sizeof(struct gpux_rec_hdr) + payload + GPUX_REC_ALIGN - 1) &
		  ~(u64)(GPUX_REC_ALIGN - 1);
	u64 off = 0;
	if (lane == leader)
		off = ring_reserve(r, len);
	off = __shfl_sync(active, off, (int)leader);
	if (off == ~0ull)
		return (u64)-1;
	unsigned char *data = (unsigned char *)r->data;
	u64 wrap = r->size - 1;
	u64 at = off + sizeof(struct gpux_rec_hdr) +
		 (u64)__popc(active & lanemask_lt()) * size;
	/* size and at are multiples of 8 (8-byte argument words, 16-byte
	 * records): whole words */
	const u64 *src = (const u64 *)args;
	for (u64 i = 0; i < size / 8; i++)
		*(u64 *)(data + ((at + 8 * i) & wrap)) = src[i];
	__syncwarp(active);
	if (lane == leader) {
		/* Records are 16-aligned in a power-of-two ring, so the
		 * header never straddles the end. */
		struct gpux_rec_hdr *h = (struct gpux_rec_hdr *)(data + (off & wrap));
		h->fmt = (uint32_t)fmt;
		h->mask = active;
		h->arg_size = (uint32_t)size;
		/* The ring is device memory and its reader the runtime's
		 * copies, which read it through L2 like any SM: GPU scope
		 * orders the arguments before len. */
		__threadfence();
		*(volatile uint32_t *)&h->len = (uint32_t)len;
	}
	return 0;
}

HELPER gpux_h_exit(void)
{
	if (lane_id() == lowest(__activemask())) {
		atomicExch(&gpux_ctl.exit, 1u);
		if (gpux_ctl.exit_ptr) {
			*(volatile uint32_t *)gpux_ctl.exit_ptr = 1u;
			__threadfence_system();
		}
	}
	return 0;
}

/* The runtime's clock calibration (rt_clock.c), a handshake over mapped
 * host memory m[GPUX_CLOCK_WORDS] (enum gpux_clock_word): the thread says
 * it runs, waits for the host's go and stamps when it sees it, then
 * stamps again and says so. The host reads its clock when it gives the go
 * and when it sees the second flag; the two bus crossings' delays cancel
 * in its average. The wait for the go is bounded (20 ms); a thread that
 * gave up stamps nothing, so a go given late is not paired with a stale
 * time. GPUX_SYM_CLOCK_SAMPLE */
extern "C" __global__ void gpux_clock_sample(unsigned long long *m)
{
	volatile unsigned long long *v = m;
	unsigned long long t0, t;
	bool go;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	v[GPUX_CLOCK_RUNNING] = 1;
	__threadfence_system();
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
		go = v[GPUX_CLOCK_GO] != 0;
	} while (!go && t - t0 < 20000000ull);
	if (go) {
		v[GPUX_CLOCK_SEEN] = t;
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
		v[GPUX_CLOCK_STAMP] = t;
	}
	__threadfence_system();
	v[GPUX_CLOCK_DONE] = 1;
	__threadfence_system();
}
