/* libgpux-rt.so internals: the device runtime preloaded into a traced
 * CUDA program (docs/ARCHITECTURE.md). Pieces:
 *   rt_cuda.c      the real driver entry points and the real dlsym
 *   rt_interpose.c dlsym, cuGetProcAddress and the exported driver
 *                  functions that lead every module load here
 *   rt_image.c     a loaded image -> what to load instead (fatbin and
 *                  PTX parsing, probe matching, rewriting, cache)
 *   rt_relink.c    relocatable device code: the module linked again
 *   rt_link.c      cuLink*, and a patched module linked with the helper
 *                  library's cubin (rt_helpers.c: the built-in cubins)
 *   rt_original.c  occupancy and attribute queries the original answers
 *   rt_ctx.c       per CUDA context: slot, map storage, ring, clock,
 *                  descriptors of each patched module, snapshots
 *   rt_drain.c     the thread that forwards printf records, publishes
 *                  snapshots and notices exit()
 *   rt_session.c   the session segment, kernel names, messages
 *   rt_host.c, rt_host_out.c, rt_api.c, rt_launch_ev.c, rt_cev_util.c
 *                  cuda: events: the hooks, their contexts, the VM
 *   rt_kernel_end.c  cuda:kernel_end: CUDA events around launches,
 *                  polled, timed against an anchor, delivered
 *   rt_cupti.c     ... or CUPTI's activity records, where libcupti opens
 *   rt_graph_ev.c  cuda:graph_launch
 *   rt_attach.c, rt_attach_images.c  gpux -p: joining a running
 *                  process, the images of modules it loaded before
 *   rt_actions.c, rt_allocs.c, rt_mirror.c, rt_push.c, rt_crash.c
 *                  memory actions, allocations, maps shared with the
 *                  device, fatal signals
 * Library code: no exit(), nothing printed unless something is wrong. */
#ifndef GPUX_RT_H
#define GPUX_RT_H

#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_events.h"
#include "session.h"

/* ---- rt_cuda.c ---- */
struct rt_cu {
	CUresult (*GetErrorString)(CUresult, const char **);
	CUresult (*CtxGetCurrent)(CUcontext *);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*CtxGetDevice)(CUdevice *);
	CUresult (*CtxSynchronize)(void);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
	CUresult (*DevicePrimaryCtxGetState)(CUdevice, unsigned *, int *);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*DevicePrimaryCtxRelease)(CUdevice);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
	CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*ThreadExchangeStreamCaptureMode)(CUstreamCaptureMode *);
	CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
	CUresult (*MemHostAlloc)(void **, size_t, unsigned);
	CUresult (*MemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned);
	CUresult (*MemFreeHost)(void *);
	CUresult (*StreamCreate)(CUstream *, unsigned);
	CUresult (*StreamDestroy)(CUstream);
	CUresult (*StreamSynchronize)(CUstream);
	CUresult (*ModuleGetGlobal)(CUdeviceptr *, size_t *, CUmodule, const char *);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*LibraryGetGlobal)(CUdeviceptr *, size_t *, CUlibrary, const char *);
	CUresult (*LibraryGetKernel)(CUkernel *, CUlibrary, const char *);
	CUresult (*KernelGetFunction)(CUfunction *, CUkernel);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
				 unsigned, unsigned, unsigned, CUstream, void **, void **);
	/* Optional (completion snapshots): NULL when libcuda lacks them. */
	CUresult (*EventCreate)(CUevent *, unsigned);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*EventQuery)(CUevent);
	CUresult (*StreamIsCapturing)(CUstream, CUstreamCaptureStatus *);
	/* Optional (cuda:kernel_end, rt_kernel_end.c) */
	CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*EventDestroy)(CUevent);
	/* Optional (cross-layer pushes, rt_push.c) */
	CUresult (*StreamBatchMemOp)(CUstream, unsigned, CUstreamBatchMemOpParams *, unsigned);
	/* Optional (SASS patching, rt_sass.c) */
	CUresult (*FuncGetModule)(CUmodule *, CUfunction);
	CUresult (*FuncGetName)(const char **, CUfunction);
	CUresult (*KernelGetName)(const char **, CUkernel);
	CUresult (*ModuleGetFunctionCount)(unsigned *, CUmodule);
	CUresult (*ModuleEnumerateFunctions)(CUfunction *, unsigned, CUmodule);
	CUresult (*LibraryGetModule)(CUmodule *, CUlibrary);
	CUresult (*KernelGetLibrary)(CUlibrary *, CUkernel);
};

/* Resolved on first need; false if libcuda is not loaded (or too old). */
bool rt_cu_ready(void);
/* A library of a pip wheel beside the program's Python interpreter (its
 * venv: .../bin/python -> .../lib/python3*\/site-packages/REL, REL a
 * glob such as "nvidia/cu*\/lib/libcupti.so*"): the first of rel[] that
 * opens, or NULL. */
void *rt_dlopen_wheel(const char *const *rel, size_t n);
extern struct rt_cu rt_cu;
/* The C library's dlsym, for every lookup of our own. */
void *rt_real_dlsym(void *handle, const char *name);
/* libcuda's own NAME (dlopen'ed by the program already), or NULL. */
void *rt_cuda_sym(const char *name);
const char *rt_cu_err(CUresult rc);
/* Device dev's compute capability as sm_XX's XX (90), or 0. */
unsigned rt_device_arch(CUdevice dev);
/* "NVIDIA H200, PCI 0000:19:00.0", as far as the driver says. */
void rt_device_desc(CUdevice dev, char *buf, size_t n);
/* The runtime's own setup may run while the program captures a stream
 * into a graph (lazy loading at the first captured launch): it uses
 * only its own non-blocking stream, in relaxed capture mode. */
CUstreamCaptureMode rt_relaxed_begin(void);
void rt_relaxed_end(CUstreamCaptureMode prev);
/* Whether stream s (with per_thread, s NULL is the per-thread default
 * stream) is being captured into a graph; false when the driver cannot
 * say. */
bool rt_capturing(CUstream s, bool per_thread);
/* Whether c is dev's primary context: retained and released at once,
 * only while the primary context is active (never made by asking). */
bool rt_is_primary(CUcontext c, CUdevice dev);

/* ---- rt_session.c ---- */
/* The mapped segment, or NULL when this process is not traced: in a
 * live session, the generation the process is at. */
struct gpux_sess_hdr *rt_sess(void);
/* Joins the session GPUX_SESS_ENV's value names, in a process that
 * started without one (gpux -p): the session, or NULL (none there, or
 * already in one). */
struct gpux_sess_hdr *rt_sess_join(const char *value);
/* The first generation, which holds the kernel names and messages. */
struct gpux_sess_hdr *rt_sess_root(void);
/* This process used CUDA (cuInit, a module, a launch): said once to the
 * controller through the session (cuda_seen). */
void rt_saw_cuda(void);
/* Live sessions: the next generation once the controller made it
 * (mapped), else NULL; rt_sess_move makes it the current one (ack: and
 * counts the process as moved in the one it leaves). */
struct gpux_sess_hdr *rt_sess_next(void);
void rt_sess_move(struct gpux_sess_hdr *next, bool ack);
/* The id of a function for ctx.kernel_id: its index in the segment's
 * name table (registered once per process; safe from any thread). */
uint32_t rt_name_id(const char *ptx_name);
/* GPUX_RT_TRACE=1: every hooked call is logged (debugging). */
bool rt_tracing(void);
#define RT_TRACE(...) do { if (rt_tracing()) rt_log(__VA_ARGS__); } while (0)
/* A message for the user: into the segment, which gpux prints on its own
 * stderr (once, however many processes say it); "gpux: ..." on the
 * program's stderr when there is no segment or it is full. */
void rt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "gpux: ..." on the program's stderr (debugging traces). */
void rt_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Demangled name into buf (the PTX name itself if not mangled). */
const char *rt_demangle(const char *name, char *buf, size_t len);
/* A kernel's name as the name table and cuda: events hold it (len is
 * GPUX_SESS_NAME_LEN): demangled, cut with "..." when longer. */
const char *rt_kernel_name(const char *ptx_name, char *buf, size_t len);
/* A kernel's name as cuda: event strings hold it: the first
 * GPUX_CEV_STR - 1 bytes of rt_kernel_name's, zero-padded (it keys maps). */
void rt_kernel_str(const char *ptx_name, char out[GPUX_CEV_STR]);
/* Whether probe glob matches a function: its PTX name, its demangled
 * name, or the demangled name without parameters and return type. */
bool rt_glob_matches(const char *glob, const char *ptx_name);

/* ---- rt_image.c ---- */
/* FNV-1a of n bytes at p, continuing from h (RT_FNV_SEED to start). */
#define RT_FNV_SEED 1469598103934665603ull
uint64_t rt_fnv(uint64_t h, const void *p, size_t n);
enum rt_img_kind { RT_IMG_PTX, RT_IMG_FATBIN, RT_IMG_ELF, RT_IMG_UNKNOWN };
/* What image is; *size (0: unknown) becomes its size for PTX text (up to
 * the NUL) and ELF (to the end of its last header table). */
enum rt_img_kind rt_image_classify(const void *image, size_t *size);
/* What rt_image_patch makes of an image. */
enum rt_patch_as {
	/* a module to load: linked with the helper library's cubin where
	 * it can be (rt_link.c), relocatable code linked again */
	RT_AS_LOAD,
	/* a load with JIT options that shape the code (registers,
	 * optimization, target): PTX carrying the library, which the driver
	 * compiles under them */
	RT_AS_JIT,
	/* an input of the program's own link: PTX carrying the library */
	RT_AS_PTX,
	/* a live session's second copy of a loaded module: as RT_AS_LOAD,
	 * its variables the original's (ptx_vars.h), filled in by the
	 * caller at the addresses rt_image_vars names */
	RT_AS_LIVE,
	/* the same for a module loaded with JIT options that shape the
	 * code: as RT_AS_JIT */
	RT_AS_LIVE_JIT,
};
/* What to load in place of image: NULL to load image untouched (nothing
 * to probe, or it cannot be instrumented: reported once). The result
 * (PTX text or a cubin) stays valid for the life of the process. size:
 * bytes if known, else 0. */
const char *rt_image_patch(const void *image, size_t size, enum rt_patch_as as);
/* The file an image lies in (a library's fatbin), for messages, or
 * NULL. */
const char *rt_image_file(const void *image);
/* The image the program gave for patched text rt_image_patch returned
 * (false if it is not kept). */
bool rt_image_original(const char *patched, const void **image);
struct gpux_cubin_regs;
struct gpux_fb_wrapper;
/* The register counts of each kernel of the SASS the driver would load
 * from fatbin b on a device of arch rather than compile PTX: an ELF
 * element of the device's major arch, the highest minor not above it.
 * r stays empty when there is none. */
void rt_image_sass_regs(const void *b, size_t len, unsigned arch, struct gpux_cubin_regs *r);
/* A copy of image that lives as long as the process (*copy, malloc'd,
 * or NULL where image itself does: a fatbin wrapper lies in the
 * program), or NULL if its size cannot be told. */
const void *rt_image_keep(const void *image, size_t size, void **copy);
struct ptx_var_list;
/* The variables image's PTX declares (__device__, __constant__), in the
 * order of the table of its RT_AS_LIVE copy: 0, or -1 when a copy could
 * not share them (said once: textures, relocatable code). */
int rt_image_vars(const void *image, size_t size, struct ptx_var_list *out);
/* Live sessions, moving to another generation: what was patched for
 * the last one goes (its modules are unloaded already). */
void rt_image_forget(void);
/* Whether PTX defines a function some probe fires in. */
bool rt_image_probed(const char *ptx);
/* Whether the session's probes call a library helper whose symbol
 * starts with prefix ("gpux_h_printf"; "gpux_h_" for any). */
bool rt_probes_call(const char *prefix);
/* ptx rewritten with the session's probes (malloc'd), kernels capped at
 * regs (may be NULL); unit: enum ptx_unit (ptx_rewrite.h); link: the
 * probes in the form that links with the helper library's cubin
 * (rt_link.c), else with the library's PTX; live: its variables remapped
 * for a second copy (RT_AS_LIVE). NULL when nothing is probed or it
 * cannot be (said). */
char *rt_image_rewrite(const char *ptx, size_t len, const struct gpux_cubin_regs *regs,
		       int unit, bool link, bool live);

/* ---- rt_sass.c: SASS-only kernels through the Compute Sanitizer ---- */
/* Whether SASS patching can take kernels without PTX; if not, why
 * (NULL: it is off, not failed). */
bool rt_sass_can(void);
/* At the program's first cuInit: the Sanitizer loaded and subscribed to
 * when the session has kernel entry, exit or access probes. */
void rt_sass_init(void);
const char *rt_sass_why_not(void);
/* A module or library the program loaded untouched: patched when a
 * probe fires in its kernels (said once per file). Takes rt_lock. */
void rt_sass_loaded(void *handle, bool lib, const void *image);
void rt_sass_unloaded(void *handle, bool lib);
/* Before each launch of f, once a module is patched: f's record, the
 * first time (takes rt_lock then). */
extern int rt_sass_active;
extern __thread bool rt_in_sass;
void rt_sass_launch_slow(CUfunction f);
static inline void rt_sass_launch(CUfunction f)
{
	if (__atomic_load_n(&rt_sass_active, __ATOMIC_RELAXED))
		rt_sass_launch_slow(f);
}

/* ---- rt_ptxas.c ---- */
/* The ptxas to run (path into out), or false: GPUX_PTXAS when set
 * (and only it), TRITON_PTXAS_PATH, CUDA_HOME's or CUDA_PATH's, the
 * toolkit's in /usr/local/cuda, the one Triton ships, PATH's. */
bool rt_ptxas_find(char *out, size_t len);
/* ptx compiled for sm_arch as a tools patch (malloc'd, *size bytes),
 * from gpux's cache when it is there; NULL with why. */
void *rt_ptxas_tools_patch(const char *ptx, unsigned arch, size_t *size, char *why,
			   size_t whylen);

/* ---- rt_cache.c ---- */
/* gpux's cache of linked, instrumented modules, across runs: the key
 * of a link's inputs (patched PTX, the library's cubin, the device's
 * arch, the register cap, the driver's version); the cached cubin
 * (malloc'd, *size bytes) or NULL; and storing one. Off under
 * GPUX_SESS_NO_CACHE; GPUX_CACHE_DIR, else XDG_CACHE_HOME/gpux, else
 * ~/.cache/gpux. */
struct rt_cache_key {
	uint64_t h[2];
};
void rt_cache_key(struct rt_cache_key *k, const char *ptx, const void *lib, size_t lib_size,
		  unsigned arch, unsigned cap);
void *rt_cache_get(const struct rt_cache_key *k, size_t *size);
void rt_cache_put(const struct rt_cache_key *k, const void *cubin, size_t size);

/* ---- rt_triton.c ---- */
/* The whole file at path (malloc'd, NUL-terminated, *n bytes; under
 * 1 GiB), or NULL. */
char *rt_slurp(const char *path, size_t *n);
/* The PTX a cubin was compiled from, from Triton's cache: only a cached
 * cubin of the same bytes gives it, and only if its PTX defines every
 * kernel of the cubin. 1: *ptx (malloc'd); 0: none (where gets the cache
 * folders looked in, "" if there are none); -1: cached copies of the
 * cubin disagree on their PTX (said). */
int rt_triton_ptx(const void *image, size_t size, char **ptx, char *where, size_t where_len);

/* ---- rt_relink.c ---- */
/* A linked module of relocatable device code (its fatbin wrapper w,
 * version 2) linked again with its units instrumented, for a device of
 * arch: the cubin (malloc'd, *size bytes), or NULL (said, unless nothing
 * is probed). *rdc: whether the wrapper is such a module. live: for a
 * live session's copy, which units with variables cannot be (NULL, said). */
void *rt_relink(const struct gpux_fb_wrapper *w, unsigned arch, size_t *size, bool *rdc,
		bool live);

/* ---- rt_link.c ---- */
/* Appends to o/v the option that lets the driver's JIT compile a
 * patched module's functions on every CPU (CU_JIT_SPLIT_COMPILE), unless
 * the caller's n options in opt set it already; returns how many it
 * added (0 or 1). A driver that does not know it refuses the load with
 * CUDA_ERROR_INVALID_VALUE: load again without. */
unsigned rt_split_compile(CUjit_option *o, void **v, const CUjit_option *opt, unsigned n);
struct rt_link_in {
	CUjitInputType type;
	const void *data;
	size_t size;
};
/* cuLink* of in[0..n): the linked cubin (malloc'd, *size bytes), or NULL
 * with the driver's message in err. maxreg (0: none) caps every function
 * compiled from PTX. Without a current context, device 0's primary
 * context is made current for the link. */
void *rt_link(const struct rt_link_in *in, int n, unsigned maxreg, size_t *size, char *err,
	      size_t errlen);
/* Whether modules for a device of arch link with the helper library's
 * cubin: the session has the probes' link form, the build a cubin for
 * arch, and every device is of arch. -v says once why not. */
bool rt_link_lib(unsigned arch);
/* The lowest nonzero count of regs (NULL or none: 0). */
unsigned rt_regs_lowest(const struct gpux_cubin_regs *regs);
/* A link with the library's cubin failed (err): -v says so once. */
void rt_link_failed(unsigned arch, const char *err);
/* ptx (rt_image_rewrite's, link set) linked with the library's cubin
 * for arch whose budget fits the lowest of regs's caps: the cubin
 * (malloc'd, *size bytes), or NULL (said once with -v): the caller then
 * loads the library as PTX. */
void *rt_link_with_lib(const char *ptx, const struct gpux_cubin_regs *regs, unsigned arch,
		       size_t *size);

/* ---- rt_ctx.c ---- */
/* A module (or library) now loaded from patched PTX, or an ELF image
 * that may hold our globals: set up its maps and control block in the
 * current context. Quiet when the module is not ours. */
void rt_module_loaded(CUmodule mod);
void rt_library_loaded(CUlibrary lib);
void rt_module_unloaded(CUmodule mod);
void rt_library_unloaded(CUlibrary lib);
/* A launch in the current context: libraries load lazily per context,
 * so the first launch in a new context sets them up there. */
void rt_launch_seen(void);
/* After a launch (or graph launch) on stream s: marks a completion
 * point (an event) when none is pending in the context, so that the
 * runtime thread snapshots the maps when that work is done. Cheap when
 * one is pending; nothing inside a stream capture. */
void rt_launch_done(CUstream s, bool per_thread);
/* Before a context goes away: the final snapshot. dev >= 0: the primary
 * context of that device; ctx otherwise. */
void rt_ctx_ending(CUcontext ctx, int dev);
/* After a primary context release or reset: forget it if it is gone. */
void rt_ctx_ended(int dev);
/* Snapshots of every live context (final: after a context sync) and
 * the ring forwarding; used by the drain thread and at exit. */
void rt_ctx_poll(bool snapshot, bool final);
/* A snapshot of the current context now (after a synchronize: what it
 * waited for is then in the maps cuda: probes read). */
void rt_ctx_snap_current(void);
/* The controller is gone (rt_drain.c watches it): every patched module's
 * sites call nothing from their next launch on (GPUX_SYM_OFF), cuda:
 * programs stop, images load untouched. Called with rt_lock held. */
void rt_ctx_detach(void);
bool rt_detached(void);
/* At exit and after fork. */
void rt_ctx_shutdown(void);
/* Live sessions, before moving on: every context's work waited for, its
 * final snapshot taken (slots DONE). */
void rt_ctx_finish_all(void);
/* After the move from generation old: each context gets a slot of the
 * new one, storage for its maps (those that carry one of old's starting
 * from its final snapshot), rings if it now prints, and a snapshot. */
void rt_ctx_move(struct gpux_sess_hdr *old);
/* rt_crash.c: the final snapshot on a fatal signal too (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGABRT), then the signal goes where it went before. */
void rt_crash_arm(void);
void rt_ctx_forget(void);

/* ---- rt_host.c: cuda: events run the session's host programs ---- */
/* Whether some probe listens to ev: hooks test it before building a
 * context, so an event nobody probes costs one load. */
extern uint32_t rt_cev_wanted; /* bit per enum gpux_cev */
static inline bool rt_cev_on(enum gpux_cev ev)
{
	return __atomic_load_n(&rt_cev_wanted, __ATOMIC_RELAXED) & (1u << ev);
}
/* Runs the programs of ev with ctx (one of struct gpux_cev_*). For a
 * launch, ptx_name is the function's PTX (mangled) name, matched against
 * cuda:launch:GLOB filters; NULL for the other events. */
void rt_cev_fire(enum gpux_cev ev, const void *ctx, size_t size, const char *ptx_name);
/* Loads the programs at the first event (then rt_cev_wanted is the
 * session's); false when there are none, or no controller. */
bool rt_cev_ready(void);
/* From the runtime thread: a map dump when snap is set. */
void rt_host_poll(bool snap);
/* At exit, or on a fatal signal (rt_crash.c): the last records and the
 * final dump of the cuda: programs' maps. */
void rt_host_final(void);
/* The host table of device map dev_map (a map cuda: probes write and
 * gdev: probes read: the canonical copy), or NULL. */
void *rt_host_table(uint32_t dev_map);
/* rt_push.c: before a launch on stream s (per_thread: a _ptsz call),
 * copies the slots of such maps changed since the current context's
 * last push into its device tables, ordered before the kernel. */
void rt_host_push(CUstream s, bool per_thread);

/* ---- rt_allocs.c: the allocations cuda:malloc and cuda:free saw ---- */
struct rt_alloc {
	uint64_t base, size;
	bool managed;
};
void rt_alloc_add(uint64_t base, uint64_t size, bool managed);
void rt_alloc_remove(uint64_t base);
/* The allocation holding p; false when none does. */
bool rt_alloc_find(uint64_t p, struct rt_alloc *out);
void rt_allocs_forget(void);

/* ---- rt_actions.c: what cuda: probes ask of the driver (prefetch,
 * evict, advise) and of the allocations, served to the VM
 * (abi/cuda_actions.h) ---- */
struct vm;
void rt_actions_attach(struct vm *vm);
/* The event about to run its programs: actions are ordered on its
 * stream (0 for events without one). */
void rt_actions_event(enum gpux_cev ev, const void *ctx);
/* The device of the events this thread fires next (the `gpu` builtin of
 * cuda: probes): dev, or the current context's with -1. A thread that
 * fires events of another context than its current one (cuda:kernel_end's
 * poller) says which. */
void rt_actions_event_gpu(int dev);
/* The event's GPU, as the gpu builtin reads it in a cuda: probe. */
uint64_t rt_actions_gpu(void);
/* Where the counts go: the process's host region, once it has one. */
void rt_actions_counts(struct gpux_act_count *acts);

/* ---- rt_kernel_end.c: cuda:kernel_end (the launch side is in rt_hooks.h) ---- */
/* One look at the pending launches, never waiting (the runtime thread). */
void rt_kend_poll(void);
/* After a synchronize of the program's: what it waited for is delivered
 * (timed by events; CUPTI's records come within 100 ms). */
void rt_kend_sync(void);
/* Before a context goes (dev >= 0: the primary context of that device,
 * released or reset; ctx otherwise): its work is waited for and
 * delivered, its events and stream destroyed. */
void rt_kend_ctx_ending(CUcontext ctx, int dev);
/* At exit (and on a fatal signal, crash set: then nothing is destroyed
 * and the wait for another thread is bounded): every context's work
 * delivered; nothing is timed after. */
void rt_kend_final(bool crash);
/* CUPTI's totals (rt_cupti.c): kernels delivered, records dropped. */
void rt_kend_count(uint64_t done, uint64_t dropped);

/* rt_session.c: device dev's name into the segment (once per process). */
void rt_sess_gpu_name(int dev);

/* ---- rt_graph_ev.c: cuda:graph_launch ---- */
/* x was instantiated from g (its nodes counted when the event is
 * wanted); x was destroyed; x was launched into s (the event). */
void rt_graph_ev_instantiated(CUgraphExec x, CUgraph g);
void rt_graph_ev_destroyed(CUgraphExec x);
void rt_graph_ev_launched(CUgraphExec x, CUstream s);

/* ---- rt_cupti.c: cuda:kernel_end from CUPTI's activity records ---- */
/* Whether CUPTI times kernels in this process (tried once). */
bool rt_cupti_on(void);
/* A launch goes into stream s (the per-thread default one when pt):
 * what CUPTI's ids for it stand for. */
void rt_cupti_launch(CUstream s, bool pt);
/* Records delivered: now, or when the last flush is old enough. */
void rt_cupti_flush(bool now);
/* The controller is gone (gpux -p's detach): the driver stops making
 * records, so the program runs as it did before (not under rt_lock:
 * delivery takes it). */
void rt_cupti_stop(void);
/* CUPTI takes one set of buffer callbacks per process: a later gpux -p's
 * copy of the runtime cannot register its own. The instance that did
 * (the owner) then hands its buffers on to the one that adopts them
 * (gpux_rt_cupti_adopt, exported). The copy must also drive the same
 * libcupti as the earlier instances: it sits in another folder, so the
 * one "beside the runtime" is not found, and a second libcupti in the
 * process would claim the driver's callbacks again (every launch then
 * pays for its failed start). gpux_rt_cupti_lib, exported, names the
 * one an instance opened. rt_attach.c passes the earlier instances'
 * here before this instance starts CUPTI. */
typedef void (*rt_fn)(void); /* any function, cast back before a call */
typedef int (*rt_cupti_adopt_fn)(rt_fn requested, rt_fn completed);
struct rt_cupti_peer {
	rt_cupti_adopt_fn adopt;   /* NULL where an older runtime has none */
	const char *(*lib)(void);  /* likewise; it answers NULL before it opened one */
	char dir[512];             /* the folder it was loaded from ("" if too long) */
};
void rt_cupti_set_peers(const struct rt_cupti_peer *peers, int n);

/* ---- rt_live.c: live sessions (GPUX_SESS_LIVE) ---- */
/* Whether this is one (then the runtime thread runs from the start). */
bool rt_live(void);
/* Whether launches are counted and timed for :top (GPUX_SESS_TOP). */
bool rt_live_top(void);
/* A module or library the program loaded (untouched) from image, with
 * n JIT options (its copies are compiled under those that shape code). */
void rt_live_loaded(const void *handle, bool lib, const void *image, size_t size, unsigned n,
		    const CUjit_option *opt, void *const *val);
void rt_live_unloaded(const void *handle);
/* Around a launch going in: held while the controller pauses launches. */
void rt_live_enter(void);
void rt_live_leave(void);
/* What to launch for the program's f: its namesake instrumented with
 * the current generation's probes in this context, or f. */
CUfunction rt_live_fn(CUfunction f);
/* Whether stream s (a _ptsz call's when pt) is being captured into a
 * graph: its launches stay the program's functions, which the graph's
 * own launches swap (rt_live_graph.c). */
bool rt_live_capturing(CUstream s, bool pt);
/* The current generation of functions (bumped at every move). */
unsigned rt_live_gen(void);
/* A launch of to (for f) failed: f is launched instead (said once). */
void rt_live_failed(CUfunction f, CUfunction to, CUresult rc);
/* From the runtime thread: moves to a new generation once there is one. */
void rt_live_poll(void);
/* rt_attach_images.c (gpux -p): the fatbins registered in the loaded
 * objects, read at attach; the wrapper holding kernel (a mangled name)
 * or NULL; whether the runtime joined a running process. */
void rt_attach_images_scan(void);
const void *rt_attach_image_of(const char *kernel);
bool rt_attached_late(void);
/* rt_attach.c: gpux -p is moving the program's bindings over. Until it
 * is done some launches reach the runtime and others not yet (those of
 * libraries scanned later): no cuda: event is made and no kernel timed,
 * else CUPTI would record launches cuda:launch has not seen. */
bool rt_attach_binding(void);
/* rt_live_top.c: a launch of f with threads threads went in (in the
 * current context); a launch of kernel id took ns of GPU time on device
 * dev (from cuda:kernel_end's events). */
void rt_live_count(CUfunction f, uint64_t threads);
void rt_live_timed(uint32_t id, uint64_t ns, int dev);
/* rt_live_graph.c: executable graphs. Around a launch (or upload) of x:
 * its kernel nodes set to the current generation's functions, then (it
 * went in) its kernels counted for :top. Before a generation's modules
 * are unloaded, with no launch going in: every graph back to the
 * program's functions. A context ended (ctx, or dev's primary one when
 * ctx is NULL): its graphs are forgotten. */
void rt_live_graph_prepare(CUgraphExec x);
void rt_live_graph_launched(CUgraphExec x);
void rt_live_graph_restore(void);
void rt_live_graph_ctx_gone(CUcontext ctx, int dev);

/* ---- rt_drain.c ---- */
/* CLOCK_MONOTONIC in ns, and milliseconds since t0 (for -v reports). */
uint64_t rt_now_ns(void);
double rt_ms_since(uint64_t t0);
void rt_drain_start(void);
void rt_drain_stop(void);

/* One lock for loading, setup and snapshots (never on the launch path). */
extern pthread_mutex_t rt_lock;

#endif
