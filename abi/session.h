/* Contract between the controller and the runtime: the session segment,
 * one shared memory file (memfd). The controller (cli/, through
 * runtime/sess_layout.h) lays it out and fills the read-only part (probe
 * PTX, probe table, map table) before it starts the program; the runtime
 * (libgpux-rt.so) in every traced process maps it, claims a slot per
 * CUDA context and a host region per process with a VM, and publishes
 * map snapshots and records there; the controller reads those. Plain
 * fixed-width C so both sides agree.
 *
 *   [hdr][probes][maps][ptx][link ptx][names][slot 0][slot 1]...[hobj][hbind][host 0]...
 *
 * hobj is the host object (a BPF ELF, object/host_obj.h) whose cuda:
 * programs each traced process runs in its own userspace BPF VM; hbind
 * says which of its maps are device maps too (cross-layer: the VM works
 * on the device table, kept in host memory the device reads); each
 * process with a VM claims a host region for its event ring and its map
 * dumps (struct gpux_sess_host).
 *
 * A slot is [gpux_sess_slot][event ring][map 0 area][map 1 area]...; a
 * map area is gpux_sess_map_area followed by the raw copy of the device
 * tables, one per shard: u32 state[max_entries], keys, values, each
 * part line-aligned (GPUX_SHARD_* in gpux_dev.h). The runtime finds the
 * segment through the environment, GPUX_SESSION=PID:FD:TOKEN (formatted
 * and parsed by runtime/sess_layout.h): the controller's pid, its
 * descriptor of the segment, which the traced program inherits, and
 * the header's token in 32 hex digits. A process started with its
 * descriptors closed (Python's spawn and forkserver, subprocess) opens
 * /proc/PID/fd/FD instead; either way the segment counts only when its
 * header carries the token, so a descriptor reused for another file or
 * a pid reused by another process is never taken for the session, and a
 * process started after gpux ended finds none. Mapped MAP_SHARED. */
#ifndef GPUX_SESSION_H
#define GPUX_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cuda_actions.h"
#include "gpux_dev.h"

#define GPUX_SESS_MAGIC 0x53534553584e5047ull /* "GPNXSESS" little-endian */
#define GPUX_SESS_VERSION 13
#define GPUX_SESS_ENV "GPUX_SESSION"

/* gpux -p loads the runtime into the process and calls its entry
 * GPUX_ATTACH_ENTRY(the session's GPUX_SESSION value) there, which
 * returns -2 at once when that instance was in a session before (load a
 * copy), -1 when it cannot start, else the address of a 64-bit word
 * holding GPUX_ATTACH_PENDING until the attach, on a thread of its own,
 * answers: the bindings it sent through the runtime (>= 0), -1 when it
 * could not join the session, -3 when another gpux traces the process. */
#define GPUX_ATTACH_ENTRY "gpux_rt_attach_start"
#define GPUX_ATTACH_PENDING (-0x7fffffffffffffffll - 1)
#define GPUX_SESS_MAX_SLOTS 16
#define GPUX_SESS_MAX_NAMES GPUX_KERNEL_IDS
#define GPUX_SESS_NAME_LEN 248
#define GPUX_SESS_RING_SIZE (1u << 20) /* per slot, a power of two */
#define GPUX_SESS_MAX_HOSTS 16
#define GPUX_SESS_HRING_SIZE (1u << 20) /* per host region, a power of two */
#define GPUX_SESS_MAX_MSGS 256
#define GPUX_SESS_MSG_LEN 504 /* a message of the runtime, cut (and marked) beyond */

/* Header flags (hdr.flags), set by the controller. */
#define GPUX_SESS_VERBOSE 1u /* the runtime reports each module it patches */
#define GPUX_SESS_CLOCK 2u   /* device probes read nsecs: match the clocks */
/* A live session (the REPL): the runtime loads every module untouched,
 * keeps its image, and launches each function's namesake in a module
 * instrumented with the current generation's probes. A generation is a
 * whole segment of this layout later in the same file (next_off); the
 * first one holds the kernel names and messages of all of them. */
#define GPUX_SESS_LIVE 4u
/* gpux --no-cache: the runtime neither reads nor writes its cache of
 * instrumented modules (runtime/rt_cache.c). */
#define GPUX_SESS_NO_CACHE 8u
/* A live session with :top (the REPL): the runtime counts every launch
 * and times it with events (gpux -p's live session does neither). */
#define GPUX_SESS_TOP 16u
/* -f perfetto, version 13: the runtime sends every cuda: event whole to
 * the controller (HOST_REC_CEV, abi/host_rec.h), once, whatever the
 * probes of the event do; the timeline's own probes only turn the events
 * on. */
#define GPUX_SESS_TIMELINE 32u

/* Live sessions (the REPL's :top): what each GPU ran. */
#define GPUX_SESS_MAX_GPUS 16
struct gpux_sess_gpu {
	uint64_t launches, threads; /* launches that went in on the device */
	uint64_t timed, gpu_ns;     /* of those, timed with events, and their time */
	/* The device's name (cuDeviceGetName), written by the first runtime
	 * that times a kernel on it; "" until then (untrusted text). */
	char name[64];
};

struct gpux_sess_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t flags;
	uint64_t size;        /* bytes of the whole segment */
	uint64_t probes_off;  /* struct gpux_sess_probe[nprobes] */
	uint64_t maps_off;    /* struct gpux_sess_map[nmaps] */
	uint64_t ptx_off;     /* the probe module, NUL-terminated */
	uint64_t names_off;   /* struct gpux_sess_name[GPUX_SESS_MAX_NAMES] */
	uint64_t slots_off;   /* slot i at slots_off + i * slot_size */
	uint64_t slot_size;
	uint64_t ptx_len;
	uint32_t nprobes;
	uint32_t nmaps;
	uint32_t nslots;      /* GPUX_SESS_MAX_SLOTS */
	uint32_t ring_size;   /* event ring bytes per slot */
	/* Written by the runtimes, read by the controller. */
	uint32_t slots_used;  /* slots claimed (atomic fetch-add) */
	uint32_t names_used;  /* names claimed (atomic fetch-add) */
	uint32_t exit;        /* a device exit() was seen */
	/* Live sessions, in the first generation: while pause is set the
	 * runtimes hold every launch before it goes in; inflight counts the
	 * launches going in, so 0 under pause means none is. */
	uint32_t pause;
	/* Written by the controller. */
	uint32_t snap_req;    /* bumped to ask every slot for a snapshot */
	uint32_t stop;        /* the controller is leaving: stop probing (ctl_pid) */
	/* The runtimes' messages (struct gpux_sess_msg[GPUX_SESS_MAX_MSGS]),
	 * which the controller prints on its own stderr. */
	uint64_t msgs_off;
	uint32_t msgs_used;   /* entries claimed (atomic fetch-add) */
	uint32_t msgs_lost;   /* messages with no entry left */
	/* The controller's pid (0: none to watch). Once that process is gone,
	 * or stop is set, a runtime turns its probes off (GPUX_SYM_OFF),
	 * stops running cuda: programs and publishes nothing more: the
	 * program goes on at its own speed. */
	uint32_t ctl_pid;
	/* Live sessions, in the first generation: processes whose runtime
	 * follows the generations (so the controller waits for them). */
	uint32_t runtimes;
	/* The probe module again, NUL-terminated, in the form that links
	 * with the helper library's relocatable cubin (PTX_LINK_LIBRARY_CUBIN,
	 * codegen/ptx_jit.h: helpers extern, no library appended); len 0:
	 * none, the runtime loads ptx_off's form. Once reserved words. */
	uint64_t link_ptx_off;
	uint64_t link_ptx_len;
	/* Live sessions (version 7): where in the file the next generation's
	 * segment starts (0: none yet), set (release) by the controller once
	 * that segment is complete. A runtime that moves on takes a final
	 * snapshot into its slots here (DONE), then bumps moved. */
	uint64_t next_off;
	/* Host programs (cuda:), version 3. */
	uint64_t hobj_off, hobj_len;  /* the BPF ELF; len 0: none */
	uint64_t hbind_off;           /* struct gpux_sess_hbind[nhbind] */
	uint32_t nhbind;
	uint32_t nhosts;              /* GPUX_SESS_MAX_HOSTS, 0 without hobj */
	uint64_t hosts_off, host_size;
	uint64_t dump_size;           /* bytes of a host region's map dump */
	uint32_t hosts_used;          /* regions claimed (atomic fetch-add) */
	uint32_t cev_mask;            /* cuda: events probed, bit per enum gpux_cev */
	/* Live sessions: processes that moved on to next_off's generation. */
	uint32_t moved;
	uint32_t inflight;
	/* Random, set by the controller with ctl_pid (version 9): what the
	 * environment's GPUX_SESSION must name for a process to join. */
	uint64_t token[2];
	/* Live sessions, in the first generation: per device ordinal, as
	 * the name table's entries are per kernel (atomic adds). */
	struct gpux_sess_gpu gpus[GPUX_SESS_MAX_GPUS];
	/* Set by a runtime once its process used CUDA (cuInit, a module, a
	 * launch), version 12: a run whose command never did is told that
	 * its gdev: and cuda: probes had nothing to fire on. */
	uint32_t cuda_seen;
};

/* The host object's maps in record-id order (the id a print, clear or
 * zero record names): the ELF symbol, and the device map whose table
 * backs it (GPUX_SESS_NO_MAP: none). A device map cuda: probes only
 * read is a mirror: the runtime refills the VM's table from each
 * snapshot of the process's contexts, merging shards and contexts the
 * way mirror says; otherwise (0) the VM's table is the one the device
 * reads (rt_push). */
struct gpux_sess_hbind {
	char sym[56];     /* "AT_t" */
	uint32_t dev_map;
	uint32_t mirror;  /* enum gpux_sess_merge, version 5 */
};
enum gpux_sess_merge {
	GPUX_MERGE_NONE, /* not a mirror */
	GPUX_MERGE_ADD,  /* count, sum, integers only ever added to */
	GPUX_MERGE_MIN,
	GPUX_MERGE_MAX,
	GPUX_MERGE_LAST, /* plain integers: the last context's, last shard's */
};

/* Folds src into dst, two values of one map (its values in two CPUs,
 * processes, shards or contexts) of size bytes, as how says: ADD adds
 * every 8-byte word (wrapping, as the device's atomics do), MIN and MAX
 * keep the lower or higher first word, LAST and NONE take src. flagged:
 * the host layout, where a min or max is followed by a word saying it
 * was set, and a side not set does not count. */
static inline void gpux_merge_values(enum gpux_sess_merge how, int flagged, unsigned char *dst,
				     const unsigned char *src, size_t size)
{
	int64_t a, x, fa = 1, fx = 1;
	switch (how) {
	case GPUX_MERGE_ADD:
		for (size_t k = 0; k + 8 <= size; k += 8) {
			uint64_t u, v;
			memcpy(&u, dst + k, 8);
			memcpy(&v, src + k, 8);
			u += v;
			memcpy(dst + k, &u, 8);
		}
		return;
	case GPUX_MERGE_MIN:
	case GPUX_MERGE_MAX:
		memcpy(&a, dst, 8);
		memcpy(&x, src, 8);
		if (flagged && size >= 16) {
			memcpy(&fa, dst + 8, 8);
			memcpy(&fx, src + 8, 8);
		}
		if (!fx)
			return;
		if (!fa || (how == GPUX_MERGE_MIN ? x < a : x > a))
			memcpy(dst, &x, 8);
		if (flagged && size >= 16) {
			int64_t set = 1;
			memcpy(dst + 8, &set, 8);
		}
		return;
	default:
		memcpy(dst, src, size);
	}
}
#define GPUX_SESS_NO_MAP 0xffffffffu

/* One traced process's userspace VM. Its event ring carries the host
 * object's records (printf, exit, time, print), each as struct
 * gpux_sess_hrec + the VM's record, 8-aligned, never straddling the end
 * (a filler record with kind GPUX_SESS_FILLER pads instead). The dump
 * holds the VM's maps that are not device maps, under seq (a seqlock):
 * per map in ELF order, u32 index, u32 count, then count (key, value)
 * pairs; a u32 index of UINT32_MAX ends it. */
struct gpux_sess_host {
	uint32_t state;       /* enum gpux_slot_state */
	uint32_t pid;
	uint32_t seq;
	uint32_t pad;
	uint64_t dumps;       /* dumps written */
	uint64_t ring_head, ring_tail, ring_drops;
	uint64_t failures;    /* program runs the VM stopped */
	uint64_t ring_off, dump_off;
	char error[128];      /* the first failure's message */
	/* memory actions of this process's cuda: probes, version 5 */
	struct gpux_act_count acts[GPUX_ACT_COUNT];
	/* cuda:kernel_end (once reserved words: 0 from older runtimes) */
	uint64_t kend_done;  /* completions whose programs ran */
	uint64_t kend_drops; /* launches not timed: GPUX_CEV_KEND_PENDING were pending */
	uint64_t kend_lost;  /* timed launches the driver could not say the end of */
	uint64_t reserved[1];
};

struct gpux_sess_hrec {
	uint32_t len;  /* this header + the record, rounded up to 8 */
	uint32_t kind; /* GPUX_SESS_FILLER, or the record's own length */
};

/* One probe site set: a JIT'ed probe function called at every site of
 * one kind (enum ptx_site_kind, runtime/ptx_rewrite.h) in the functions
 * whose PTX name matches glob ("" matches all). */
struct gpux_sess_probe {
	uint32_t site;
	uint32_t only; /* GPUX_SITE_* (abi/probe_site.h): for access sites the
			* instructions it takes (0: all), and what the runtime
			* may do with the probe */
	char glob[184];
	char func[64];
};

/* A device map as codegen laid it out (struct dev_map). area_off is the
 * offset of its area inside a slot. */
struct gpux_sess_map {
	uint32_t key_size, value_size, max_entries, agg;
	int64_t lhist_min, lhist_step;
	uint64_t area_off;
	uint64_t area_size;
	uint32_t shards;   /* whole tables, a power of two (0 means 1): see
			    * GPUX_MAP_SHARD_SHIFT in gpux_dev.h */
	uint32_t kind;     /* GPUX_MAP_HASH or GPUX_MAP_ARRAY (gpux_dev.h) */
	/* GPUX_SESS_ROWS_KERNELS: an array whose key never exceeds the
	 * kernel id, so no row at or past hdr.names_used is ever written
	 * and a snapshot copies only the rows below it (version 6). */
	uint32_t rows;
	/* Live sessions: 1 + the index of the previous generation's map
	 * this one continues (same name and layout): a runtime moving on
	 * starts it from that map's final snapshot. 0: starts empty. */
	uint32_t carry;
};

#define GPUX_SESS_ROWS_ALL 0u
#define GPUX_SESS_ROWS_KERNELS 1u

/* The runtime's snapshot of one device map, followed by its shard
 * tables (GPUX_SHARD_BYTES each: state, keys, values, line-aligned). */
struct gpux_sess_map_area {
	uint64_t drops;   /* the descriptor's drop counter */
	uint64_t pad[15]; /* the tables start on a 128-byte line */
};

/* Function names, for kernel ids: the id a rewritten function passes as
 * ctx.kernel_id is its index here. ready is set (release) after name. */
struct gpux_sess_name {
	uint32_t ready;
	uint32_t pid;
	char name[GPUX_SESS_NAME_LEN];
	/* Live sessions (version 8, the REPL's :top), in the first
	 * generation: the kernel's launches that went in and their threads;
	 * of those the runtime timed with events, how many and their GPU
	 * time (atomic adds by the runtime of pid). */
	uint64_t launches, threads;
	uint64_t timed, gpu_ns;
};

/* A runtime's message (a module it could not patch, a slot it could not
 * map): ready is set (release) after text, NUL-terminated. */
struct gpux_sess_msg {
	uint32_t ready;
	uint32_t pid;
	char text[GPUX_SESS_MSG_LEN];
};

enum gpux_slot_state {
	GPUX_SLOT_FREE = 0,
	GPUX_SLOT_LIVE = 1,  /* a context of a process is traced */
	GPUX_SLOT_DONE = 2,  /* its final snapshot is written */
};

/* Per (process, CUDA context). seq is a seqlock over the map areas:
 * odd while the runtime writes a snapshot. The event ring carries the
 * device's printf records verbatim (struct gpux_rec_hdr + payload,
 * GPUX_REC_ALIGN-aligned, never straddling the end: a record that would
 * is preceded by a filler record with fmt = GPUX_SESS_FILLER). head and
 * tail count bytes ever written and consumed. */
struct gpux_sess_slot {
	uint32_t state;
	uint32_t pid;
	uint32_t seq;
	uint32_t device;       /* CUDA device ordinal */
	uint64_t snapshots;    /* snapshots written */
	uint64_t ring_head;    /* written by the runtime */
	uint64_t ring_tail;    /* written by the controller */
	uint64_t ring_drops;   /* records lost: device ring full + this ring full */
	uint64_t modules;      /* modules patched */
	uint64_t ring_off;     /* from the slot's start */
	uint64_t reserved[7];
};

#define GPUX_SESS_FILLER 0xffffffffu

/* Where things are, from the offsets in the header and the map table. */
static inline struct gpux_sess_slot *gpux_sess_slot_at(struct gpux_sess_hdr *h, uint32_t i)
{
	return (struct gpux_sess_slot *)((char *)h + h->slots_off + (uint64_t)i * h->slot_size);
}
static inline struct gpux_sess_map *gpux_sess_maps(struct gpux_sess_hdr *h)
{
	return (struct gpux_sess_map *)((char *)h + h->maps_off);
}
static inline struct gpux_sess_probe *gpux_sess_probes(struct gpux_sess_hdr *h)
{
	return (struct gpux_sess_probe *)((char *)h + h->probes_off);
}
static inline struct gpux_sess_msg *gpux_sess_msgs(struct gpux_sess_hdr *h)
{
	return (struct gpux_sess_msg *)((char *)h + h->msgs_off);
}
static inline struct gpux_sess_name *gpux_sess_names(struct gpux_sess_hdr *h)
{
	return (struct gpux_sess_name *)((char *)h + h->names_off);
}
static inline struct gpux_sess_map_area *gpux_sess_area(struct gpux_sess_hdr *h,
							struct gpux_sess_slot *s, uint32_t map)
{
	return (struct gpux_sess_map_area *)((char *)s + gpux_sess_maps(h)[map].area_off);
}
static inline struct gpux_sess_host *gpux_sess_host_at(struct gpux_sess_hdr *h, uint32_t i)
{
	return (struct gpux_sess_host *)((char *)h + h->hosts_off + (uint64_t)i * h->host_size);
}
static inline struct gpux_sess_hbind *gpux_sess_hbinds(struct gpux_sess_hdr *h)
{
	return (struct gpux_sess_hbind *)((char *)h + h->hbind_off);
}
static inline unsigned char *gpux_sess_ring(struct gpux_sess_slot *s)
{
	return (unsigned char *)s + s->ring_off;
}
static inline uint32_t gpux_sess_shards(const struct gpux_sess_map *m)
{
	return m->shards ? m->shards : 1;
}
/* Shard k's table in an area, and its parts: state words, keys, values
 * (the device layout: GPUX_SHARD_* in gpux_dev.h). */
static inline unsigned char *gpux_area_table(struct gpux_sess_map_area *a,
					     const struct gpux_sess_map *m, uint32_t k)
{
	return (unsigned char *)(a + 1) +
	       (uint64_t)k * GPUX_SHARD_BYTES(m->max_entries, m->key_size, m->value_size);
}
static inline uint32_t *gpux_area_state(struct gpux_sess_map_area *a)
{
	return (uint32_t *)(a + 1);
}
static inline unsigned char *gpux_area_keys(struct gpux_sess_map_area *a,
					    const struct gpux_sess_map *m)
{
	return (unsigned char *)(a + 1) + GPUX_SHARD_KEYS(m->max_entries);
}
static inline unsigned char *gpux_area_values(struct gpux_sess_map_area *a,
					      const struct gpux_sess_map *m)
{
	return (unsigned char *)(a + 1) + GPUX_SHARD_VALUES(m->max_entries, m->key_size);
}
#endif
