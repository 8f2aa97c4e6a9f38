/* Contract between host lowering and the runtime: what cuda: probes ask
 * of the CUDA driver (memory actions) and of the runtime (allocations).
 *   Writers: codegen/host_output.c emits each as a call of the helper id
 *   below (ids the kernel does not have: these programs run only in the
 *   runtime's VM); lang/catalog.c names the advice hints by these values.
 *   Readers: the runtime in the traced process (runtime/rt_actions.c)
 *   serves the calls through the VM's extension hook (vm/bpf_vm.h) and
 *   counts them in its host region (abi/session.h, struct gpux_act_count);
 *   the controller prints the counts at exit. */
#ifndef GPUX_CUDA_ACTIONS_H
#define GPUX_CUDA_ACTIONS_H

#include <stdint.h>

/* Helper ids: far above the kernel's (which end below 0x1000). */
enum gpux_helper {
	GPUX_H_FIRST = 0x47500,
	GPUX_H_PREFETCH = GPUX_H_FIRST, /* (ptr, bytes): to the current GPU */
	GPUX_H_EVICT,                   /* (ptr, bytes): to host memory */
	GPUX_H_ADVISE,                  /* (ptr, bytes, enum gpux_advise) */
	GPUX_H_ALLOC_BASE,              /* (ptr): its allocation's start, or 0 */
	GPUX_H_ALLOC_SIZE,              /* (ptr): its allocation's size, or 0 */
	GPUX_H_GPU_FREE,                /* (): free bytes of the current GPU */
	GPUX_H_GPU,                     /* (): the current context's device ordinal */
	GPUX_H_END
};

/* advise()'s hints: a cuMemAdvise advice and the location it names. */
enum gpux_advise {
	GPUX_ADVISE_READ_MOSTLY,
	GPUX_ADVISE_UNSET_READ_MOSTLY,
	GPUX_ADVISE_PREFERRED_GPU,
	GPUX_ADVISE_PREFERRED_CPU,
	GPUX_ADVISE_UNSET_PREFERRED,
	GPUX_ADVISE_ACCESSED_BY_GPU,
	GPUX_ADVISE_ACCESSED_BY_CPU,
	GPUX_ADVISE_UNSET_ACCESSED_BY_GPU,
	GPUX_ADVISE_UNSET_ACCESSED_BY_CPU,
	GPUX_ADVISE_COUNT
};

/* The actions, as counted. */
enum gpux_act {
	GPUX_ACT_PREFETCH,
	GPUX_ACT_EVICT,
	GPUX_ACT_ADVISE,
	GPUX_ACT_COUNT
};

#define GPUX_ACT_NAMES { "prefetch", "evict", "advise" }

/* Per action and process: calls that reached the driver, their bytes,
 * and the counted no-ops (memory that is not managed, a zero length, a
 * stream being captured into a graph, the driver's refusal with its
 * last status). */
struct gpux_act_count {
	uint64_t done;
	uint64_t bytes;
	uint64_t unmanaged;
	uint64_t refused;
	uint64_t ns;       /* time spent in the driver calls */
	int32_t last_status; /* the driver's CUresult of the last refusal */
	uint32_t captured; /* skipped: the event's stream was capturing */
};

#endif
