/* Contract between device code and the host: device map descriptors and
 * tables, the control block and the printf ring.
 *   Device side: the helper library (codegen/ptx/helpers.cu) updates the
 *   tables and writes the ring; the PTX JIT (codegen/) declares the
 *   descriptors.
 *   Host side: the runtime (runtime/) fills the descriptors, drains the
 *   ring and snapshots the tables into the session segment; the
 *   controller (cli/) reads those tables and records.
 * Plain C with fixed-width fields so both sides agree; sizes are checked
 * with static asserts. codegen/ptx/README.md describes the protocol. */
#ifndef GPUX_DEV_H
#define GPUX_DEV_H

#include <stdint.h>
#include <string.h>

/* Functions here are compiled for both sides: by nvcc into the helper
 * library and by the C compiler into the runtime. */
#ifdef __CUDACC__
#define GPUX_HD __host__ __device__
#else
#define GPUX_HD
#endif

/* A device map: open addressing over three preallocated arrays in GPU
 * memory. The JIT names descriptor N of a program `gpux_map_N`; the
 * runtime fills it before the first launch. */
struct gpux_map_desc {
	uint64_t state;       /* uint32_t[max_entries], GPUX_SLOT_* */
	uint64_t keys;        /* key_size * max_entries bytes */
	uint64_t values;      /* value_size * max_entries bytes, zeroed */
	uint32_t key_size;    /* bytes, a multiple of 8 */
	uint32_t value_size;  /* bytes, a multiple of 8 */
	uint32_t max_entries; /* a power of two */
	uint32_t kind;        /* GPUX_MAP_HASH or _ARRAY | log2(shards) << 8 */
	uint64_t drops;       /* inserts lost to a full table */
	int64_t lhist_min;    /* lhist(): first bucket's lower bound */
	int64_t lhist_step;   /* lhist(): bucket width (> 0) */
};

#define GPUX_MAP_DESC_SIZE 64
#define GPUX_MAP_HASH 0
/* An array map: an aggregation whose one integer key the compiler bounds
 * below max_entries, so the key is the slot: no hash, no key words and
 * no state to claim. The device never writes its keys; the host reads
 * slot j as key j. An entry is present when its state is GPUX_SLOT_FULL
 * (sum() sets it, a sum may be 0) or a value word is nonzero (count,
 * hist, lhist, avg and stats only ever add). */
#define GPUX_MAP_ARRAY 1
/* Kernel ids (the `kernel` builtin, gpux_dev_ctx.kernel_id) are below
 * this: the session's name table (GPUX_SESS_MAX_NAMES) has that many. */
#define GPUX_KERNEL_IDS 4096
#define GPUX_MAP_KIND_MASK 0xffu
/* kind >> GPUX_MAP_SHARD_SHIFT = log2 of the shards: an aggregation map
 * may keep 2^n whole tables, one per group of SMs (shard = %smid mod
 * 2^n), so warps of different SMs neither read nor update the same lines;
 * the host merges the shards by key. state, keys and values point at
 * shard 0; shard k is k * GPUX_SHARD_BYTES further on. Lookups, updates
 * and deletes use shard 0 (a map read on the device has one shard). */
#define GPUX_MAP_SHARD_SHIFT 8
/* One shard's table: state words, keys, values, each part starting on
 * its own 128-byte line (the base is line-aligned), so the atomics on a
 * small map's value do not contend with the reads of its state and key. */
#define GPUX_LINE_UP(x) (((uint64_t)(x) + 127) & ~(uint64_t)127)
#define GPUX_SHARD_KEYS(n) GPUX_LINE_UP((uint64_t)(n) * 4)
#define GPUX_SHARD_VALUES(n, ks) (GPUX_SHARD_KEYS(n) + GPUX_LINE_UP((uint64_t)(n) * (ks)))
#define GPUX_SHARD_BYTES(n, ks, vs) \
	(GPUX_SHARD_VALUES(n, ks) + GPUX_LINE_UP((uint64_t)(n) * (vs)))

/* The key hash: every insert, lookup and delete of a device map probes
 * linearly from gpux_key_hash(key, key_size / 8) & (max_entries - 1).
 * The helper library (device) and the VM (vm/umaps_dev.c, host)
 * insert into the same tables, so both must use this one definition. */
GPUX_HD static inline uint64_t gpux_hash_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/* key: words 64-bit words. Device keys are 8-byte aligned (the probe's
 * stack slots); a host key may be anywhere. */
GPUX_HD static inline uint64_t gpux_key_hash(const void *key, uint32_t words)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (uint32_t i = 0; i < words; i++) {
#ifdef __CUDA_ARCH__
		uint64_t w = ((const uint64_t *)key)[i];
#else
		uint64_t w;
		memcpy(&w, (const char *)key + 8 * (size_t)i, 8);
#endif
		h = gpux_hash_mix(h ^ w);
	}
	return h;
}

/* Slot states. A slot goes EMPTY -> BUSY (one inserter owns it while it
 * writes the key) -> FULL; delete makes it DEAD (never reused, so
 * concurrent inserts of one key cannot produce two slots). */
#define GPUX_SLOT_EMPTY 0u
#define GPUX_SLOT_BUSY 1u
#define GPUX_SLOT_FULL 2u
#define GPUX_SLOT_DEAD 3u

/* Value layouts of the aggregations. */
#define GPUX_HIST_BUCKETS 66 /* <0, 0, then [2^k, 2^(k+1)) for k in 0..63 */
/* lhist: value_size / 8 buckets: < min, then [min + k*step, +step), and
 * the last one >= min + (buckets - 2) * step. */

struct gpux_avg { /* avg() and stats() */
	int64_t count;
	int64_t sum;
};

/* A printf record: this header, then arg_size bytes for each lane set in
 * mask, lowest lane first. len covers the header and the payload rounded
 * up to 16; it is written last, so a reader that sees len != 0 sees the
 * whole record. The reader zeroes what it consumed. */
struct gpux_rec_hdr {
	uint32_t len;
	uint32_t fmt;
	uint32_t mask;
	uint32_t arg_size;
};

#define GPUX_REC_ALIGN 16

/* A ring of size bytes (a power of two, at least 4 KiB) in device
 * memory. head counts bytes ever reserved by device writers, tail bytes
 * ever consumed by the host (which writes it); both only grow, offsets
 * are taken modulo size. A writer first claims room: it adds its length
 * to taken and keeps the claim only if taken then stays within tail +
 * size (else it gives the bytes back and counts a drop), and only then
 * reserves its place with an add to head. Every reservation is thereby
 * backed by room, so no reservation ever has to be abandoned, which
 * would leave a hole the reader waits on; and both steps are single
 * atomic adds, where a CAS loop on head serialised a whole GPU's
 * writers one L2 round trip at a time. */
struct gpux_ring {
	uint64_t data;
	uint64_t size;
	uint64_t head;
	uint64_t tail;
	uint64_t drops;    /* records lost to a full ring */
	uint64_t taken;    /* bytes of room claimed; >= head */
	uint64_t reserved[2];
};

/* The runtime's rings: nrings of them (a power of two), ring k at
 * ring_ptr + k * GPUX_RING_STRIDE, so each ring's words are a line of
 * their own; a warp writes to ring %smid mod nrings, so writers on
 * different SMs rarely meet on one head. */
#define GPUX_RING_STRIDE 128

/* The module's control block, `gpux_ctl` in the helper library's PTX.
 * The runtime points every module of a context at its rings (ring_ptr,
 * nrings) and one host-visible exit word (exit_ptr); a test harness may
 * use the inline ring and exit word instead (both pointers 0). */
struct gpux_ctl {
	uint32_t exit;     /* set by exit(); the host polls it */
	uint32_t flags;
	uint64_t exit_ptr; /* u32 in mapped host memory, set by exit() too */
	struct gpux_ring ring;
	uint64_t ring_ptr; /* nrings struct gpux_ring to use instead of ring */
	uint32_t nrings;
	uint32_t pad;
	uint64_t reserved[6];
};

/* Symbols of a probe module that the runtime looks up by name. */
#define GPUX_SYM_CTL "gpux_ctl"             /* struct gpux_ctl, helpers.cu */
#define GPUX_SYM_MAP "gpux_map_"            /* + map index: the JIT's descriptors */
#define GPUX_SYM_CLOCK_OFF "gpux_clock_off" /* struct gpux_clock */
#define GPUX_SYM_CLOCK_SAMPLE "gpux_clock_sample" /* kernel(u64 *m), helpers.cu */
/* u32: the device ordinal of the module's context, which the `gpu`
 * builtin reads (the runtime writes it with the control block) */
#define GPUX_SYM_GPU "gpux_gpu"
/* u32 the PTX rewriter defines in every patched module; nonzero: the
 * probe sites call nothing (the runtime sets it when the controller is
 * gone). Read once per thread at function entry, so it takes hold at
 * the next launch. */
#define GPUX_SYM_OFF "gpux_off"

/* GPUX_SYM_CLOCK_OFF, which the JIT's nsecs reads: device time g is
 * host time (CLOCK_MONOTONIC) g - base - mulhi_s64(g, rate), the last
 * term the top word of the signed 128-bit product: the clocks' rates
 * differ by rate / 2^64, a few parts per million (runtime/rt_clock.c).
 * 16-byte aligned: the JIT loads both words at once. */
struct gpux_clock {
	int64_t base;
	int64_t rate;
};

/* The words m[] of gpux_clock_sample's handshake, in mapped host memory:
 * the kernel sets RUNNING, waits for the host's GO, stamps SEEN, stamps
 * STAMP and sets DONE. The host reads its clock when it sets GO and when
 * it sees DONE. A kernel that waited too long for GO sets DONE alone. */
enum gpux_clock_word {
	GPUX_CLOCK_GO,      /* host: 1 */
	GPUX_CLOCK_SEEN,    /* device: %globaltimer when it saw GO */
	GPUX_CLOCK_STAMP,   /* device: %globaltimer just before DONE */
	GPUX_CLOCK_RUNNING, /* device: 1 */
	GPUX_CLOCK_DONE,    /* device: 1 */
	GPUX_CLOCK_WORDS
};

#ifdef __cplusplus
#define GPUX_STATIC_ASSERT static_assert
#else
#define GPUX_STATIC_ASSERT _Static_assert
#endif
GPUX_STATIC_ASSERT(sizeof(struct gpux_map_desc) == GPUX_MAP_DESC_SIZE,
		   "map descriptor layout");
GPUX_STATIC_ASSERT(sizeof(struct gpux_rec_hdr) == 16, "record header layout");
GPUX_STATIC_ASSERT(sizeof(struct gpux_ring) == 64, "ring layout");
GPUX_STATIC_ASSERT(sizeof(struct gpux_ctl) == 144, "control block layout");

#endif
