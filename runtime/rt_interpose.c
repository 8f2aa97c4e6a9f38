/* How the runtime sees every module a program loads and every launch:
 *  - dlsym: static cudart (nvcc's default) and libcudart.so dlopen
 *    libcuda and fetch cuGetProcAddress with dlsym; ctypes-based
 *    clients (numba) fetch each entry point with dlsym;
 *  - cuGetProcAddress(_v2): cudart takes every other entry point
 *    through it, _ptsz variants included;
 *  - the same entry points exported under their own names, for
 *    programs linked against libcuda (driver-API programs).
 * Each hook forwards to libcuda's own function. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt_hooks.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *rt_real_fn[H_COUNT];

void *rt_real_of(enum hook_id id, const char *sym)
{
	void *p = __atomic_load_n(&rt_real_fn[id], __ATOMIC_ACQUIRE);
	if (!p) {
		p = rt_cuda_sym(sym);
		if (!p) /* the program linked libcuda: the next definition */
			p = rt_real_dlsym(RTLD_NEXT, sym);
		__atomic_store_n(&rt_real_fn[id], p, __ATOMIC_RELEASE);
	}
	return p;
}

/* ---------------- module loading ---------------- */

const char *rt_patch(const void *image, size_t size, enum rt_patch_as as)
{
	RT_TRACE("module image %p (%.4s...)", image, image ? (const char *)image : "");
	if (!image || !rt_sess() || rt_live() || rt_in_sass)
		return NULL; /* live: instrumented at launch (rt_live.c) */
	pthread_mutex_lock(&rt_lock);
	const char *ptx = rt_image_patch(image, size, as);
	pthread_mutex_unlock(&rt_lock);
	return ptx;
}

static void loaded_module(CUmodule m)
{
	if (!rt_sess())
		return;
	rt_saw_cuda();
	pthread_mutex_lock(&rt_lock);
	rt_module_loaded(m);
	pthread_mutex_unlock(&rt_lock);
}

static bool is_elf(const void *image)
{
	return image && !memcmp(image, "\x7f" "ELF", 4);
}

/* The program's module m loaded from patched text (PTX, or a cubin the
 * runtime linked again): set up, its original remembered for queries,
 * and with -v what the probes cost its kernels. */
static void loaded_patched(CUmodule m, const char *ptx)
{
	loaded_module(m);
	rt_original_note(m, false, ptx);
	if ((rt_sess()->flags & GPUX_SESS_VERBOSE) && !is_elf(ptx))
		rt_regs_report(m, ptx);
}

/* A load whose JIT options shape the code (registers, optimization,
 * target, debug information...) gets PTX, compiled under them; only
 * the logs and timings leave a link with the library's cubin alone. */
static enum rt_patch_as patch_as(unsigned n, const CUjit_option *opt)
{
	for (unsigned i = 0; opt && i < n; i++)
		switch (opt[i]) {
		case CU_JIT_WALL_TIME:
		case CU_JIT_INFO_LOG_BUFFER:
		case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
		case CU_JIT_ERROR_LOG_BUFFER:
		case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
		case CU_JIT_LOG_VERBOSE:
			break;
		default:
			return RT_AS_JIT;
		}
	return RT_AS_LOAD;
}

/* What -v says was loaded: a linked cubin loads as it is; PTX is
 * compiled by the driver (its JIT cache aside), the library's with it. */
static const char *what(const char *patched)
{
	return is_elf(patched) ? "a linked cubin" : "PTX with the helper library";
}

/* Loads a patched module with the caller's JIT options plus an error
 * log; on failure says why, so the caller can load the original. */
CUresult rt_load_patched(CUmodule *m, const char *ptx, unsigned n, CUjit_option *opt,
			 void **val)
{
	load_ex_fn fn = REAL(H_LOAD_EX, "cuModuleLoadDataEx", load_ex_fn);
	if (!fn)
		return NO_CUDA;
	char log[4096];
	CUjit_option o[33];
	void *v[33];
	unsigned k = 0;
	for (unsigned i = 0; i < n && k < 30; i++)
		if (opt[i] != CU_JIT_ERROR_LOG_BUFFER && opt[i] != CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
			o[k] = opt[i];
			v[k++] = val[i];
		}
	log[0] = 0;
	o[k] = CU_JIT_ERROR_LOG_BUFFER;
	v[k++] = log;
	o[k] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
	v[k++] = (void *)(uintptr_t)sizeof(log);
	uint64_t t0 = rt_now_ns();
	CUresult rc = fn(m, ptx, k + rt_split_compile(o + k, v + k, opt, n), o, v);
	if (rc == CUDA_ERROR_INVALID_VALUE) /* a driver without the option */
		rc = fn(m, ptx, k, o, v);
	if (rc == CUDA_SUCCESS && (rt_sess()->flags & GPUX_SESS_VERBOSE))
		rt_warn("the driver loaded a patched module (%s) in %.1f ms", what(ptx),
			rt_ms_since(t0));
	if (rc != CUDA_SUCCESS) {
		char *nl = strchr(log, '\n');
		if (nl)
			*nl = 0;
		rt_warn("the driver refused a patched module (%s%s%s); it runs untouched",
			rt_cu_err(rc), *log ? ": " : "", log);
	}
	return rc;
}

/* cuda:module_load after a successful load: the handle, and what the
 * program gave (not the patched PTX loaded in its place). */
static inline CUresult module_ev(CUresult rc, const void *handle, const void *image,
				 size_t size)
{
	if (rc == CUDA_SUCCESS && rt_cev_on(GPUX_CEV_MODULE_LOAD))
		rt_cev_module(handle, image, size);
	return rc;
}

static CUresult load_any(CUmodule *m, const void *image, unsigned n, CUjit_option *opt,
			 void **val, CUresult (*orig)(CUmodule *, const void *, unsigned,
						      CUjit_option *, void **, void *),
			 void *orig_arg)
{
	const char *ptx = rt_patch(image, 0, patch_as(n, opt));
	if (ptx && rt_load_patched(m, ptx, n, opt, val) == CUDA_SUCCESS) {
		loaded_patched(*m, ptx);
		return module_ev(CUDA_SUCCESS, *m, image, 0);
	}
	CUresult rc = orig(m, image, n, opt, val, orig_arg);
	if (rc == CUDA_SUCCESS && is_elf(image))
		loaded_module(*m); /* a cubin linked from patched PTX (numba) */
	if (rc == CUDA_SUCCESS) {
		rt_live_loaded(*m, false, image, 0, n, opt, val);
		rt_sass_loaded(*m, false, image);
	}
	return module_ev(rc, rc == CUDA_SUCCESS ? *m : NULL, image, 0);
}

static CUresult orig_load(CUmodule *m, const void *image, unsigned n, CUjit_option *o,
			  void **v, void *arg)
{
	(void)n, (void)o, (void)v, (void)arg;
	load_fn fn = REAL(H_LOAD, "cuModuleLoadData", load_fn);
	return fn ? fn(m, image) : NO_CUDA;
}

static CUresult orig_load_ex(CUmodule *m, const void *image, unsigned n, CUjit_option *o,
			     void **v, void *arg)
{
	(void)arg;
	load_ex_fn fn = REAL(H_LOAD_EX, "cuModuleLoadDataEx", load_ex_fn);
	return fn ? fn(m, image, n, o, v) : NO_CUDA;
}

static CUresult orig_load_fat(CUmodule *m, const void *image, unsigned n, CUjit_option *o,
			      void **v, void *arg)
{
	(void)n, (void)o, (void)v, (void)arg;
	load_fn fn = REAL(H_LOAD_FAT, "cuModuleLoadFatBinary", load_fn);
	return fn ? fn(m, image) : NO_CUDA;
}

CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
	return load_any(m, image, 0, NULL, NULL, orig_load, NULL);
}

CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, CUjit_option *o,
			    void **v)
{
	return load_any(m, image, n, o, v, orig_load_ex, NULL);
}

CUresult cuModuleLoadFatBinary(CUmodule *m, const void *image)
{
	return load_any(m, image, 0, NULL, NULL, orig_load_fat, NULL);
}

CUresult cuModuleLoad(CUmodule *m, const char *path)
{
	size_t len = 0;
	bool want = rt_sess() || rt_cev_on(GPUX_CEV_MODULE_LOAD);
	char *image = want && path ? rt_slurp(path, &len) : NULL;
	if (image && !len) { /* empty: nothing to look at */
		free(image);
		image = NULL;
	}
	const char *ptx = image ? rt_patch(image, len, RT_AS_LOAD) : NULL;
	CUresult rc;
	if (ptx && rt_load_patched(m, ptx, 0, NULL, NULL) == CUDA_SUCCESS) {
		loaded_patched(*m, ptx);
		rc = CUDA_SUCCESS;
	} else {
		load_file_fn fn = REAL(H_LOAD_FILE, "cuModuleLoad", load_file_fn);
		rc = fn ? fn(m, path) : NO_CUDA;
		if (rc == CUDA_SUCCESS && is_elf(image))
			loaded_module(*m);
		if (rc == CUDA_SUCCESS && image)
			rt_live_loaded(*m, false, image, len, 0, NULL, NULL);
		if (rc == CUDA_SUCCESS)
			rt_sass_loaded(*m, false, NULL);
	}
	module_ev(rc, rc == CUDA_SUCCESS ? *m : NULL, image, len);
	free(image);
	return rc;
}

CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo, void **jv,
			   unsigned nj, CUlibraryOption *lo, void **lv, unsigned nl)
{
	lib_load_fn fn = REAL(H_LIB_LOAD, "cuLibraryLoadData", lib_load_fn);
	if (!fn)
		return NO_CUDA;
	const char *ptx = rt_patch(code, 0, patch_as(nj, jo));
	CUresult rc = CUDA_ERROR_INVALID_IMAGE;
	if (ptx) {
		uint64_t t0 = rt_now_ns();
		rc = fn(lib, ptx, jo, jv, nj, lo, lv, nl);
		if (rc == CUDA_SUCCESS && (rt_sess()->flags & GPUX_SESS_VERBOSE))
			rt_warn("the driver loaded a patched library (%s) in %.1f ms", what(ptx),
				rt_ms_since(t0));
		if (rc != CUDA_SUCCESS)
			rt_warn("the driver refused a patched library (%s); it runs untouched",
				rt_cu_err(rc));
		else
			rt_original_note(*lib, true, ptx);
	}
	bool untouched = rc != CUDA_SUCCESS;
	if (untouched) {
		rc = fn(lib, code, jo, jv, nj, lo, lv, nl);
		if (rc == CUDA_SUCCESS)
			rt_live_loaded(*lib, true, code, 0, nj, jo, jv);
	}
	if (rc == CUDA_SUCCESS && (ptx || is_elf(code)) && rt_sess()) {
		pthread_mutex_lock(&rt_lock);
		rt_library_loaded(*lib);
		pthread_mutex_unlock(&rt_lock);
	}
	if (rc == CUDA_SUCCESS && untouched)
		rt_sass_loaded(*lib, true, code);
	return module_ev(rc, rc == CUDA_SUCCESS ? *lib : NULL, code, 0);
}

static CUresult link_add(enum hook_id id, const char *sym, CUlinkState st, CUjitInputType type,
			 void *data, size_t size, const char *name, unsigned n, CUjit_option *o,
			 void **v)
{
	link_add_fn fn = REAL(id, sym, link_add_fn);
	if (!fn)
		return NO_CUDA;
	const char *ptx = NULL;
	if (type == CU_JIT_INPUT_PTX || type == CU_JIT_INPUT_FATBINARY)
		ptx = rt_patch(data, type == CU_JIT_INPUT_PTX ? size : 0, RT_AS_PTX);
	if (ptx && !is_elf(ptx)) {
		CUresult rc = fn(st, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, name, n, o, v);
		if (rc == CUDA_SUCCESS)
			return rc;
		rt_warn("the linker refused patched PTX (%s); it runs untouched", rt_cu_err(rc));
	}
	return fn(st, type, data, size, name, n, o, v);
}

CUresult cuLinkAddData_v2(CUlinkState st, CUjitInputType type, void *data, size_t size,
			  const char *name, unsigned n, CUjit_option *o, void **v)
{
	return link_add(H_LINK_ADD2, "cuLinkAddData_v2", st, type, data, size, name, n, o, v);
}

/* The unversioned symbol, for old programs; same arguments. */
CUresult gpux_cuLinkAddData_v1(CUlinkState st, CUjitInputType type, void *data, size_t size,
			       const char *name, unsigned n, CUjit_option *o, void **v)
{
	return link_add(H_LINK_ADD, "cuLinkAddData", st, type, data, size, name, n, o, v);
}

CUresult cuModuleUnload(CUmodule m)
{
	if (rt_sess()) {
		rt_sass_unloaded(m, false);
		rt_live_unloaded(m);
		pthread_mutex_lock(&rt_lock);
		rt_module_unloaded(m);
		pthread_mutex_unlock(&rt_lock);
	}
	mod_unload_fn fn = REAL(H_MOD_UNLOAD, "cuModuleUnload", mod_unload_fn);
	CUresult rc = fn ? fn(m) : NO_CUDA;
	if (rc == CUDA_SUCCESS)
		rt_original_unloaded(m);
	rt_launch_names_forget(); /* its functions' handles may come back */
	return rc;
}

CUresult cuLibraryUnload(CUlibrary l)
{
	if (rt_sess()) {
		rt_sass_unloaded(l, true);
		rt_live_unloaded(l);
		pthread_mutex_lock(&rt_lock);
		rt_library_unloaded(l);
		pthread_mutex_unlock(&rt_lock);
	}
	lib_unload_fn fn = REAL(H_LIB_UNLOAD, "cuLibraryUnload", lib_unload_fn);
	CUresult rc = fn ? fn(l) : NO_CUDA;
	if (rc == CUDA_SUCCESS)
		rt_original_unloaded(l);
	rt_launch_names_forget(); /* its kernels' handles may come back */
	return rc;
}
