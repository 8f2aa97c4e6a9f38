/* The contract of device probe programs: what r1 points to, the helper
 * calls and their rules, the builtin ids. Codegen emits against it, the
 * SIMT verifier checks against it, the PTX JIT and the device runtime
 * implement it. One table per concept, so the three cannot drift. */
#ifndef GPUX_DEVICE_ABI_H
#define GPUX_DEVICE_ABI_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf_insn.h"
#include "catalog.h"
#include "probe_site.h" /* r1 on entry: struct gpux_dev_ctx */
#include "source.h"

struct dev_ctx_field {
	const char *name;
	uint16_t off, size;
	enum unif unif;
};

/* Builtins are read with HELPER_BUILTIN(id); the JIT inlines them as
 * special-register reads. */
enum dev_builtin {
	DB_SM, DB_WARP, DB_LANE,
	DB_TID_X, DB_TID_Y, DB_TID_Z,
	DB_CTAID_X, DB_CTAID_Y, DB_CTAID_Z,
	DB_NTID_X, DB_NTID_Y, DB_NTID_Z,
	DB_NCTAID_X, DB_NCTAID_Y, DB_NCTAID_Z,
	DB_GTID, DB_NSECS, DB_CYCLES, DB_KERNEL_ID,
	DB_ACTIVEMASK, DB_ACTIVELANES, DB_GPU,
	DB_COUNT
};

struct dev_builtin_info {
	enum dev_builtin id;
	const char *name; /* as the language spells it: "threadIdx.x" */
	enum unif unif;
};

/* Helper ids (the imm of a call). */
enum dev_helper {
	DH_BUILTIN = 1,   /* (id) -> value */
	DH_MAP_LOOKUP,    /* (map, key*) -> value* or 0 */
	DH_MAP_UPDATE,    /* (map, key*, value*) */
	DH_MAP_DELETE,    /* (map, key*) */
	DH_MAP_ADD,       /* (map, key*, delta): @m[k] += d, keys grouped */
	DH_AGG_COUNT,     /* (map, key*) */
	DH_AGG_SUM,       /* (map, key*, value) */
	DH_AGG_MIN,
	DH_AGG_MAX,
	DH_AGG_AVG,
	DH_AGG_STATS,
	DH_AGG_HIST,      /* (map, key*, value) */
	DH_AGG_LHIST,     /* (map, key*, value); bounds in the map */
	DH_PRINTF,        /* (fmt id, args*, size) */
	DH_EXIT,          /* () */
	DH_LANE_FILTER,   /* (cond) -> lanes left; see below */
	DH_BAR_SYNC,      /* reserved: always rejected (DHF_FORBIDDEN) */
	DH_GRID_SYNC,     /* reserved: always rejected (DHF_FORBIDDEN) */
	DH_PREFETCH,      /* (addr): an L2 prefetch hint, see below */
	DH_COUNT
};

/* How codegen lowers a predicate: control flow must stay warp-uniform, so
 * a lane-varying `/cond/` cannot be a branch around the action. Codegen
 * computes cond into a register (a varying condition through an
 * if-conversion diamond: `r1 = 1; if rX > 4096 goto +1; r1 = 0`) and
 * calls lane_filter(r1). Lanes where it is 0 leave the program there, as
 * if by `r0 = 0; exit`; the others go on with uniform control flow and a
 * smaller active mask, so later helpers (count() = popc(active), leader
 * election) see only them. It returns the number of lanes left (uniform),
 * so codegen may skip the rest with a uniform `if r0 == 0` test. It has no
 * side effect on maps or output and may be called more than once. */

/* prefetch(addr) is `prefetch.global.L2 [addr]` issued once per warp by
 * the lowest active lane, at that lane's addr: the argument may vary, the
 * other lanes' values are ignored. A prefetch of an address nothing maps
 * does nothing (no fault), so any address is allowed. It changes what the
 * probed kernel's memory system does, so it counts as a side effect
 * (uniform program points only; a probe holding one is spliced in). The
 * JIT inlines it. */

/* What a helper argument must be. */
enum dev_arg {
	DA_NONE,
	DA_IMM,     /* a known constant (builtin id, format id) */
	DA_MAP,     /* a map reference loaded with lddw (src = MAP_IDX) */
	DA_KEY,     /* pointer to the stack, key_size bytes initialised */
	DA_VALUE,   /* pointer to the stack, value_size bytes initialised */
	DA_STACK,   /* pointer to the stack, size in the next argument */
	DA_SIZE,    /* a constant size for the preceding DA_STACK */
	DA_SCALAR,  /* any number */
};

enum dev_helper_flags {
	DHF_SIDE_EFFECT = 1 << 0, /* only at warp-uniform program points */
	DHF_GROUPS_KEY = 1 << 1,  /* a lane-varying key is grouped */
	DHF_MAP_OP = 1 << 2,      /* counts against the map-op budget */
	DHF_RET_MAP_VALUE = 1 << 3,
	DHF_FORBIDDEN = 1 << 4,   /* named for messages; always rejected */
};

struct dev_helper_info {
	enum dev_helper id;
	const char *name;
	enum dev_arg args[5];
	unsigned flags;
};

const struct dev_ctx_field *dev_ctx_fields(int *n);
const struct dev_builtin_info *dev_builtin_info(enum dev_builtin id);
const struct dev_helper_info *dev_helper_info(int id);
const struct dev_helper_info *dev_helper_by_name(const char *name);
struct dev_prog;
/* Whether running prog can change anything: a call of a helper with a
 * side effect (map updates, printf, exit). A program without one (an
 * empty probe, a predicate alone) need not be spliced in at all: a
 * probe that does nothing costs nothing. */
bool dev_prog_has_effects(const struct dev_prog *prog);
/* Why a DHF_FORBIDDEN helper is rejected; NULL for the others. */
const char *dev_helper_forbidden_why(int id);

/* A device map as the program sees it. */
struct dev_map {
	const char *name;
	uint32_t key_size, value_size;
	uint32_t max_entries;
	/* Filled by codegen (dev_lower.h); the assembler leaves them 0. */
	int agg;             /* enum agg_kind of the values; AGG_NONE: plain */
	int64_t lhist_min;   /* lhist(): buckets below min, [min, max) by */
	int64_t lhist_max;   /* step, and at or above max; value_size is */
	int64_t lhist_step;  /* (ceil((max - min) / step) + 2) * 8 */
	bool array;          /* GPUX_MAP_ARRAY: the one key is the slot, below
			      * max_entries (dev_facts.c) */
	bool device_reads_only; /* no device probe changes it (dev_facts.c):
				 * only launches write its device table */
	bool kernel_rows;    /* an array whose key never exceeds the kernel
			      * id: rows past the ids in use stay zero */
	bool lane_keys;      /* an array whose every device key differs from
			      * lane to lane (dev_facts.c): no warp vote */
	bool warp_keys;      /* an array whose every device key is the same in
			      * every lane (sema's uniformity): no warp vote */
};

/* Per-hook budgets (docs/ARCHITECTURE.md, "The device execution model"). */
struct dev_budget {
	int insns;       /* instructions executed on the longest path */
	int helper_calls;
	int map_ops;
};

#define DEV_BUDGET_DEFAULT ((struct dev_budget){ 4096, 64, 16 })

/* One device probe program as the verifier and the JIT take it. */
struct dev_prog {
	const char *name;          /* "gdev:access" */
	const struct bpf_insn *insns;
	int ninsns;
	const struct span *spans;  /* per instruction; may be NULL */
	const struct dev_map *maps;
	int nmaps;
	struct dev_budget budget;
};

#endif
