/* cuda: the CUDA API calls of the traced program, seen by the runtime
 * preloaded into it and run by its VM (abi/cuda_events.h). */
#include "host_sec.h"
#include "provider.h"

/* they act on memory through the driver */
#define MEM_ACTS (ACTION_BIT(ACT_PREFETCH) | ACTION_BIT(ACT_EVICT) | ACTION_BIT(ACT_ADVISE))

extern const struct provider_unit cuda_unit;

static const struct provider providers[] = {
	{ &cuda_unit, "cuda", NULL, PLACE_HOST, RUNNER_TARGET, SYN_EVENT,
	  "CUDA API calls, seen by the runtime preloaded into the program", true,
	  ATTACH_VM, false },
};

static const struct field cuda_launch_fields[] = {
	{ "kernel", TYPE_STR, UNIF_UNIFORM, "name of the launched kernel" },
	{ "grid", TYPE_DIM3, UNIF_UNIFORM, "grid dimensions, in blocks" },
	{ "block", TYPE_DIM3, UNIF_UNIFORM, "block dimensions, in threads" },
	{ "shmem", TYPE_U32, UNIF_UNIFORM, "dynamic shared memory, bytes" },
	{ "stream", TYPE_U64, UNIF_UNIFORM, "stream handle (0: default)" },
	{ "nargs", TYPE_U64, UNIF_UNIFORM,
	  "the kernel's parameter count (from the driver; 0 when it cannot say)" },
	{ "arg0", TYPE_U64, UNIF_UNIFORM, "the kernel's parameter 0 (its bytes, zero-extended; 0 past nargs)" },
	{ "arg1", TYPE_U64, UNIF_UNIFORM, "the kernel's parameter 1 (its bytes, zero-extended; 0 past nargs)" },
	{ "arg2", TYPE_U64, UNIF_UNIFORM, "the kernel's parameter 2 (its bytes, zero-extended; 0 past nargs)" },
	{ "arg3", TYPE_U64, UNIF_UNIFORM, "the kernel's parameter 3 (its bytes, zero-extended; 0 past nargs)" },
	{ "arg4", TYPE_U64, UNIF_UNIFORM, "the kernel's parameter 4 (its bytes, zero-extended; 0 past nargs)" },
	{ "arg5", TYPE_U64, UNIF_UNIFORM, "the kernel's parameter 5 (its bytes, zero-extended; 0 past nargs)" },
	{ "arg6", TYPE_U64, UNIF_UNIFORM, "the kernel's parameter 6 (its bytes, zero-extended; 0 past nargs)" },
	{ "arg7", TYPE_U64, UNIF_UNIFORM, "the kernel's parameter 7 (its bytes, zero-extended; 0 past nargs)" },
	{ "arg8", TYPE_U64, UNIF_UNIFORM, "the kernel's parameter 8 (its bytes, zero-extended; 0 past nargs)" },
	{ "arg9", TYPE_U64, UNIF_UNIFORM, "the kernel's parameter 9 (its bytes, zero-extended; 0 past nargs)" },
	{ "arg10", TYPE_U64, UNIF_UNIFORM, "the kernel's parameter 10 (its bytes, zero-extended; 0 past nargs)" },
	{ "arg11", TYPE_U64, UNIF_UNIFORM, "the kernel's parameter 11 (its bytes, zero-extended; 0 past nargs)" },
	FIELDS_END,
};

static const struct field cuda_malloc_fields[] = {
	{ "ptr", TYPE_U64, UNIF_UNIFORM, "device address returned" },
	{ "bytes", TYPE_U64, UNIF_UNIFORM, "size requested" },
	{ "managed", TYPE_INT(8, false), UNIF_UNIFORM,
	  "1 for managed (UVM) memory" },
	FIELDS_END,
};

static const struct field cuda_free_fields[] = {
	{ "ptr", TYPE_U64, UNIF_UNIFORM, "device address freed" },
	FIELDS_END,
};

static const struct field cuda_memcpy_fields[] = {
	{ "dst", TYPE_U64, UNIF_UNIFORM, "destination address" },
	{ "src", TYPE_U64, UNIF_UNIFORM, "source address" },
	{ "bytes", TYPE_U64, UNIF_UNIFORM, "bytes copied" },
	{ "kind", TYPE_STR, UNIF_UNIFORM,
	  "\"HtoD\", \"DtoH\", \"DtoD\", \"HtoH\" or \"default\"" },
	{ "stream", TYPE_U64, UNIF_UNIFORM, "stream handle (0: default)" },
	{ "async", TYPE_INT(8, false), UNIF_UNIFORM,
	  "1 for cudaMemcpyAsync and friends" },
	FIELDS_END,
};

static const struct field cuda_sync_fields[] = {
	{ "stream", TYPE_U64, UNIF_UNIFORM,
	  "stream synchronized (0: device-wide sync)" },
	FIELDS_END,
};

static const struct field cuda_graph_fields[] = {
	{ "graph", TYPE_U64, UNIF_UNIFORM, "the executable graph (CUgraphExec)" },
	{ "stream", TYPE_U64, UNIF_UNIFORM, "stream handle (0: default)" },
	{ "nodes", TYPE_U64, UNIF_UNIFORM,
	  "nodes of the graph it was instantiated from (0: instantiated before gpux came)" },
	{ "kernels", TYPE_U64, UNIF_UNIFORM, "of those, kernel nodes" },
	FIELDS_END,
};

static const struct field cuda_module_fields[] = {
	{ "module", TYPE_U64, UNIF_UNIFORM, "module handle" },
	{ "bytes", TYPE_U64, UNIF_UNIFORM, "image size" },
	{ "ptx", TYPE_INT(8, false), UNIF_UNIFORM,
	  "1 if the image carries PTX" },
	FIELDS_END,
};

static const struct field cuda_kend_fields[] = {
	{ "kernel", TYPE_STR, UNIF_UNIFORM, "name of the kernel that ran" },
	{ "stream", TYPE_U64, UNIF_UNIFORM, "stream handle (0: default)" },
	{ "grid", TYPE_DIM3, UNIF_UNIFORM, "grid dimensions, in blocks" },
	{ "block", TYPE_DIM3, UNIF_UNIFORM, "block dimensions, in threads" },
	{ "shmem", TYPE_U32, UNIF_UNIFORM, "dynamic shared memory, bytes" },
	{ "start", TYPE_U64, UNIF_UNIFORM,
	  "when the kernel started on the GPU, ns of CLOCK_MONOTONIC (nsecs' clock)" },
	{ "end", TYPE_U64, UNIF_UNIFORM, "when it ended, ns of CLOCK_MONOTONIC" },
	{ "duration", TYPE_U64, UNIF_UNIFORM, "end - start, ns" },
	FIELDS_END,
};

static const struct event events[] = {
	{ &providers[0], "launch", PLACE_HOST, FILTER_KERNEL, cuda_launch_fields,
	  0, MEM_ACTS, "kernel launch (cuLaunchKernel / cudaLaunchKernel)", 0, 0, 0, 0, NULL, 0 },
	{ &providers[0], "malloc", PLACE_HOST, FILTER_NONE, cuda_malloc_fields, 0, MEM_ACTS,
	  "device or managed allocation (cuMemAlloc*, cudaMalloc*)", 0, 0, 0, 0, NULL, 0 },
	{ &providers[0], "free", PLACE_HOST, FILTER_NONE, cuda_free_fields, 0, MEM_ACTS,
	  "device memory release (cuMemFree, cudaFree)", 0, 0, 0, 0, NULL, 0 },
	{ &providers[0], "memcpy", PLACE_HOST, FILTER_NONE, cuda_memcpy_fields, 0, MEM_ACTS,
	  "memory copy (cuMemcpy*, cudaMemcpy*)", 0, 0, 0, 0, NULL, 0 },
	{ &providers[0], "sync", PLACE_HOST, FILTER_NONE, cuda_sync_fields, 0, MEM_ACTS,
	  "stream or device synchronization", 0, 0, 0, 0, NULL, 0 },
	{ &providers[0], "module_load", PLACE_HOST, FILTER_NONE, cuda_module_fields,
	  0, MEM_ACTS, "module (cubin/PTX image) load", 0, 0, 0, 0, NULL, 0 },
	/* no memory actions: it runs on the runtime's thread, after the
	 * kernel, unordered with the program's streams */
	{ &providers[0], "kernel_end", PLACE_HOST, FILTER_KERNEL, cuda_kend_fields, 0, 0,
	  "a kernel finished on the GPU, launched or in a graph replay (timed by CUPTI, else "
	  "by CUDA events around launches; no instrumentation)", 0, 0, 0, 0, NULL, 0 },
	{ &providers[0], "graph_launch", PLACE_HOST, FILTER_NONE, cuda_graph_fields, 0, MEM_ACTS,
	  "an executable graph launched (cuGraphLaunch), once per replay", 0, 0, 0, 0, NULL, 0 },
};

/* the runtime finds a probe's event (and kernel filter) by its section */
static const char *section(struct arena *a, const struct attach *at, const struct event *e,
			   const char *site)
{
	(void)site;
	return at->filter ? arena_printf(a, HOST_SEC_CUDA "%s:%s", e->name, at->filter)
			  : arena_printf(a, HOST_SEC_CUDA "%s", e->name);
}

const struct provider_unit cuda_unit = {
	.providers = providers,
	.nproviders = sizeof(providers) / sizeof(providers[0]),
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.resolve = spec_resolve_events,
	.usage = NULL,
	.section = section,
};
