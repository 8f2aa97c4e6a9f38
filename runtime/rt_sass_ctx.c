/* The Sanitizer's patch module in each context (sass_ptx.h): compiled
 * once per process and GPU architecture, added to the context, its
 * variables found by the boot kernel and set up as a patched module's
 * are; the kernels' records in the context's device memory; the end. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt_sass_priv.h"
#include "rt_hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The patch module's cubin for arch and the boot module's PTX: made
 * once per process and architecture. */
static bool patch_module(unsigned arch, const void **cubin, const char **boot)
{
	static struct {
		unsigned arch;
		void *cubin;
		char *boot;
	} made[4];
	static int nmade;
	for (int i = 0; i < nmade; i++)
		if (made[i].arch == arch) {
			*cubin = made[i].cubin;
			*boot = made[i].boot;
			return true;
		}
	if (nmade == 4)
		return false;
	struct gpux_sess_hdr *h = rt_sess();
	struct sass_ptx out;
	char err[300];
	if (sass_ptx_make((const char *)h + h->ptx_off, h->ptx_len, rt_sass_probes, rt_sass_nprobes, h->nmaps,
			  &out, err, sizeof(err))) {
		snprintf(rt_sass_why, sizeof(rt_sass_why), "cannot make the patch module: %s", err);
		return false;
	}
	size_t size = 0;
	void *c = rt_ptxas_tools_patch(out.patch, arch, &size, err, sizeof(err));
	free(out.patch);
	if (!c) {
		free(out.boot);
		snprintf(rt_sass_why, sizeof(rt_sass_why), "%s", err);
		return false;
	}
	made[nmade].arch = arch;
	made[nmade].cubin = c;
	made[nmade].boot = out.boot;
	*cubin = c;
	*boot = made[nmade++].boot;
	return true;
}

/* The boot kernel's launch: the patch module's variables' addresses
 * into x->sass_tab; its clock sampler kept for the clock. */
static bool boot(struct rt_ctx *x, const char *ptx)
{
	load_fn load = REAL(H_LOAD, "cuModuleLoadData", load_fn);
	CUmodule m;
	CUfunction f;
	CUdeviceptr tab;
	size_t n = GPUX_SASS_T_MAPS + rt_sess()->nmaps;
	if (!load || load(&m, ptx) != CUDA_SUCCESS ||
	    rt_cu.ModuleGetFunction(&f, m, GPUX_SASS_BOOT) != CUDA_SUCCESS) {
		snprintf(rt_sass_why, sizeof(rt_sass_why), "the driver refused the boot module");
		return false;
	}
	int rc = rt_san.PatchInstructions(SAN_BLOCK_ENTER, m, GPUX_SASS_CB_BOOT);
	if (rc == SAN_OK)
		rc = rt_san.PatchModule(m);
	if (rc != SAN_OK || rt_cu.MemAlloc(&tab, n * 8) != CUDA_SUCCESS) {
		snprintf(rt_sass_why, sizeof(rt_sass_why), "patching the boot module failed (%s)",
			 rc != SAN_OK ? rt_san_err(rc) : "no memory");
		return false;
	}
	bool ok = rt_cu.MemsetD8Async(tab, 0, n * 8, x->stream) == CUDA_SUCCESS &&
		  rt_san.SetCallbackData(f, (const void *)(uintptr_t)tab) == SAN_OK &&
		  rt_cu.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, x->stream, NULL, NULL) ==
			  CUDA_SUCCESS &&
		  rt_cu.MemcpyDtoHAsync(x->sass_tab, tab, n * 8, x->stream) == CUDA_SUCCESS &&
		  rt_cu.StreamSynchronize(x->stream) == CUDA_SUCCESS;
	rt_cu.MemFree(tab);
	for (size_t i = 0; ok && i < n; i++)
		ok = x->sass_tab[i] != 0;
	if (!ok) {
		snprintf(rt_sass_why, sizeof(rt_sass_why), "the boot kernel did not report");
		return false;
	}
	if (rt_cu.ModuleGetFunction(&f, m, GPUX_SYM_CLOCK_SAMPLE) == CUDA_SUCCESS) {
		x->sass_sampler = f;
		if (!x->clock_done)
			rt_clock_calibrate(x, f);
	}
	return true;
}

bool rt_sass_ctx_ready(struct rt_ctx *x)
{
	if (x->sass)
		return x->sass > 0;
	x->sass = -1;
	const void *cubin;
	const char *boot_ptx;
	if (rt_sess()->nmaps > GPUX_SASS_MAX_MAPS) {
		snprintf(rt_sass_why, sizeof(rt_sass_why), "more than %d maps", GPUX_SASS_MAX_MAPS);
		return false;
	}
	if (!patch_module(rt_device_arch(x->device), &cubin, &boot_ptx))
		return false;
	int rc = rt_san.AddPatches(cubin, x->ctx);
	if (rc != SAN_OK) {
		snprintf(rt_sass_why, sizeof(rt_sass_why), "the Sanitizer refused the patch module (%s)",
			 rt_san_err(rc));
		return false;
	}
	if (!boot(x, boot_ptx))
		return false;
	RT_TRACE("sass: context %p: patch module added, booted", (void *)x->ctx);
	x->sass = 1; /* before setup: rt_ctx_global reaches it now */
	if (!rt_ctx_setup_sass(x)) {
		x->sass = -1;
		snprintf(rt_sass_why, sizeof(rt_sass_why), "setting up the patch module failed");
		return false;
	}
	return true;
}

CUresult rt_sass_global(CUdeviceptr *d, size_t *sz, void *handle, const char *name)
{
	struct rt_ctx *x = handle;
	size_t n = strlen(GPUX_SYM_MAP);
	if (x->sass <= 0)
		return CUDA_ERROR_NOT_FOUND;
	if (!strcmp(name, GPUX_SYM_CTL)) {
		*d = x->sass_tab[GPUX_SASS_T_CTL];
		*sz = sizeof(struct gpux_ctl);
	} else if (!strcmp(name, GPUX_SYM_CLOCK_OFF)) {
		*d = x->sass_tab[GPUX_SASS_T_CLOCK];
		*sz = sizeof(struct gpux_clock);
	} else if (!strcmp(name, GPUX_SYM_GPU)) {
		*d = x->sass_tab[GPUX_SASS_T_GPU];
		*sz = sizeof(uint32_t);
	} else if (!strncmp(name, GPUX_SYM_MAP, n)) {
		unsigned long i = strtoul(name + n, NULL, 10);
		if (i >= rt_sess()->nmaps || i >= GPUX_SASS_MAX_MAPS)
			return CUDA_ERROR_NOT_FOUND;
		*d = x->sass_tab[GPUX_SASS_T_MAPS + i];
		*sz = GPUX_MAP_DESC_SIZE;
	} else {
		return CUDA_ERROR_NOT_FOUND;
	}
	return CUDA_SUCCESS;
}


#define RECS_PER_CHUNK 1024

CUdeviceptr rt_sass_new_record(struct rt_ctx *x)
{
	if (!x->nsass_chunks || x->sass_used == RECS_PER_CHUNK) {
		CUdeviceptr *v = realloc(x->sass_chunks, (size_t)(x->nsass_chunks + 1) * sizeof(*v));
		if (!v)
			return 0;
		x->sass_chunks = v;
		size_t bytes = RECS_PER_CHUNK * sizeof(struct gpux_sass_kernel);
		if (rt_cu.MemAlloc(&v[x->nsass_chunks], bytes) != CUDA_SUCCESS)
			return 0;
		rt_cu.MemsetD8Async(v[x->nsass_chunks], 0, bytes, x->stream);
		x->nsass_chunks++;
		x->sass_used = 0;
	}
	return x->sass_chunks[x->nsass_chunks - 1] +
	       (CUdeviceptr)(x->sass_used++ * sizeof(struct gpux_sass_kernel));
}



void rt_sass_ctx_off(struct rt_ctx *x)
{
	for (int i = 0; i < x->nsass_chunks; i++)
		rt_cu.MemsetD8Async(x->sass_chunks[i], 0,
				    RECS_PER_CHUNK * sizeof(struct gpux_sass_kernel), x->stream);
}

void rt_sass_finish(struct rt_ctx *x)
{
	uint64_t lost = 0;
	if (x->sass > 0 &&
	    rt_cu.MemcpyDtoHAsync(&lost, x->sass_tab[GPUX_SASS_T_NODATA], 8, x->stream) ==
		    CUDA_SUCCESS &&
	    rt_cu.StreamSynchronize(x->stream) == CUDA_SUCCESS && lost)
		rt_warn("%llu SASS-patched calls found no kernel record (kernels launched where "
			"gpux does not see launches); their probes did not fire",
			(unsigned long long)lost);
	free(x->sass_chunks);
	x->sass_chunks = NULL;
	x->nsass_chunks = 0;
	rt_sass_ctx_gone(x->ctx);
}
