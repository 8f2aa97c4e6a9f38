/* A fake libsanitizer-public.so inside the fake libcuda (tests load it
 * with GPUX_SANITIZER_LIB pointing at the fake): the patching API as
 * runtime/rt_sass.c calls it. Its "patch module" is the PTX itself
 * (tests run a ptxas that copies its input), loaded as a module. At a
 * launch of a patched kernel, each patched point acts as its callback
 * would: the boot kernel writes where the patch module's variables are;
 * block enter and exit run the probes the kernel's record selects (their
 * count() for every thread launched); a kernel without a record counts
 * in gpux_sass_nodata. Each context has its patch module. */
#include <cuda.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"
#include "sass_ptx.h"

bool fk_sass_on;

#define FK_SASS_CTX 4
static struct {
	CUcontext ctx;
	void *mod;
} patch_mods[FK_SASS_CTX];

/* The current context's patch module, or NULL. */
static void *patch_mod_here(void)
{
	CUcontext c = fk_current();
	for (int i = 0; i < FK_SASS_CTX; i++)
		if (patch_mods[i].mod && patch_mods[i].ctx == c)
			return patch_mods[i].mod;
	return NULL;
}

struct fk_patched {
	const void *mod;
	unsigned points; /* bit per Sanitizer_InstructionId */
	struct fk_patched *next;
};
static struct fk_patched *patched;

struct fk_data {
	CUfunction f;
	CUdeviceptr ud;
	struct fk_data *next;
};
static struct fk_data *datas;

int sanitizerSubscribe(void **sub, void *cb, void *ud);
int sanitizerSubscribe(void **sub, void *cb, void *ud)
{
	(void)cb, (void)ud;
	*sub = &patched;
	fk_sass_on = true;
	flog("sanitizer subscribed");
	return 0;
}

int sanitizerAddPatches(const void *image, CUcontext ctx);
int sanitizerAddPatches(const void *image, CUcontext ctx)
{
	if (!ctx)
		ctx = fk_current();
	void *m = image ? fk_load_ptx(image) : NULL;
	for (int i = 0; m && i < FK_SASS_CTX; i++)
		if (!patch_mods[i].mod || patch_mods[i].ctx == ctx) {
			patch_mods[i].ctx = ctx;
			patch_mods[i].mod = m;
			return 0;
		}
	return 1;
}

static struct fk_patched *find(const void *mod)
{
	for (struct fk_patched *p = patched; p; p = p->next)
		if (p->mod == mod)
			return p;
	return NULL;
}

int sanitizerPatchInstructions(int id, CUmodule m, const char *cb);
int sanitizerPatchInstructions(int id, CUmodule m, const char *cb)
{
	const char *t = fk_mod_text(patch_mod_here());
	char decl[128];
	snprintf(decl, sizeof(decl), ") %s(", cb);
	if (!t || !strstr(t, decl) || id < 1 || id > 31)
		return 1; /* SANITIZER_ERROR_INVALID_PARAMETER */
	struct fk_patched *p = find(m);
	if (!p) {
		if (!(p = calloc(1, sizeof(*p))))
			return 7;
		p->mod = m;
		p->next = patched;
		patched = p;
	}
	p->points |= 1u << id;
	flog("sanitizer patch point %d: %s", id, cb);
	return 0;
}

int sanitizerPatchModule(CUmodule m);
int sanitizerPatchModule(CUmodule m)
{
	return find(m) ? 0 : 1;
}

int sanitizerSetCallbackData(CUfunction f, const void *ud);
int sanitizerSetCallbackData(CUfunction f, const void *ud)
{
	void *mod;
	const char *name;
	if (!fk_func_of(f, &mod, &name))
		return 1;
	struct fk_data *d = calloc(1, sizeof(*d));
	if (!d)
		return 7;
	*d = (struct fk_data){ f, (CUdeviceptr)(uintptr_t)ud, datas };
	datas = d;
	flog("sanitizer data for %s", name);
	return 0;
}

int sanitizerGetResultString(int rc, const char **s);
int sanitizerGetResultString(int rc, const char **s)
{
	*s = rc ? "fake Sanitizer error" : "no error";
	return 0;
}

static CUdeviceptr data_of(CUfunction f)
{
	for (struct fk_data *d = datas; d; d = d->next)
		if (d->f == f)
			return d->ud;
	return 0;
}

/* The boot kernel's callback: the variables' addresses, in order. */
static void boot(void *patch_mod, CUdeviceptr ud)
{
	static const char *const fixed[] = { "gpux_ctl", "gpux_clock_off", "gpux_sass_nodata",
					     "gpux_gpu" };
	uint64_t *tab = (uint64_t *)(uintptr_t)ud;
	CUdeviceptr d;
	int n = 0;
	for (; n < 4; n++) {
		if (!fk_global(patch_mod, fixed[n], &d))
			return;
		tab[n] = d;
	}
	for (int i = 0; i < GPUX_SASS_MAX_MAPS; i++, n++) {
		char name[32];
		snprintf(name, sizeof(name), "gpux_map_%d", i);
		if (!fk_global(patch_mod, name, &d))
			break;
		tab[n] = d;
	}
	flog("sanitizer boot: %d addresses", n);
}

/* Callback cb's probes, each counted for every thread when the record
 * selects it. */
static void callback(void *patch_mod, const char *cb, const struct gpux_sass_kernel *rec,
		     uint64_t threads, const char *kernel)
{
	const char *t = fk_mod_text(patch_mod), *b, *e;
	char decl[128];
	snprintf(decl, sizeof(decl), ") %s(", cb);
	if (!t || !(b = strstr(t, decl)) || !(e = strstr(b, "\n}\n")))
		return;
	static const char call[] = "call (gpux_r), gpux_probe_";
	for (const char *p = b; (p = strstr(p, call)) && p < e; p += sizeof(call) - 1) {
		int k = atoi(p + sizeof(call) - 1);
		if (k < 0 || k >= GPUX_SASS_MAX_PROBES || !(rec->mask[k / 64] >> (k % 64) & 1))
			continue;
		char probe[32];
		bool by_kernel;
		snprintf(probe, sizeof(probe), "gpux_probe_%d", k);
		int map = fk_probe_map(patch_mod, probe, &by_kernel);
		if (map >= 0)
			fk_count(patch_mod, map, by_kernel, rec->kernel_id, threads, kernel);
	}
}

void fk_sass_launch(CUfunction f, uint64_t threads)
{
	void *mod;
	const char *name;
	struct fk_patched *p;
	if (!fk_sass_on || !fk_func_of(f, &mod, &name) || !(p = find(mod)))
		return;
	CUdeviceptr ud = data_of(f);
	void *patch_mod = patch_mod_here();
	if (!patch_mod)
		return;
	if (!strcmp(name, GPUX_SASS_BOOT)) {
		if (ud && (p->points & 2u))
			boot(patch_mod, ud);
		return;
	}
	static const struct {
		unsigned id;
		const char *cb;
	} points[] = { { 1, GPUX_SASS_CB_ENTER }, { 2, GPUX_SASS_CB_EXIT } };
	for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++) {
		if (!(p->points & (1u << points[i].id)))
			continue;
		CUdeviceptr nd;
		if (!ud) {
			if (fk_global(patch_mod, "gpux_sass_nodata", &nd))
				*(uint64_t *)(uintptr_t)nd += threads;
			flog("sanitizer %s: %s has no record", points[i].cb, name);
			continue;
		}
		const struct gpux_sass_kernel *rec = (const void *)(uintptr_t)ud;
		if (rec->on)
			callback(patch_mod, points[i].cb, rec, threads, name);
	}
}
