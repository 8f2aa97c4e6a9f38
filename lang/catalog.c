/* The probe catalog's tables. Everything gpux knows about probe names lives
 * here as data; the lookups below are plain linear scans, as the tables are
 * small and read once per name in a script. */
#include "catalog.h"

#include <linux/perf_event.h>
#include <string.h>

#include "cuda_actions.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define DEC(d) DECISION_BIT(DECISION_##d)
#define ACT(a) ACTION_BIT(ACT_##a)
/* cuda: probes act on memory through the driver; gdev: ones prefetch into L2 */
#define MEM_ACTS (ACT(PREFETCH) | ACT(EVICT) | ACT(ADVISE))
#define DEV_ACTS ACT(DEV_PREFETCH)

/* Same order as gpux -l prints them. */
static const struct provider providers[] = {
	{ PROV_GDEV, "gdev", NULL, PLACE_DEVICE, RUNNER_TARGET, SYN_EVENT,
	  "inside CUDA kernels on the GPU, warp-collective", false,
	  ATTACH_DEVICE },
	{ PROV_CUDA, "cuda", NULL, PLACE_HOST, RUNNER_TARGET, SYN_EVENT,
	  "CUDA API calls, seen by the runtime preloaded into the program", true,
	  ATTACH_VM },
	{ PROV_UPROBE, "uprobe", "u", PLACE_HOST, RUNNER_KERNEL, SYN_UPROBE,
	  "entry of a user-space function", true,
	  ATTACH_UPROBE },
	{ PROV_URETPROBE, "uretprobe", "ur", PLACE_HOST, RUNNER_KERNEL, SYN_UPROBE,
	  "return of a user-space function", true,
	  ATTACH_URETPROBE },
	{ PROV_USDT, "usdt", "U", PLACE_HOST, RUNNER_KERNEL, SYN_USDT,
	  "a statically defined probe (sys/sdt.h) in a user-space binary", true,
	  ATTACH_USDT },
	{ PROV_WATCHPOINT, "watchpoint", "w", PLACE_HOST, RUNNER_KERNEL, SYN_WATCHPOINT,
	  "a memory access (hardware breakpoint) in the -p/-c process, else the kernel", true,
	  ATTACH_WATCHPOINT },
	{ PROV_ASYNCWATCHPOINT, "asyncwatchpoint", "aw", PLACE_HOST, RUNNER_KERNEL,
	  SYN_WATCHPOINT, "as watchpoint:FUNC+argN, without stopping the process to set it",
	  true, ATTACH_WATCHPOINT },
	{ PROV_TRACEPOINT, "tracepoint", "t", PLACE_HOST, RUNNER_KERNEL, SYN_TRACEPOINT,
	  "a Linux kernel tracepoint", false,
	  ATTACH_TRACEPOINT },
	{ PROV_GPU_MEM, "gpu_mem", NULL, PLACE_DRIVER, RUNNER_DRIVER, SYN_EVENT,
	  "GPU memory policy hooks (UVM eviction, prefetch) in the driver", false,
	  ATTACH_STRUCT_OPS },
	{ PROV_GPU_SCHED, "gpu_sched", NULL, PLACE_DRIVER, RUNNER_DRIVER, SYN_EVENT,
	  "GPU scheduling policy hooks (TSG timeslice, interleave)", false,
	  ATTACH_STRUCT_OPS },
	{ PROV_BEGIN, "BEGIN", NULL, PLACE_HOST, RUNNER_GPUX, SYN_BARE,
	  "once, before any other probe", false,
	  ATTACH_VM },
	{ PROV_END, "END", NULL, PLACE_HOST, RUNNER_GPUX, SYN_BARE,
	  "once, when gpux exits", false,
	  ATTACH_VM },
	{ PROV_INTERVAL, "interval", "i", PLACE_HOST, RUNNER_GPUX, SYN_INTERVAL,
	  "periodically, on one CPU", false,
	  ATTACH_VM },
	{ PROV_SOFTWARE, "software", "s", PLACE_HOST, RUNNER_KERNEL, SYN_EVENT,
	  "every N of a kernel software event, on every CPU: software:EVENT[:N]", false,
	  ATTACH_PERF_EVENT },
	{ PROV_HARDWARE, "hardware", "h", PLACE_HOST, RUNNER_KERNEL, SYN_EVENT,
	  "every N of a CPU's hardware counter, on every CPU: hardware:EVENT[:N]", false,
	  ATTACH_PERF_EVENT },
	{ PROV_PROFILE, "profile", "p", PLACE_HOST, RUNNER_KERNEL, SYN_INTERVAL,
	  "periodically on every CPU, in whatever runs there (a sampling profiler)", false,
	  ATTACH_PERF_EVENT },
};

/* Context fields, one { NULL } terminated array per event. */
#define FIELDS_END { .name = NULL }

static const struct field no_fields[] = { FIELDS_END };

static const struct field gdev_access_fields[] = {
	{ "addr", TYPE_U64, UNIF_VARYING, "address accessed by this lane" },
	{ "size", TYPE_U32, UNIF_UNIFORM,
	  "bytes per lane of the memory instruction" },
	{ "store", TYPE_INT(8, false), UNIF_UNIFORM, "1 for stores" },
	{ "atomic", TYPE_INT(8, false), UNIF_UNIFORM,
	  "1 for atomic and reduction instructions" },
	FIELDS_END,
};

static const struct field gdev_func_fields[] = {
	{ "func", TYPE_STR, UNIF_UNIFORM, "device function name" },
	FIELDS_END,
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

static const struct field mem_chunk_fields[] = {
	{ "chunk", TYPE_PTR("chunk"), UNIF_UNIFORM,
	  "the memory chunk (block)" },
	{ "list", TYPE_PTR("list"), UNIF_UNIFORM,
	  "the eviction list holding it" },
	{ "va", TYPE_U64, UNIF_UNIFORM,
	  "start of the 2 MB VA block it backs" },
	{ "owner", TYPE_U64, UNIF_UNIFORM,
	  "pid of the process whose memory it holds" },
	FIELDS_END,
};

static const struct field mem_evict_fields[] = {
	{ "used_list", TYPE_PTR("list"), UNIF_UNIFORM,
	  "chunks in use, head evicted first" },
	{ "unused_list", TYPE_PTR("list"), UNIF_UNIFORM,
	  "chunks allocated but unused" },
	{ "head", TYPE_PTR("chunk"), UNIF_UNIFORM,
	  "the chunk at the head of the used list (the next victim; read again after a move)" },
	FIELDS_END,
};

static const struct field mem_prefetch_fields[] = {
	{ "page_index", TYPE_U32, UNIF_UNIFORM,
	  "faulting page within its 2 MB block" },
	{ "max_first", TYPE_U32, UNIF_UNIFORM,
	  "first page of the max prefetch region" },
	{ "max_outer", TYPE_U32, UNIF_UNIFORM,
	  "end (exclusive) of the max prefetch region" },
	{ "va", TYPE_U64, UNIF_UNIFORM,
	  "start of the faulting 2 MB VA block" },
	{ "owner", TYPE_U64, UNIF_UNIFORM,
	  "pid of the process whose memory faults" },
	FIELDS_END,
};

static const struct field mem_prefetch_iter_fields[] = {
	{ "first", TYPE_U32, UNIF_UNIFORM,
	  "first page of this level's subregion" },
	{ "outer", TYPE_U32, UNIF_UNIFORM,
	  "end (exclusive) of this level's subregion" },
	{ "counter", TYPE_U32, UNIF_UNIFORM,
	  "pages of the subregion resident or faulting" },
	{ "max_first", TYPE_U32, UNIF_UNIFORM,
	  "first page of the max prefetch region" },
	{ "max_outer", TYPE_U32, UNIF_UNIFORM,
	  "end (exclusive) of the max prefetch region" },
	{ "va", TYPE_U64, UNIF_UNIFORM,
	  "start of the faulting 2 MB VA block" },
	{ "owner", TYPE_U64, UNIF_UNIFORM,
	  "pid of the process whose memory faults" },
	FIELDS_END,
};

static const struct field sched_init_fields[] = {
	{ "tsg_id", TYPE_U64, UNIF_UNIFORM, "time-slice group id" },
	{ "engine", TYPE_U32, UNIF_UNIFORM, "engine type (0 graphics/compute, 1 copy, ...)" },
	{ "timeslice", TYPE_U64, UNIF_UNIFORM, "default timeslice, us" },
	{ "interleave", TYPE_U32, UNIF_UNIFORM, "default interleave level (0 low, 1 medium, 2 high)" },
	{ "runlist", TYPE_U32, UNIF_UNIFORM, "runlist id" },
	FIELDS_END,
};

static const struct field sched_bind_fields[] = {
	{ "tsg_id", TYPE_U64, UNIF_UNIFORM, "time-slice group id" },
	{ "runlist", TYPE_U32, UNIF_UNIFORM, "runlist id" },
	{ "channels", TYPE_U32, UNIF_UNIFORM, "channels in the group" },
	{ "timeslice", TYPE_U64, UNIF_UNIFORM, "timeslice, us" },
	{ "interleave", TYPE_U32, UNIF_UNIFORM, "interleave level" },
	FIELDS_END,
};

static const struct field sched_tsg_fields[] = {
	{ "tsg_id", TYPE_U64, UNIF_UNIFORM, "time-slice group id" },
	FIELDS_END,
};

static const struct field uprobe_fields[] = {
	{ "arg0", TYPE_U64, UNIF_UNIFORM, "first integer argument" },
	{ "arg1", TYPE_U64, UNIF_UNIFORM, "second integer argument" },
	{ "arg2", TYPE_U64, UNIF_UNIFORM, "third integer argument" },
	{ "arg3", TYPE_U64, UNIF_UNIFORM, "fourth integer argument" },
	{ "arg4", TYPE_U64, UNIF_UNIFORM, "fifth integer argument" },
	{ "arg5", TYPE_U64, UNIF_UNIFORM, "sixth integer argument" },
	{ "sarg0", TYPE_U64, UNIF_UNIFORM, "first argument on the stack (x86-64: past six)" },
	{ "sarg1", TYPE_U64, UNIF_UNIFORM, "second argument on the stack" },
	{ "sarg2", TYPE_U64, UNIF_UNIFORM, "third argument on the stack" },
	{ "sarg3", TYPE_U64, UNIF_UNIFORM, "fourth argument on the stack" },
	{ "sarg4", TYPE_U64, UNIF_UNIFORM, "fifth argument on the stack" },
	{ "sarg5", TYPE_U64, UNIF_UNIFORM, "sixth argument on the stack" },
	{ "func", TYPE_STR, UNIF_UNIFORM, "probed function name" },
	FIELDS_END,
};

/* argN is read as the probe site's note says (a register, memory, a
 * constant), extended by its sign to 64 bits; typed u64, as bpftrace's */
static const struct field usdt_fields[] = {
	{ "arg0", TYPE_U64, UNIF_UNIFORM, "the probe's argument 0" },
	{ "arg1", TYPE_U64, UNIF_UNIFORM, "the probe's argument 1" },
	{ "arg2", TYPE_U64, UNIF_UNIFORM, "the probe's argument 2" },
	{ "arg3", TYPE_U64, UNIF_UNIFORM, "the probe's argument 3" },
	{ "arg4", TYPE_U64, UNIF_UNIFORM, "the probe's argument 4" },
	{ "arg5", TYPE_U64, UNIF_UNIFORM, "the probe's argument 5" },
	{ "arg6", TYPE_U64, UNIF_UNIFORM, "the probe's argument 6" },
	{ "arg7", TYPE_U64, UNIF_UNIFORM, "the probe's argument 7" },
	{ "arg8", TYPE_U64, UNIF_UNIFORM, "the probe's argument 8" },
	{ "arg9", TYPE_U64, UNIF_UNIFORM, "the probe's argument 9" },
	{ "arg10", TYPE_U64, UNIF_UNIFORM, "the probe's argument 10" },
	{ "arg11", TYPE_U64, UNIF_UNIFORM, "the probe's argument 11" },
	FIELDS_END,
};

static const struct field uretprobe_fields[] = {
	{ "retval", TYPE_U64, UNIF_UNIFORM, "return value" },
	{ "func", TYPE_STR, UNIF_UNIFORM, "probed function name" },
	FIELDS_END,
};

/* sampled every N of a perf event (FILTER_COUNT: the probe's N, else
 * the default), on every CPU; an alias is a row of its own */
#define PERF_ROW(prov, ev, type, cfg, n, doc)                                         \
	{ prov, ev, PLACE_HOST, FILTER_COUNT, no_fields, 0, 0, doc, 0, type, cfg, n }
#define PERF_SW(ev, cfg, n, doc) \
	PERF_ROW("software", ev, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##cfg, n, doc)
#define PERF_SW_ALIAS(ev, cfg, n, of) PERF_SW(ev, cfg, n, "the same as " of)
#define PERF_HW(ev, cfg, n, doc) \
	PERF_ROW("hardware", ev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_##cfg, n, doc)
#define PERF_HW_ALIAS(ev, cfg, n, of) PERF_HW(ev, cfg, n, "the same as " of)

static const struct event events[] = {
	{ "gdev", "kernel_entry", PLACE_DEVICE, FILTER_KERNEL, no_fields, 0, DEV_ACTS,
	  "kernel start, once per thread (after parameter loads)", DEV_PATH_PTX | DEV_PATH_SASS, 0, 0, 0 },
	{ "gdev", "kernel_exit", PLACE_DEVICE, FILTER_KERNEL, no_fields, 0, DEV_ACTS,
	  "kernel end, once per thread, on every exit path", DEV_PATH_PTX | DEV_PATH_SASS, 0, 0, 0 },
	{ "gdev", "access", PLACE_DEVICE, FILTER_KERNEL, gdev_access_fields,
	  0, DEV_ACTS, "global load/store/atomic, once per thread per instruction",
	  DEV_PATH_PTX | DEV_PATH_SASS, 0, 0, 0 },
	{ "gdev", "func_entry", PLACE_DEVICE, FILTER_FUNC, gdev_func_fields,
	  0, DEV_ACTS, "device function entry, once per thread", DEV_PATH_PTX, 0, 0, 0 },
	{ "gdev", "func_exit", PLACE_DEVICE, FILTER_FUNC, gdev_func_fields,
	  0, DEV_ACTS, "device function return, once per thread", DEV_PATH_PTX, 0, 0, 0 },

	{ "cuda", "launch", PLACE_HOST, FILTER_KERNEL, cuda_launch_fields,
	  0, MEM_ACTS, "kernel launch (cuLaunchKernel / cudaLaunchKernel)", 0, 0, 0, 0 },
	{ "cuda", "malloc", PLACE_HOST, FILTER_NONE, cuda_malloc_fields, 0, MEM_ACTS,
	  "device or managed allocation (cuMemAlloc*, cudaMalloc*)", 0, 0, 0, 0 },
	{ "cuda", "free", PLACE_HOST, FILTER_NONE, cuda_free_fields, 0, MEM_ACTS,
	  "device memory release (cuMemFree, cudaFree)", 0, 0, 0, 0 },
	{ "cuda", "memcpy", PLACE_HOST, FILTER_NONE, cuda_memcpy_fields, 0, MEM_ACTS,
	  "memory copy (cuMemcpy*, cudaMemcpy*)", 0, 0, 0, 0 },
	{ "cuda", "sync", PLACE_HOST, FILTER_NONE, cuda_sync_fields, 0, MEM_ACTS,
	  "stream or device synchronization", 0, 0, 0, 0 },
	{ "cuda", "module_load", PLACE_HOST, FILTER_NONE, cuda_module_fields,
	  0, MEM_ACTS, "module (cubin/PTX image) load", 0, 0, 0, 0 },
	/* no memory actions: it runs on the runtime's thread, after the
	 * kernel, unordered with the program's streams */
	{ "cuda", "kernel_end", PLACE_HOST, FILTER_KERNEL, cuda_kend_fields, 0, 0,
	  "a kernel finished on the GPU, launched or in a graph replay (timed by CUPTI, else "
	  "by CUDA events around launches; no instrumentation)", 0, 0, 0, 0 },
	{ "cuda", "graph_launch", PLACE_HOST, FILTER_NONE, cuda_graph_fields, 0, MEM_ACTS,
	  "an executable graph launched (cuGraphLaunch), once per replay", 0, 0, 0, 0 },

	{ "uprobe", NULL, PLACE_HOST, FILTER_NONE, uprobe_fields, 0, 0,
	  "entry of SYMBOL in TARGET (a path or library name)", 0, 0, 0, 0 },
	{ "uretprobe", NULL, PLACE_HOST, FILTER_NONE, uretprobe_fields, 0, 0,
	  "return of SYMBOL in TARGET (a path or library name)", 0, 0, 0, 0 },
	{ "usdt", NULL, PLACE_HOST, FILTER_NONE, usdt_fields, 0, 0,
	  "USDT probe [PROVIDER:]PROBE of TARGET (a path; with -p, any file the process maps)", 0, 0, 0, 0 },
	{ "watchpoint", NULL, PLACE_HOST, FILTER_NONE, no_fields, 0, 0,
	  "LENGTH bytes at ADDRESS, or at the pointer argN of FUNC once it is called, "
	  "read (r), written (w) or run (x)", 0, 0, 0, 0 },
	{ "asyncwatchpoint", NULL, PLACE_HOST, FILTER_NONE, no_fields, 0, 0,
	  "the pointer argN of FUNC, watched once FUNC is called; the process runs on meanwhile", 0, 0, 0, 0 },
	{ "tracepoint", NULL, PLACE_HOST, FILTER_NONE, no_fields, 0, 0,
	  "kernel tracepoint CATEGORY:NAME; fields come from tracefs", 0, 0, 0, 0 },

	{ "gpu_mem", "activate", PLACE_DRIVER, FILTER_NONE, mem_chunk_fields,
	  DEC(DEFAULT), ACT(MOVE_HEAD) | ACT(MOVE_TAIL),
	  "chunk becomes evictable (uvm_pmm_chunk_activate / gpu_block_activate)", 0, 0, 0, 0 },
	{ "gpu_mem", "access", PLACE_DRIVER, FILTER_NONE, mem_chunk_fields,
	  DEC(DEFAULT) | DEC(BYPASS) | DEC(ENTER_LOOP),
	  ACT(MOVE_HEAD) | ACT(MOVE_TAIL),
	  "chunk used (uvm_pmm_chunk_used / gpu_block_access)", 0, 0, 0, 0 },
	{ "gpu_mem", "evict_prepare", PLACE_DRIVER, FILTER_NONE,
	  mem_evict_fields, DEC(DEFAULT), ACT(MOVE_HEAD) | ACT(MOVE_TAIL),
	  "before picking a victim (uvm_pmm_eviction_prepare / gpu_evict_prepare)", 0, 0, 0, 0 },
	{ "gpu_mem", "prefetch", PLACE_DRIVER, FILTER_NONE,
	  mem_prefetch_fields, DEC(DEFAULT) | DEC(BYPASS) | DEC(ENTER_LOOP),
	  ACT(SET_PREFETCH_REGION),
	  "fault prefetch (uvm_prefetch_before_compute / gpu_page_prefetch)", 0, 0, 0, 0 },
	{ "gpu_mem", "prefetch_iter", PLACE_DRIVER, FILTER_NONE,
	  mem_prefetch_iter_fields, DEC(DEFAULT) | DEC(BYPASS),
	  ACT(SET_PREFETCH_REGION),
	  "one level of the prefetch tree walk after ENTER_LOOP; BYPASS keeps the region set "
	  "(uvm_prefetch_on_tree_iter / gpu_page_prefetch_iter)", 0, 0, 0, 0 },

	{ "gpu_sched", "task_init", PLACE_DRIVER, FILTER_NONE,
	  sched_init_fields, DEC(DEFAULT),
	  ACT(SET_TIMESLICE) | ACT(SET_INTERLEAVE),
	  "new time-slice group (nv_gpu_sched_ops.on_task_init)", 0, 0, 0, 0 },
	{ "gpu_sched", "bind", PLACE_DRIVER, FILTER_NONE, sched_bind_fields,
	  DEC(DEFAULT), ACT(SET_INTERLEAVE) | ACT(REJECT_BIND),
	  "group bound to a runlist (nv_gpu_sched_ops.on_bind)", 0, 0, 0, 0 },
	{ "gpu_sched", "task_destroy", PLACE_DRIVER, FILTER_NONE,
	  sched_tsg_fields, DEC(DEFAULT), 0,
	  "group destroyed (nv_gpu_sched_ops.on_task_destroy)", 0, 0, 0, 0 },

	{ "BEGIN", NULL, PLACE_HOST, FILTER_NONE, no_fields, 0, 0,
	  "once, before any other probe fires", 0, 0, 0, 0 },
	{ "END", NULL, PLACE_HOST, FILTER_NONE, no_fields, 0, 0,
	  "once, at exit (after exit(), Ctrl-C or the traced program ends)", 0, 0, 0, 0 },
	{ "interval", NULL, PLACE_HOST, FILTER_NONE, no_fields, 0, 0,
	  "every N seconds; unit s, ms, us, or hz for N times a second", 0, 0, 0, 0 },
	/* the CPU clock, its period from the probe */
	{ "profile", NULL, PLACE_HOST, FILTER_NONE, no_fields, 0, 0,
	  "every N s, ms or us of each CPU's time, or N times a second (hz)", 0,
	  PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0 },
	PERF_SW("cpu-clock", CPU_CLOCK, 1000000,
		"every N nanoseconds of a CPU's clock (default 1000000)"),
	PERF_SW_ALIAS("cpu", CPU_CLOCK, 1000000, "cpu-clock"),
	PERF_SW("task-clock", TASK_CLOCK, 1000000,
		"every N nanoseconds of a task's clock (default 1000000)"),
	PERF_SW("page-faults", PAGE_FAULTS, 100,
		"every N page faults (default 100)"),
	PERF_SW_ALIAS("faults", PAGE_FAULTS, 100, "page-faults"),
	PERF_SW("context-switches", CONTEXT_SWITCHES, 1000,
		"every N context switches (default 1000)"),
	PERF_SW_ALIAS("cs", CONTEXT_SWITCHES, 1000, "context-switches"),
	PERF_SW("cpu-migrations", CPU_MIGRATIONS, 1,
		"every N migrations to another CPU (default 1)"),
	PERF_SW("minor-faults", PAGE_FAULTS_MIN, 100,
		"every N minor page faults (default 100)"),
	PERF_SW("major-faults", PAGE_FAULTS_MAJ, 1,
		"every N major page faults (default 1)"),
	PERF_SW("alignment-faults", ALIGNMENT_FAULTS, 1,
		"every N alignment faults (default 1)"),
	PERF_SW("emulation-faults", EMULATION_FAULTS, 1,
		"every N emulated instructions (default 1)"),
	PERF_SW("dummy", DUMMY, 1,
		"never (a placeholder event)"),
	PERF_SW("bpf-output", BPF_OUTPUT, 1,
		"every N bpf_perf_event_output calls (default 1)"),
	PERF_HW("cpu-cycles", CPU_CYCLES, 1000000,
		"every N CPU cycles (default 1000000)"),
	PERF_HW_ALIAS("cycles", CPU_CYCLES, 1000000, "cpu-cycles"),
	PERF_HW("instructions", INSTRUCTIONS, 1000000,
		"every N instructions retired (default 1000000)"),
	PERF_HW("cache-references", CACHE_REFERENCES, 1000000,
		"every N last-level cache accesses (default 1000000)"),
	PERF_HW("cache-misses", CACHE_MISSES, 1000000,
		"every N last-level cache misses (default 1000000)"),
	PERF_HW("branch-instructions", BRANCH_INSTRUCTIONS, 100000,
		"every N branches retired (default 100000)"),
	PERF_HW_ALIAS("branches", BRANCH_INSTRUCTIONS, 100000, "branch-instructions"),
	PERF_HW("branch-misses", BRANCH_MISSES, 100000,
		"every N mispredicted branches (default 100000)"),
	PERF_HW("bus-cycles", BUS_CYCLES, 100000,
		"every N bus cycles (default 100000)"),
	PERF_HW("frontend-stalls", STALLED_CYCLES_FRONTEND, 1000000,
		"every N cycles stalled in the front end (default 1000000)"),
	PERF_HW("backend-stalls", STALLED_CYCLES_BACKEND, 1000000,
		"every N cycles stalled in the back end (default 1000000)"),
	PERF_HW("ref-cycles", REF_CPU_CYCLES, 1000000,
		"every N reference cycles, unscaled by frequency (default 1000000)"),
};

#define DEV PLACE_DEVICE
#define DRV PLACE_DRIVER
#define HOST PLACE_HOST

/* name, type, places, unif, doc; flags follow by name */
#define B(n, t, pl, u, d) .name = n, .type = t, .places = pl, .unif = u, .doc = d
static const struct builtin builtins[] = {
	{ B("kernel", TYPE_STR, DEV, UNIF_UNIFORM, "CUDA kernel name"), .lifelong = true },
	{ B("gpu", TYPE_U32, DEV | HOST, UNIF_UNIFORM,
	    "device ordinal of the event's CUDA context (gdev: and cuda: probes)"),
	  .lifelong = true, .target_only = true },
	{ B("sm", TYPE_U32, DEV, UNIF_UNIFORM, "streaming multiprocessor id") },
	{ B("warp", TYPE_U32, DEV, UNIF_UNIFORM, "warp index within the block"), .lifelong = true },
	{ B("lane", TYPE_U32, DEV, UNIF_VARYING, "lane index within the warp"), .lifelong = true },
	{ B("threadIdx", TYPE_DIM3, DEV, UNIF_VARYING,
	  "thread index in the block"), .lifelong = true },
	{ B("blockIdx", TYPE_DIM3, DEV, UNIF_UNIFORM, "block index in the grid"), .lifelong = true },
	{ B("blockDim", TYPE_DIM3, DEV, UNIF_UNIFORM, "block dimensions"), .lifelong = true },
	{ B("gridDim", TYPE_DIM3, DEV, UNIF_UNIFORM, "grid dimensions"), .lifelong = true },
	{ B("gtid", TYPE_U64, DEV, UNIF_VARYING, "global linear thread id"), .lifelong = true },
	{ B("cycles", TYPE_U64, DEV, UNIF_UNIFORM,
	  "SM clock (clock64), read by the warp leader") },
	{ B("activemask", TYPE_U32, DEV, UNIF_UNIFORM,
	  "lanes of the warp running the probe (bit per lane): divergence") },
	{ B("activelanes", TYPE_U32, DEV, UNIF_UNIFORM,
	  "how many lanes of the warp run the probe (popc of activemask)") },
	{ B("nsecs", TYPE_U64, PLACE_ANY, UNIF_UNIFORM,
	  "timestamp, ns (on the device: globaltimer)") },
	{ B("pid", TYPE_U32, DEV | DRV | HOST, UNIF_UNIFORM,
	  "process id (on the device: the traced process)"), .lifelong = true },
	{ B("tid", TYPE_U32, DEV | DRV | HOST, UNIF_UNIFORM,
	  "thread id (on the device: the traced process)"), .lifelong = true },
	{ B("cpid", TYPE_U32, HOST, UNIF_UNIFORM,
	  "process id of the command started with -c or --") },
	{ B("comm", TYPE_STR, DEV | DRV | HOST, UNIF_UNIFORM, "process name"), .lifelong = true },
	{ B("probe", TYPE_STR, PLACE_ANY, UNIF_UNIFORM,
	  "name of the probe fired"), .lifelong = true },
	{ B("cpu", TYPE_U32, DRV | HOST, UNIF_UNIFORM, "CPU id") },
	{ B("uid", TYPE_U32, DRV | HOST, UNIF_UNIFORM, "user id") },
	{ B("gid", TYPE_U32, DRV | HOST, UNIF_UNIFORM, "group id") },
	{ B("username", { .kind = TY_USERNAME }, HOST, UNIF_UNIFORM,
	  "the user id, printed as the user's name") },
	{ B("rand", TYPE_U32, DRV | HOST, UNIF_UNIFORM, "a pseudo-random number") },
	{ B("numaid", TYPE_U32, DRV | HOST, UNIF_UNIFORM, "NUMA node of the CPU") },
	{ B("cgroup", TYPE_U64, HOST, UNIF_UNIFORM, "cgroup v2 id of the task") },
	{ B("elapsed", TYPE_U64, HOST, UNIF_UNIFORM, "ns since gpux started") },
	{ B("ustack", TYPE_STACK(true, STACK_BPFTRACE, STACK_DEFAULT_LIMIT), HOST, UNIF_UNIFORM,
	  "the user stack (ustack(N), ustack(perf), ustack(perf, N))"), .kernel_only = true },
	{ B("kstack", TYPE_STACK(false, STACK_BPFTRACE, STACK_DEFAULT_LIMIT), HOST, UNIF_UNIFORM,
	  "the kernel stack (kstack(N), kstack(perf), kstack(perf, N))"), .kernel_only = true },
	{ B("curtask", TYPE_PTR("struct task_struct"), HOST, UNIF_UNIFORM,
	  "the current task_struct's address"), .kernel_only = true },
};

/* Indexed by enum action_id. hint_arg is -1 unless an argument names a
 * hint. */
#define NO_HINT .hint_arg = -1
static const struct action actions[] = {
	[ACT_MOVE_HEAD] = {
		ACT_MOVE_HEAD, "move_head", 1, { TYPE_PTR("chunk") }, NO_HINT,
		"evict next: bpf_uvm_pmm_chunk_move_head / "
		"bpf_gpu_block_move_head" },
	[ACT_MOVE_TAIL] = {
		ACT_MOVE_TAIL, "move_tail", 1, { TYPE_PTR("chunk") }, NO_HINT,
		"evict last: bpf_uvm_pmm_chunk_move_tail / "
		"bpf_gpu_block_move_tail" },
	[ACT_SET_PREFETCH_REGION] = {
		ACT_SET_PREFETCH_REGION, "set_prefetch_region", 2,
		{ TYPE_U32, TYPE_U32 }, NO_HINT,
		"prefetch pages [first, outer): bpf_uvm_set_va_block_region / "
		"bpf_gpu_set_prefetch_region" },
	[ACT_SET_TIMESLICE] = { ACT_SET_TIMESLICE, "set_timeslice", 1,
				{ TYPE_U64 }, NO_HINT,
				"timeslice in us: bpf_nv_gpu_set_timeslice" },
	[ACT_SET_INTERLEAVE] = { ACT_SET_INTERLEAVE, "set_interleave", 1,
				 { TYPE_U32 }, NO_HINT,
				 "interleave level: bpf_nv_gpu_set_interleave" },
	[ACT_REJECT_BIND] = { ACT_REJECT_BIND, "reject_bind", 0, { TYPE_NONE }, NO_HINT,
			      "refuse the bind: bpf_nv_gpu_reject_bind" },
	[ACT_PREFETCH] = {
		ACT_PREFETCH, "prefetch", 2, { TYPE_U64, TYPE_U64 }, NO_HINT,
		"prefetch(ptr, bytes): migrate managed memory to the launching GPU, "
		"ordered on the event's stream (cuMemPrefetchAsync)" },
	[ACT_EVICT] = {
		ACT_EVICT, "evict", 2, { TYPE_U64, TYPE_U64 }, NO_HINT,
		"evict(ptr, bytes): migrate managed memory to host memory, ordered "
		"on the event's stream (cuMemPrefetchAsync to the CPU)" },
	[ACT_ADVISE] = {
		ACT_ADVISE, "advise", 3, { TYPE_U64, TYPE_U64, TYPE_U64 }, 2,
		"advise(ptr, bytes, HINT): cuMemAdvise on managed memory; HINT is "
		"one of the hints `gpux -lv` lists" },
	[ACT_DEV_PREFETCH] = {
		ACT_DEV_PREFETCH, "prefetch", 1, { TYPE_U64 }, NO_HINT,
		"prefetch(addr): prefetch.global.L2 of the line at addr, once per "
		"warp (the first active lane's address)" },
};

/* advise()'s hints, by enum gpux_advise. */
static const struct hint_info hints[] = {
	{ "READ_MOSTLY", GPUX_ADVISE_READ_MOSTLY,
	  "read-mostly: GPUs read copies (CU_MEM_ADVISE_SET_READ_MOSTLY)" },
	{ "UNSET_READ_MOSTLY", GPUX_ADVISE_UNSET_READ_MOSTLY, "undo READ_MOSTLY" },
	{ "PREFERRED_GPU", GPUX_ADVISE_PREFERRED_GPU,
	  "keep it on the event's GPU (SET_PREFERRED_LOCATION)" },
	{ "PREFERRED_CPU", GPUX_ADVISE_PREFERRED_CPU,
	  "keep it in host memory (SET_PREFERRED_LOCATION)" },
	{ "UNSET_PREFERRED", GPUX_ADVISE_UNSET_PREFERRED,
	  "undo PREFERRED_GPU or PREFERRED_CPU" },
	{ "ACCESSED_BY_GPU", GPUX_ADVISE_ACCESSED_BY_GPU,
	  "keep it mapped for the event's GPU (SET_ACCESSED_BY)" },
	{ "ACCESSED_BY_CPU", GPUX_ADVISE_ACCESSED_BY_CPU,
	  "keep it mapped for the CPU (SET_ACCESSED_BY)" },
	{ "UNSET_ACCESSED_BY_GPU", GPUX_ADVISE_UNSET_ACCESSED_BY_GPU,
	  "undo ACCESSED_BY_GPU" },
	{ "UNSET_ACCESSED_BY_CPU", GPUX_ADVISE_UNSET_ACCESSED_BY_CPU,
	  "undo ACCESSED_BY_CPU" },
};

/* Indexed by enum decision. */
static const struct decision_info decisions[] = {
	[DECISION_DEFAULT] = { DECISION_DEFAULT, "DEFAULT" },
	[DECISION_BYPASS] = { DECISION_BYPASS, "BYPASS" },
	[DECISION_ENTER_LOOP] = { DECISION_ENTER_LOOP, "ENTER_LOOP" },
};

static const struct {
	enum place place;
	const char *name;
} place_names[] = {
	{ PLACE_DEVICE, "device" },
	{ PLACE_DRIVER, "driver" },
	{ PLACE_HOST, "host" },
};

_Static_assert(ARRAY_LEN(actions) == ACT_COUNT, "one action per action_id");
_Static_assert(ARRAY_LEN(hints) == GPUX_ADVISE_COUNT, "one entry per hint");
_Static_assert(ARRAY_LEN(decisions) == DECISION_COUNT,
	       "one entry per decision");

const struct provider *catalog_providers(size_t *n)
{
	*n = ARRAY_LEN(providers);
	return providers;
}

const struct event *catalog_events(size_t *n)
{
	*n = ARRAY_LEN(events);
	return events;
}

const struct builtin *catalog_builtins(size_t *n)
{
	*n = ARRAY_LEN(builtins);
	return builtins;
}

const struct action *catalog_actions(size_t *n)
{
	*n = ARRAY_LEN(actions);
	return actions;
}

const struct decision_info *catalog_decisions(size_t *n)
{
	*n = ARRAY_LEN(decisions);
	return decisions;
}

const struct hint_info *catalog_hints(size_t *n)
{
	*n = ARRAY_LEN(hints);
	return hints;
}

const struct provider *catalog_provider(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < ARRAY_LEN(providers); i++) {
		const struct provider *p = &providers[i];
		if (!strcmp(p->name, name) ||
		    (p->alias && !strcmp(p->alias, name)))
			return p;
	}
	return NULL;
}

const struct event *catalog_event(const struct provider *p, const char *name)
{
	if (!p)
		return NULL;
	bool named = p->syntax == SYN_EVENT;
	if (named && !name)
		return NULL;
	for (size_t i = 0; i < ARRAY_LEN(events); i++) {
		const struct event *e = &events[i];
		if (strcmp(e->provider, p->name))
			continue;
		/* Non-event providers have one nameless event: the name
		 * written (target, category...) is not ours to check. */
		if (!named || (e->name && !strcmp(e->name, name)))
			return e;
	}
	return NULL;
}

const struct field *event_field(const struct event *e, const char *name)
{
	if (!e || !name)
		return NULL;
	for (const struct field *f = e->fields; f && f->name; f++)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}

const struct builtin *catalog_builtin(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < ARRAY_LEN(builtins); i++)
		if (!strcmp(builtins[i].name, name))
			return &builtins[i];
	return NULL;
}

const struct action *catalog_action(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < ARRAY_LEN(actions); i++)
		if (!strcmp(actions[i].name, name))
			return &actions[i];
	return NULL;
}

const struct action *catalog_action_in(const char *name, const struct event *e)
{
	const struct action *first = NULL;
	for (size_t i = 0; name && i < ARRAY_LEN(actions); i++) {
		if (strcmp(actions[i].name, name))
			continue;
		if (e && (e->actions & ACTION_BIT(actions[i].id)))
			return &actions[i];
		if (!first)
			first = &actions[i];
	}
	return first;
}

const struct hint_info *catalog_hint(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_LEN(hints); i++)
		if (!strcmp(hints[i].name, name))
			return &hints[i];
	return NULL;
}

bool catalog_decision(const char *name, enum decision *out)
{
	if (!name)
		return false;
	for (size_t i = 0; i < ARRAY_LEN(decisions); i++)
		if (!strcmp(decisions[i].name, name)) {
			if (out)
				*out = decisions[i].value;
			return true;
		}
	return false;
}

const char *decision_name(enum decision d)
{
	if ((unsigned)d >= ARRAY_LEN(decisions))
		return "?";
	return decisions[d].name;
}

const char *place_name(enum place p)
{
	for (size_t i = 0; i < ARRAY_LEN(place_names); i++)
		if (place_names[i].place == p)
			return place_names[i].name;
	return "?";
}
