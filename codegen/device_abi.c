#include "device_abi.h"

#include <stddef.h>
#include <string.h>

#define CTX_FIELD(n, u) { #n, offsetof(struct gpux_dev_ctx, n), \
			  sizeof(((struct gpux_dev_ctx *)0)->n), u }

static const struct dev_ctx_field ctx_fields[] = {
	CTX_FIELD(addr, UNIF_VARYING),
	CTX_FIELD(size, UNIF_UNIFORM),
	CTX_FIELD(store, UNIF_UNIFORM),
	CTX_FIELD(atomic, UNIF_UNIFORM),
	CTX_FIELD(kernel_id, UNIF_UNIFORM),
	CTX_FIELD(site_id, UNIF_UNIFORM),
};

static const struct dev_builtin_info builtins[DB_COUNT] = {
	{ DB_SM, "sm", UNIF_UNIFORM },
	{ DB_WARP, "warp", UNIF_UNIFORM },
	{ DB_LANE, "lane", UNIF_VARYING },
	{ DB_TID_X, "threadIdx.x", UNIF_VARYING },
	{ DB_TID_Y, "threadIdx.y", UNIF_VARYING },
	{ DB_TID_Z, "threadIdx.z", UNIF_VARYING },
	{ DB_CTAID_X, "blockIdx.x", UNIF_UNIFORM },
	{ DB_CTAID_Y, "blockIdx.y", UNIF_UNIFORM },
	{ DB_CTAID_Z, "blockIdx.z", UNIF_UNIFORM },
	{ DB_NTID_X, "blockDim.x", UNIF_UNIFORM },
	{ DB_NTID_Y, "blockDim.y", UNIF_UNIFORM },
	{ DB_NTID_Z, "blockDim.z", UNIF_UNIFORM },
	{ DB_NCTAID_X, "gridDim.x", UNIF_UNIFORM },
	{ DB_NCTAID_Y, "gridDim.y", UNIF_UNIFORM },
	{ DB_NCTAID_Z, "gridDim.z", UNIF_UNIFORM },
	{ DB_GTID, "gtid", UNIF_VARYING },
	{ DB_NSECS, "nsecs", UNIF_UNIFORM },
	{ DB_CYCLES, "cycles", UNIF_UNIFORM },
	{ DB_KERNEL_ID, "kernel", UNIF_UNIFORM },
	{ DB_ACTIVEMASK, "activemask", UNIF_UNIFORM },
	{ DB_ACTIVELANES, "activelanes", UNIF_UNIFORM },
	{ DB_GPU, "gpu", UNIF_UNIFORM },
};

#define SE DHF_SIDE_EFFECT
#define GK DHF_GROUPS_KEY
#define MO DHF_MAP_OP

static const struct dev_helper_info helpers[] = {
	{ DH_BUILTIN, "builtin", { DA_IMM }, 0 },
	{ DH_MAP_LOOKUP, "map_lookup", { DA_MAP, DA_KEY }, MO | DHF_RET_MAP_VALUE },
	{ DH_MAP_UPDATE, "map_update", { DA_MAP, DA_KEY, DA_VALUE }, SE | MO },
	{ DH_MAP_DELETE, "map_delete", { DA_MAP, DA_KEY }, SE | MO },
	{ DH_MAP_ADD, "map_add", { DA_MAP, DA_KEY, DA_SCALAR }, SE | GK | MO },
	{ DH_AGG_COUNT, "agg_count", { DA_MAP, DA_KEY }, SE | GK | MO },
	{ DH_AGG_SUM, "agg_sum", { DA_MAP, DA_KEY, DA_SCALAR }, SE | GK | MO },
	{ DH_AGG_MIN, "agg_min", { DA_MAP, DA_KEY, DA_SCALAR }, SE | GK | MO },
	{ DH_AGG_MAX, "agg_max", { DA_MAP, DA_KEY, DA_SCALAR }, SE | GK | MO },
	{ DH_AGG_AVG, "agg_avg", { DA_MAP, DA_KEY, DA_SCALAR }, SE | GK | MO },
	{ DH_AGG_STATS, "agg_stats", { DA_MAP, DA_KEY, DA_SCALAR }, SE | GK | MO },
	{ DH_AGG_HIST, "agg_hist", { DA_MAP, DA_KEY, DA_SCALAR }, SE | GK | MO },
	{ DH_AGG_LHIST, "agg_lhist", { DA_MAP, DA_KEY, DA_SCALAR }, SE | GK | MO },
	{ DH_PRINTF, "printf", { DA_IMM, DA_STACK, DA_SIZE }, SE },
	{ DH_EXIT, "exit", { DA_NONE }, SE },
	{ DH_LANE_FILTER, "lane_filter", { DA_SCALAR }, 0 },
	{ DH_BAR_SYNC, "bar_sync", { DA_NONE }, DHF_FORBIDDEN },
	{ DH_GRID_SYNC, "grid_sync", { DA_NONE }, DHF_FORBIDDEN },
	{ DH_PREFETCH, "prefetch", { DA_SCALAR }, SE },
};

/* The probe runs inside someone else's kernel, at sites that only some
 * threads reach: any wait for other threads can deadlock it. */
static const struct { enum dev_helper id; const char *why; } forbidden[] = {
	{ DH_BAR_SYNC, "barriers are not allowed in device probes: bar.sync "
		       "waits for every thread of the block, and threads that "
		       "do not reach this probe would never arrive" },
	{ DH_GRID_SYNC, "grid-wide synchronisation is not allowed in device "
			"probes: it waits for every block of the grid, which "
			"the probed kernel never promised to reach" },
};

const struct dev_ctx_field *dev_ctx_fields(int *n)
{
	*n = (int)(sizeof(ctx_fields) / sizeof(ctx_fields[0]));
	return ctx_fields;
}

const struct dev_builtin_info *dev_builtin_info(enum dev_builtin id)
{
	return (unsigned)id < DB_COUNT ? &builtins[id] : NULL;
}

const struct dev_helper_info *dev_helper_info(int id)
{
	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		if ((int)helpers[i].id == id)
			return &helpers[i];
	return NULL;
}

const struct dev_helper_info *dev_helper_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		if (!strcmp(helpers[i].name, name))
			return &helpers[i];
	return NULL;
}

const char *dev_helper_forbidden_why(int id)
{
	for (size_t i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++)
		if ((int)forbidden[i].id == id)
			return forbidden[i].why;
	return NULL;
}

bool dev_prog_has_effects(const struct dev_prog *prog)
{
	for (int i = 0; i < prog->ninsns; i++) {
		const struct bpf_insn *in = &prog->insns[i];
		if (in->code != (BPF_JMP | BPF_CALL))
			continue;
		const struct dev_helper_info *h = dev_helper_info(in->imm);
		if (!h || (h->flags & DHF_SIDE_EFFECT))
			return true;
	}
	return false;
}
