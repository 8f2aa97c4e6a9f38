/* Relocatable device code (nvcc -rdc=true, CMake's
 * CUDA_SEPARABLE_COMPILATION). nvlink's linked module has SASS only; its
 * fatbin wrapper (version 2) also lists the fatbin of every unit linked
 * into it, device runtime objects included: relocatable SASS per arch
 * and, for the program's own files, PTX compiled --compile-only. The
 * driver uses that list to link a module itself when no SASS fits the
 * device; the runtime links it again the same way, from each unit's
 * rewritten PTX where the unit has probed functions and from its
 * relocatable SASS for this device (or its PTX) where not, and loads
 * that cubin instead. The first rewritten unit defines the probes
 * module's data; later ones carry it weak, so the link keeps one copy
 * (ptx_rewrite.h, enum ptx_unit). Kernels keep the register counts of
 * the linked SASS. Where it can (rt_link_lib), the units carry the
 * probes in their link form and the helper library goes into the link
 * once, as its cubin for this device; else each unit carries it as PTX. */
#include "rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubin.h"
#include "fatbin.h"
#include "ptx_rewrite.h"
#include "ptx_vars.h"
#include "rt_helpers.h"

#define MAX_UNITS 4096

/* What a unit goes into the link as. */
struct input {
	CUjitInputType type;
	void *data;   /* malloc'd */
	size_t size;
	bool patched;
};

/* The unit's relocatable SASS for exactly this arch (a link takes no
 * other), malloc'd, or NULL. */
static void *unit_sass(const void *unit, size_t len, unsigned arch, size_t *size)
{
	struct gpux_fb_iter it;
	struct gpux_fb_elem e;
	gpux_fb_iter_init(&it, unit, len);
	while (gpux_fb_next(&it, &e) == GPUX_FB_OK) {
		uint8_t *elf;
		if (e.kind == GPUX_FB_ELF && e.arch == arch &&
		    gpux_fb_elem_data(&e, &elf, size) == GPUX_FB_OK)
			return elf;
	}
	return NULL;
}

/* One unit as a link input: 1 when it has probed functions (patched),
 * 0 when it goes in as it is, -1 when it cannot be linked here. */
static int unit_input(const void *unit, unsigned arch, const struct gpux_cubin_regs *regs,
		      bool later, bool lib, struct input *in)
{
	size_t len;
	if (gpux_fb_container_size(unit, GPUX_FB_HEADER_SIZE, &len))
		return -1;
	struct gpux_fb_elem e;
	unsigned lowest = 0;
	char *ptx = NULL;
	if (gpux_fb_best_ptx(unit, len, arch, &e, &lowest) == GPUX_FB_OK &&
	    gpux_fb_elem_ptx(&e, &ptx) != GPUX_FB_OK)
		ptx = NULL;
	if (ptx && rt_image_probed(ptx)) {
		char *out = rt_image_rewrite(ptx, strlen(ptx), regs,
					     later ? PTX_LATER_UNIT : PTX_FIRST_UNIT, lib, false);
		free(ptx);
		if (!out)
			return -1;
		*in = (struct input){ CU_JIT_INPUT_PTX, out, strlen(out) + 1, true };
		return 1;
	}
	if ((in->data = unit_sass(unit, len, arch, &in->size))) {
		free(ptx);
		in->type = CU_JIT_INPUT_CUBIN;
		in->patched = false;
		return 0;
	}
	if (!ptx)
		return -1;
	*in = (struct input){ CU_JIT_INPUT_PTX, ptx, strlen(ptx) + 1, false };
	return 0;
}

static void inputs_free(struct input *in, int n)
{
	for (int i = 0; in && i < n; i++)
		free(in[i].data);
	free(in);
}

/* Every unit as a link input, kernels capped at regs (NULL: none), the
 * probes in their link form when lib; NULL when a unit cannot go in
 * (said). */
static struct input *inputs(const void *const *units, int n, unsigned arch,
			    const struct gpux_cubin_regs *regs, bool lib, int *patched)
{
	struct input *in = calloc((size_t)n, sizeof(*in));
	if (!in) {
		rt_warn("out of memory: a module of relocatable device code runs untouched");
		return NULL;
	}
	*patched = 0;
	for (int i = 0; i < n; i++) {
		int rc = unit_input(units[i], arch, regs, *patched > 0, lib, &in[i]);
		if (rc < 0) {
			rt_warn("unit %d of %d of a module of relocatable device code cannot be "
				"instrumented, or has no code for sm_%u to link; the module runs "
				"untouched", i + 1, n, arch);
			inputs_free(in, n);
			return NULL;
		}
		*patched += rc > 0;
	}
	return in;
}

/* One link of every unit: kernels capped at regs (NULL: none), every
 * function compiled from PTX within their lowest count (nvlink checks a
 * kernel's cap against each function it calls by name, and every unit
 * has the probes' functions under the same names); with the helper
 * library's cubin within that count when lib. NULL with err; *linkable
 * false when a unit cannot go in at all (said). */
static void *link_units(const void *const *units, int n, unsigned arch,
			const struct gpux_cubin_regs *regs, bool lib, int *patched, size_t *size,
			char *err, size_t errlen, bool *linkable)
{
	struct input *in = inputs(units, n, arch, regs, lib, patched);
	struct rt_link_in *li = in ? calloc((size_t)n + 1, sizeof(*li)) : NULL;
	void *cubin = NULL;
	*linkable = in != NULL;
	if (in && !li)
		snprintf(err, errlen, "out of memory");
	if (li) {
		unsigned lowest = rt_regs_lowest(regs), lib_regs;
		for (int i = 0; i < n; i++)
			li[i] = (struct rt_link_in){ in[i].type, in[i].data, in[i].size };
		int m = n;
		size_t lib_size = 0;
		const void *lc = lib && *patched ? rt_helper_cubin(arch, lowest, &lib_size, &lib_regs)
						 : NULL;
		if (lc)
			li[m++] = (struct rt_link_in){ CU_JIT_INPUT_CUBIN, lc, lib_size };
		if (lib && *patched && !lc)
			snprintf(err, errlen, "cannot unpack it");
		else
			cubin = rt_link(li, m, lowest, size, err, errlen);
	}
	free(li);
	inputs_free(in, n);
	return cubin;
}

/* A unit's PTX for arch (malloc'd), or NULL. */
static char *unit_ptx(const void *unit, unsigned arch)
{
	size_t len;
	struct gpux_fb_elem e;
	char *ptx;
	if (gpux_fb_container_size(unit, GPUX_FB_HEADER_SIZE, &len) ||
	    gpux_fb_best_ptx(unit, len, arch, &e, NULL) != GPUX_FB_OK ||
	    gpux_fb_elem_ptx(&e, &ptx) != GPUX_FB_OK)
		return NULL;
	return ptx;
}

void *rt_relink(const struct gpux_fb_wrapper *w, unsigned arch, size_t *size, bool *rdc,
		bool live)
{
	const void *const *units = (const void *const *)(uintptr_t)w->extra;
	*rdc = false;
	if (w->version != 2 || !units || !w->data)
		return NULL;
	int n = 0;
	uint32_t magic;
	while (n < MAX_UNITS && units[n] && (memcpy(&magic, units[n], 4), magic == GPUX_FB_MAGIC))
		n++;
	if (!n)
		return NULL;
	*rdc = true;
	/* anything to probe? For a live copy, any variables too: its units
	 * would need tables of their own (and the .extern variables between
	 * them remapped) */
	bool any = false, vars = false;
	for (int i = 0; i < n && !(any && (vars || !live)); i++) {
		char *ptx = unit_ptx(units[i], arch), err[200];
		any = any || (ptx && rt_image_probed(ptx));
		if (live && ptx && !vars) {
			struct ptx_var_list v;
			vars = ptx_vars_list(ptx, strlen(ptx), &v, err, sizeof(err)) || v.n;
			ptx_var_list_free(&v); /* zeroed by a failed list: freeing is safe */
		}
		free(ptx);
	}
	if (vars && any) {
		static int told;
		if (!told++)
			rt_warn("relocatable device code with __device__ or __constant__ variables "
				"runs untouched in a live session; gpux -c probes it");
		return NULL;
	}
	if (!any)
		return NULL;
	/* the register counts of nvlink's SASS for this device */
	struct gpux_cubin_regs regs = { 0 };
	size_t llen;
	const void *linked = (const void *)(uintptr_t)w->data;
	if (!gpux_fb_container_size(linked, GPUX_FB_HEADER_SIZE, &llen))
		rt_image_sass_regs(linked, llen, arch, &regs);
	const struct gpux_cubin_regs *caps = regs.n ? &regs : NULL;
	int patched = 0;
	char err[2300] = "";
	bool linkable = true, lib = rt_link_lib(arch);
	uint64_t t0 = rt_now_ns();
	void *cubin = NULL;
	if (lib) {
		cubin = link_units(units, n, arch, caps, true, &patched, size, err, sizeof(err),
				   &linkable);
		if (!cubin && linkable)
			rt_link_failed(arch, err);
		lib = cubin != NULL;
	}
	if (!cubin && linkable)
		cubin = link_units(units, n, arch, caps, false, &patched, size, err, sizeof(err),
				   &linkable);
	bool capped = cubin && regs.n;
	if (!cubin && regs.n && linkable) {
		/* without the caps: the kernels may then need more registers
		 * than their SASS, but they are instrumented */
		rt_warn("cannot keep the kernels of a module of relocatable device code to the "
			"registers of their SASS (%s); they are linked without", err);
		cubin = link_units(units, n, arch, NULL, false, &patched, size, err, sizeof(err),
				   &linkable);
	}
	if (!cubin && linkable)
		rt_warn("cannot link a module of relocatable device code again (%s); it runs "
			"untouched", err);
	else if (cubin && (rt_sess()->flags & GPUX_SESS_VERBOSE))
		rt_warn("linked a module of relocatable device code again: %d units, %d of them "
			"instrumented%s%s in %.1f ms", n, patched,
			capped ? ", every function kept within the fewest registers of its kernels'"
				 " SASS" : "",
			lib ? ", the helper library as its cubin" : "", rt_ms_since(t0));
	gpux_cubin_regs_free(&regs);
	return cubin;
}
