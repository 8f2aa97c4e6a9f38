/* Contract between the runtime and host programs: the contexts of cuda:
 * events.
 *   Writer: the runtime in the traced process (runtime/rt_api.c,
 *   rt_launch_ev.c) builds one per CUDA call and runs the event's
 *   programs on it; rt_kernel_end.c builds one per launch once the GPU
 *   has run it.
 *   Readers: the programs host lowering compiles (codegen/host_probe.c
 *   reads by this layout: the catalog's fields in
 *   order, each 8-aligned; strings inline as char[64]; dim3 as three u32
 *   in 16 bytes). The controller (cli/) sets the session's cev_mask by
 *   enum gpux_cev.
 * A hidden field may follow the catalog's fields: the codegen reads it
 * under the name given in the comment. tests/unit checks these offsets
 * against the catalog. */
#ifndef GPUX_CUDA_EVENTS_H
#define GPUX_CUDA_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#define GPUX_CEV_STR 64 /* HOST_STR_MAX */
#define GPUX_CEV_ARGS 12 /* cuda:launch's arg0.. */
/* Launches cuda:kernel_end waits on at once, per process: more are not
 * timed (counted in the host region: abi/session.h) */
#define GPUX_CEV_KEND_PENDING 16384

enum gpux_cev {
	GPUX_CEV_LAUNCH,
	GPUX_CEV_MALLOC,
	GPUX_CEV_FREE,
	GPUX_CEV_MEMCPY,
	GPUX_CEV_SYNC,
	GPUX_CEV_MODULE_LOAD,
	GPUX_CEV_KERNEL_END,
	GPUX_CEV_GRAPH_LAUNCH,
	GPUX_CEV_COUNT
};

/* The catalog's event names, by enum gpux_cev. */
#define GPUX_CEV_NAMES { "launch", "malloc", "free", "memcpy", "sync", "module_load", \
			"kernel_end", "graph_launch" }

struct gpux_cev_launch {
	char kernel[GPUX_CEV_STR]; /* demangled, as the name table has it */
	uint32_t grid[4];
	uint32_t block[4];
	uint64_t shmem;
	uint64_t stream;
	uint64_t nargs;     /* the kernel's parameters (0 when the driver cannot say) */
	uint64_t args[GPUX_CEV_ARGS]; /* each read with its own size, zero-extended;
				       * 0 past nargs */
	uint64_t kernel_id; /* hidden: the name table's id ("kernel" in device-layout keys) */
};

struct gpux_cev_malloc {
	uint64_t ptr;
	uint64_t bytes;
	uint64_t managed;
};

struct gpux_cev_free {
	uint64_t ptr;
};

struct gpux_cev_memcpy {
	uint64_t dst;
	uint64_t src;
	uint64_t bytes;
	char kind[GPUX_CEV_STR]; /* "HtoD", "DtoH", "DtoD", "HtoH", "default" */
	uint64_t stream;
	uint64_t async;
};

struct gpux_cev_sync {
	uint64_t stream; /* 0: the whole context (cuCtxSynchronize) */
};

struct gpux_cev_module_load {
	uint64_t module;
	uint64_t bytes;
	uint64_t ptx;
};

/* A launch the GPU has run (start and end from CUDA events around it,
 * in CLOCK_MONOTONIC ns: the clock nsecs reads). */
struct gpux_cev_kernel_end {
	char kernel[GPUX_CEV_STR]; /* as cuda:launch has it */
	uint64_t stream;
	uint32_t grid[4];
	uint32_t block[4];
	uint64_t shmem;
	uint64_t start;
	uint64_t end;
	uint64_t duration;  /* end - start */
	uint64_t kernel_id; /* hidden, as cuda:launch's */
};

/* An executable graph launched (cuGraphLaunch): one per replay. Its
 * kernels' completions are cuda:kernel_end events when CUPTI times them
 * (runtime/rt_cupti.c). */
struct gpux_cev_graph_launch {
	uint64_t graph;   /* the CUgraphExec */
	uint64_t stream;
	uint64_t nodes;   /* of the graph it was instantiated from (0: not seen) */
	uint64_t kernels; /* of those, kernel nodes */
};

/* The size of event ev's context, 0 for no event. */
static inline size_t gpux_cev_size(unsigned ev)
{
	static const size_t sizes[GPUX_CEV_COUNT] = {
		[GPUX_CEV_LAUNCH] = sizeof(struct gpux_cev_launch),
		[GPUX_CEV_MALLOC] = sizeof(struct gpux_cev_malloc),
		[GPUX_CEV_FREE] = sizeof(struct gpux_cev_free),
		[GPUX_CEV_MEMCPY] = sizeof(struct gpux_cev_memcpy),
		[GPUX_CEV_SYNC] = sizeof(struct gpux_cev_sync),
		[GPUX_CEV_MODULE_LOAD] = sizeof(struct gpux_cev_module_load),
		[GPUX_CEV_KERNEL_END] = sizeof(struct gpux_cev_kernel_end),
		[GPUX_CEV_GRAPH_LAUNCH] = sizeof(struct gpux_cev_graph_launch),
	};
	return ev < GPUX_CEV_COUNT ? sizes[ev] : 0;
}

#endif
