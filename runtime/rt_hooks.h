/* The hooked driver entry points: ids, signatures, and libcuda's own
 * function behind each (rt_interpose.c, rt_entry.c). */
#ifndef GPUX_RT_HOOKS_H
#define GPUX_RT_HOOKS_H

#include "rt.h"

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			    unsigned, unsigned, CUstream, void **);
typedef CUresult (*graph_fn)(CUgraphExec, CUstream);
typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t,
			    CUdriverProcAddressQueryResult *);
typedef CUresult (*load_fn)(CUmodule *, const void *);
typedef CUresult (*load_file_fn)(CUmodule *, const char *);
typedef CUresult (*load_ex_fn)(CUmodule *, const void *, unsigned, CUjit_option *, void **);
typedef CUresult (*lib_load_fn)(CUlibrary *, const void *, CUjit_option *, void **, unsigned,
				CUlibraryOption *, void **, unsigned);
typedef CUresult (*link_add_fn)(CUlinkState, CUjitInputType, void *, size_t, const char *,
				unsigned, CUjit_option *, void **);
typedef CUresult (*mod_unload_fn)(CUmodule);
typedef CUresult (*lib_unload_fn)(CUlibrary);
typedef CUresult (*ctx_destroy_fn)(CUcontext);
typedef CUresult (*dev_fn)(CUdevice);
typedef CUresult (*init_fn)(unsigned);

/* libcuda's function behind each hook: captured when the program
 * fetches it, else looked up on first use. */
enum hook_id {
	H_INIT, H_GPA, H_GPA2, H_LOAD, H_LOAD_FILE, H_LOAD_EX, H_LOAD_FAT, H_LIB_LOAD, H_LINK_ADD,
	H_LINK_ADD2, H_MOD_UNLOAD, H_LIB_UNLOAD, H_CTX_DESTROY, H_PRIM_RELEASE, H_PRIM_RESET,
	H_LAUNCH, H_LAUNCH_PT, H_LAUNCH_EX, H_LAUNCH_EX_PT, H_COOP, H_COOP_PT, H_GRAPH,
	H_GRAPH_PT,
	/* rt_api.c: the cuda: events of memory and synchronization (_PT: the
	 * per-thread-default-stream variant, _ptds or _ptsz) */
	H_MALLOC, H_MALLOC_PITCH, H_MALLOC_MANAGED, H_MALLOC_ASYNC, H_MALLOC_ASYNC_PT,
	H_MALLOC_POOL, H_MALLOC_POOL_PT, H_FREE, H_FREE_ASYNC, H_FREE_ASYNC_PT,
	H_MEMCPY, H_MEMCPY_PT, H_MEMCPY_ASYNC, H_MEMCPY_ASYNC_PT, H_HTOD, H_HTOD_PT, H_DTOH,
	H_DTOH_PT, H_DTOD, H_DTOD_PT, H_HTOD_ASYNC, H_HTOD_ASYNC_PT, H_DTOH_ASYNC,
	H_DTOH_ASYNC_PT, H_DTOD_ASYNC, H_DTOD_ASYNC_PT, H_PEER, H_PEER_PT, H_PEER_ASYNC,
	H_PEER_ASYNC_PT, H_2D, H_2D_PT, H_2D_ASYNC, H_2D_ASYNC_PT, H_3D, H_3D_PT, H_3D_ASYNC,
	H_3D_ASYNC_PT, H_STREAM_SYNC, H_STREAM_SYNC_PT, H_CTX_SYNC, H_CTX_SYNC2,
	/* rt_original.c: queries the original kernels answer */
	H_FN_GET_ATTR, H_K_GET_ATTR, H_FN_SET_ATTR, H_FN_SET_CACHE, H_K_SET_ATTR,
	H_K_SET_CACHE, H_OCC_BLOCKS, H_OCC_BLOCKS_FL, H_OCC_SIZE, H_OCC_SIZE_FL, H_OCC_SMEM,
	H_OCC_CLUSTER_SIZE, H_OCC_CLUSTERS,
	/* rt_live_graph.c: executable graphs in live sessions */
	H_G_INST, H_G_INST2, H_G_INST_FL, H_G_INST_PAR, H_G_INST_PAR_PT, H_G_UPDATE,
	H_G_UPDATE2, H_G_EXEC_DESTROY, H_G_UPLOAD, H_G_UPLOAD_PT, H_G_KSET, H_G_KSET2,
	H_G_NSET, H_G_MEMCPY, H_G_MEMSET, H_G_HOST, H_G_CHILD, H_G_EVREC, H_G_EVWAIT,
	H_G_SEMSIG, H_G_SEMWAIT, H_G_BATCH, H_G_ENABLE, H_G_ENABLED,
	H_COUNT
};

extern void *rt_real_fn[H_COUNT];
void *rt_real_of(enum hook_id id, const char *sym);

#define REAL(id, sym, type) ((type)rt_real_of(id, sym))
#define NO_CUDA CUDA_ERROR_NOT_INITIALIZED


/* rt_interpose.c's hook for the unversioned cuLinkAddData symbol. */
CUresult gpux_cuLinkAddData_v1(CUlinkState st, CUjitInputType type, void *data, size_t size,
			       const char *name, unsigned n, CUjit_option *o, void **v)
	__asm__("cuLinkAddData");

/* rt_image_patch under rt_lock (rt_interpose.c). */
const char *rt_patch(const void *image, size_t size, enum rt_patch_as as);
/* Loads patched text with the caller's JIT options (n of opt, val) and
 * an error log; says why on failure. */
CUresult rt_load_patched(CUmodule *m, const char *ptx, unsigned n, CUjit_option *opt,
			 void **val);
/* With -v: each kernel's registers and local memory without and with
 * probes, the original image loaded beside patched to ask (rt_regs.c);
 * ptx is the patched text (a relinked cubin is not asked about). */
void rt_regs_report(CUmodule patched, const char *ptx);
/* The hook for an nvJitLink entry point (rt_nvjitlink.c), or NULL. */
void *rt_nvjitlink_hook(const char *name, void *real_fn);

/* The exported hooks, by the symbol name the program asks for
 * (rt_entry.c): NULL if name is not hooked. */
void *rt_hook_for(const char *name, void *real_fn);

/* A hook table entry. cuGetProcAddress is asked for base at a CUDA
 * version: it answers with the variant of the highest since <= that
 * version, the per-thread one (pt) when the flags ask for it. */
struct rt_hook {
	const char *name;
	const char *base;
	int since;
	bool pt;
	enum hook_id id;
	void *fn;
};
/* Every hook (rt_entry.c); the hook cuGetProcAddress(sym, ver, flags)
 * answers with for libcuda's real_fn, or NULL (not hooked). */
void rt_hooks_each(void (*fn)(const struct rt_hook *h, void *arg), void *arg);
void *rt_hook_gpa(const char *sym, void *real_fn, int ver, cuuint64_t flags);
/* rt_api.c's hooks, rt_original.c's and rt_live_graph.c's (rt_entry.c
 * has the others). */
extern const struct rt_hook rt_api_hooks[];
extern const size_t rt_api_nhooks;
extern const struct rt_hook rt_original_hooks[];
extern const size_t rt_original_nhooks;
extern const struct rt_hook rt_graph_hooks[];
extern const size_t rt_graph_nhooks;

/* ---- rt_original.c ---- */
/* handle (a CUmodule, or a CUlibrary) was loaded from patched text. */
void rt_original_note(const void *handle, bool library, const char *patched);
/* handle is unloaded / ctx destroyed (NULL: a primary context ended):
 * their originals go too. */
void rt_original_unloaded(const void *handle);
void rt_original_ctx_gone(CUcontext ctx);

/* ---- cuda: events (rt_cev_util.c, rt_launch_ev.c) ---- */
/* rt_cev_fire, after logging ctx's fields under GPUX_RT_TRACE=1. */
void rt_cev_emit(enum gpux_cev ev, const void *ctx, size_t size, const char *ptx_name);
/* cuda:module_load for handle, loaded from the image the program gave
 * (size: bytes if known, else 0). Call only when the event is on. */
void rt_cev_module(const void *handle, const void *image, size_t size);
/* cuda:launch of f, before the launch; call only when the event is on.
 * p and e are the launch's kernelParams and extra (either may be NULL). */
void rt_launch_ev(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		  unsigned by, unsigned bz, unsigned shmem, CUstream s, void **p, void **e);
/* Forgets the kernel names of function handles, which the driver may
 * reuse once their module, library or context is gone. */
void rt_launch_names_forget(void);
/* f's name as cuda:launch has it: kernel (GPUX_CEV_STR bytes,
 * zero-padded), the name table's id, the PTX name; the strings live as
 * long as the process (interned records). */
struct rt_kname {
	const char *kernel;
	uint32_t id;
	const char *ptx;
};
struct rt_kname rt_launch_name(CUfunction f);

/* ---- cuda:kernel_end (rt_kernel_end.c) ---- */
/* Around a launch on stream s (per_thread: a _ptsz call) while the
 * event is on: rt_kend_before records the start event and returns a
 * ticket (-1: nothing recorded: off, capturing, full); rt_kend_after
 * records the end event once the launch went in (rc CUDA_SUCCESS), else
 * gives the ticket back. */
int rt_kend_before(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		   unsigned by, unsigned bz, unsigned shmem, CUstream s, bool per_thread);
void rt_kend_after(int ticket, CUresult rc);

#endif
