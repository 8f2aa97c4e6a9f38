/* The SIMT verifier: decides whether a device probe's eBPF may run
 * warp-collectively inside someone else's CUDA kernel (docs/ARCHITECTURE.md,
 * "The device execution model"). It proves, for every path:
 *
 *   - control flow is warp-uniform, except if-conversion diamonds (a
 *     lane-varying branch over register moves that rejoins at once);
 *   - side-effect helpers run at warp-uniform points, map keys that one
 *     leader writes are uniform (aggregations group varying keys);
 *   - no barriers, grid sync or atomics; loops are bounded;
 *   - every memory access is in bounds (context, stack, map values);
 *   - the hook's budgets hold (instructions, helper calls, map ops).
 *
 * Rejections are diagnostics at prog->spans[insn] (no span when the
 * program has none); the first error stops the search. */
#ifndef GPUX_SIMT_VERIFIER_H
#define GPUX_SIMT_VERIFIER_H

#include <stdio.h>

#include "device_abi.h"
#include "diag.h"

struct simt_stats {
	int longest_path; /* instructions on the longest path */
	int helper_calls; /* most helper calls on one path */
	int map_ops;      /* most map operations on one path */
	int states;       /* paths started: the entry and one per fork */
	int pruned;       /* paths cut short by an equivalent explored state */
	long processed;   /* instructions interpreted in all */
};

/* 0 if prog is accepted, -1 with diagnostics if not. stats may be NULL. */
int simt_verify(const struct dev_prog *prog, struct diags *diags,
		struct simt_stats *stats);

/* The same, printing the verifier log to log (`-d verifier`): each
 * instruction as it is interpreted and the abstract values it changed. */
int simt_verify_log(const struct dev_prog *prog, struct diags *diags,
		    struct simt_stats *stats, FILE *log);

#endif
