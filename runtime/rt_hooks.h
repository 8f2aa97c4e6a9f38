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

/* libcuda's function behind each hook: captured when the program
 * fetches it, else looked up on first use. */
enum hook_id {
	H_GPA, H_GPA2, H_LOAD, H_LOAD_FILE, H_LOAD_EX, H_LOAD_FAT, H_LIB_LOAD, H_LINK_ADD,
	H_LINK_ADD2, H_MOD_UNLOAD, H_LIB_UNLOAD, H_CTX_DESTROY, H_PRIM_RELEASE, H_PRIM_RESET,
	H_LAUNCH, H_LAUNCH_PT, H_LAUNCH_EX, H_LAUNCH_EX_PT, H_COOP, H_COOP_PT, H_GRAPH,
	H_GRAPH_PT, H_COUNT
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
const char *rt_patch(const void *image, size_t size);
/* The hook for an nvJitLink entry point (rt_nvjitlink.c), or NULL. */
void *rt_nvjitlink_hook(const char *name, void *real_fn);

/* The exported hooks, by the symbol name the program asks for
 * (rt_entry.c): NULL if name is not hooked. */
void *rt_hook_for(const char *name, void *real_fn);

#endif
