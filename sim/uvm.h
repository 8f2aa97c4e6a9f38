/* A model of UVM memory management on one GPU (nvidia-uvm's defaults,
 * sim/costs.h): VA blocks of 512 pages, each backed on the GPU by one
 * 2 MiB root chunk; faults serviced in batches; the default prefetcher
 * (the bitmap tree: the largest aligned subregion around a faulting
 * page whose populated share passes the threshold); the default
 * eviction (root chunks on a used list, least recently used at its
 * head, evicted whole, their pages copied back to the host); the
 * driver's thrashing detection (sim/thrashing.h: pages moving between
 * the CPU and the GPU get throttled, then pinned in host memory and
 * mapped remotely by the GPU).
 *
 * A policy replaces or amends each decision through the hooks of
 * struct uvm_policy, which may call uvm_move_head/tail and
 * uvm_set_prefetch_region as gpu_ext's kfuncs do. The model never
 * trusts a policy: a bad chunk or region is counted in policy_errors
 * and ignored, and the default takes over. */
#ifndef GPUX_SIM_UVM_H
#define GPUX_SIM_UVM_H

#include <stdbool.h>
#include <stdint.h>

struct uvm;

enum uvm_decision { UVM_DEFAULT = 0, UVM_BYPASS = 1, UVM_ENTER_LOOP = 2 };
enum uvm_list { UVM_LIST_NONE, UVM_LIST_USED, UVM_LIST_UNUSED };

struct uvm_stats {
	uint64_t accesses;         /* page accesses of the workload */
	uint64_t faults;           /* distinct page faults serviced */
	uint64_t batches;          /* fault batches */
	uint64_t htod_bytes, dtoh_bytes;
	uint64_t prefetched_pages; /* migrated without faulting */
	uint64_t evictions;        /* root chunks evicted */
	uint64_t refaults;         /* faults on pages evicted before: thrashing */
	uint64_t hook_calls;       /* policy programs run */
	uint64_t policy_errors;    /* bad kfunc arguments, failed programs */
	uint64_t time_ps;          /* the cost model's estimate, picoseconds */
	/* thrashing detection (uvm_perf_thrashing.c; CUPTI's counters) */
	uint64_t thrashing;           /* pages found thrashing */
	uint64_t thrashing_throttles; /* faults throttled */
	uint64_t thrashing_pins;      /* pages pinned */
	uint64_t remote_maps;         /* GPU faults served by a remote mapping */
	uint64_t cpu_faults;          /* CPU touches of GPU-resident pages */
};

/* nvidia-uvm's module parameters the model follows, by their driver
 * names without uvm_perf_ (defaults and meaning: sim/costs.h). */
struct uvm_params {
	uint32_t thrashing_enable;        /* 0 or 1 */
	uint32_t thrashing_threshold;     /* 1..7 */
	uint32_t thrashing_pin_threshold; /* 1..255 */
	uint32_t thrashing_lapse_usec;    /* >= 1 */
	uint32_t thrashing_nap;           /* 1..100, x lapse */
	uint32_t thrashing_epoch;         /* >= 1, x lapse */
	uint32_t thrashing_pin;           /* x lapse; 0: pinned for good */
	uint32_t thrashing_max_resets;
};

/* The prefetch hook's view of one faulting page. */
struct uvm_prefetch_call {
	uint32_t page_index;           /* within its VA block */
	uint32_t max_first, max_outer; /* pages the block may prefetch */
	uint32_t tenant;
	const uint64_t *populated;     /* 512-bit: resident or faulting now */
	uint64_t block;                /* the VA block: va >> 21 */
};

/* One level of the default prefetcher's walk (ENTER_LOOP). */
struct uvm_iter_call {
	uint32_t level;                /* 0: one page .. 9: the block */
	uint32_t first, outer;         /* the subregion at this level */
	uint32_t counter;              /* its populated pages */
	uint32_t tenant;
};

struct uvm_policy {
	void *arg;
	/* NULL: the default. A hook's decision is one of enum uvm_decision. */
	int (*activate)(void *arg, struct uvm *u, uint32_t chunk, uint32_t tenant);
	int (*access)(void *arg, struct uvm *u, uint32_t chunk, uint32_t tenant);
	void (*evict_prepare)(void *arg, struct uvm *u, uint32_t tenant);
	int (*prefetch)(void *arg, struct uvm *u, const struct uvm_prefetch_call *c);
	/* ENTER_LOOP: called per level; a policy that picks the level calls
	 * uvm_set_prefetch_region and returns BYPASS to stop the walk. */
	int (*prefetch_iter)(void *arg, struct uvm *u, const struct uvm_iter_call *c);
	/* After each batch, with the model's clock (interval probes). */
	void (*tick)(void *arg, struct uvm *u);
};

/* gpu_bytes of GPU memory for managed data, rounded down to whole root
 * chunks (at least 2). NULL on allocation failure. policy may be NULL. */
struct uvm *uvm_new(uint64_t gpu_bytes, const struct uvm_policy *policy);
void uvm_free(struct uvm *u);
/* The driver's defaults. */
void uvm_params_default(struct uvm_params *p);
/* Whether every value is in the range the driver accepts. */
bool uvm_params_valid(const struct uvm_params *p);
/* Before the first event: 0, or -1 (nothing set) when not valid. */
int uvm_set_params(struct uvm *u, const struct uvm_params *p);

/* The workload's events, in order. */
void uvm_alloc(struct uvm *u, uint32_t tenant, uint64_t va, uint64_t bytes);
void uvm_release(struct uvm *u, uint32_t tenant, uint64_t va, uint64_t bytes);
void uvm_access(struct uvm *u, uint32_t tenant, uint64_t va);
/* The CPU touches the page at va: a page resident on the GPU migrates
 * back (the GPU's pending faults are serviced first). */
void uvm_cpu_access(struct uvm *u, uint32_t tenant, uint64_t va);
/* A kernel ends: its pending faults are serviced. */
void uvm_launch_end(struct uvm *u);

const struct uvm_stats *uvm_stats(const struct uvm *u);
uint64_t uvm_now_ns(const struct uvm *u);
uint32_t uvm_chunk_count(const struct uvm *u);

/* The kfuncs. Chunks are 0..uvm_chunk_count()-1. false: refused
 * (counted in policy_errors). */
bool uvm_move_head(struct uvm *u, uint32_t chunk);
bool uvm_move_tail(struct uvm *u, uint32_t chunk);
/* Only inside the prefetch and prefetch_iter hooks. */
bool uvm_set_prefetch_region(struct uvm *u, uint32_t first, uint32_t outer);
void uvm_policy_error(struct uvm *u);

/* For tests: the chunks of a list from head (evicted first) to tail;
 * how many were written (at most max). */
int uvm_list_chunks(const struct uvm *u, enum uvm_list l, uint32_t *out, int max);
/* The VA block (va >> 21) a chunk backs, or UINT64_MAX when free. */
uint64_t uvm_chunk_block(const struct uvm *u, uint32_t chunk);
/* The tenant whose block it backs (0 when free). */
uint32_t uvm_chunk_tenant(const struct uvm *u, uint32_t chunk);

#endif
