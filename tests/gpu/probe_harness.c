/* Runs JIT'ed gpux probes on a real GPU without the device runtime: links
 * a case's device.ptx (probe + map descriptors + helper library, from
 * `gpux --emit`) with the test kernel's PTX through the driver's linker,
 * sets up map storage and the printf ring the way the runtime will, runs
 * the kernel, reads everything back and hands it to the case's check.
 *
 *   probe_harness --list          name<TAB>program, one case a line
 *   probe_harness DIR [CASE...]   DIR/test_kernel.ptx, DIR/cases/NAME/device.{ptx,bpf}
 *
 * App cases (name app_*; sources in scripts/gpu_build.sh) run an nvcc-compiled
 * kernel twice on the same seeded inputs: from DIR/apps/APP.ptx as is, and
 * from DIR/cases/NAME/rewritten.ptx (the PTX rewriter's output with the
 * case's probes spliced in, by app_rewrite); the outputs must match bit
 * for bit (and the host model), the maps the code's exact counts.
 *
 * Exit 0: all passed; 1: a failure; 77: no GPU (or no driver); 2: usage.
 * libcuda is dlopen'ed so a machine without a driver gets a clean SKIP. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cuda.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpux_dev.h"
#include "harness.h"

#define CU_FNS(X) X(cuInit) X(cuDeviceGetCount) X(cuDeviceGet) \
	X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain) \
	X(cuCtxSetCurrent) X(cuGetErrorString) X(cuLinkCreate) X(cuLinkAddData) \
	X(cuLinkComplete) X(cuLinkDestroy) X(cuModuleLoadData) X(cuModuleLoadDataEx) X(cuModuleUnload) \
	X(cuModuleGetGlobal) X(cuModuleGetFunction) X(cuFuncGetAttribute) \
	X(cuLaunchKernel) X(cuStreamQuery) X(cuMemAlloc) X(cuMemFree) \
	X(cuMemsetD8) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemGetInfo)
/* cuda.h maps most names to _v2 symbols; STR expands that macro. */
#define STR2(x) #x
#define STR(x) STR2(x)
#define DECL(f) static __typeof__(&f) p_##f;
CU_FNS(DECL)

#define RING_SIZE (1u << 20)
#define BUF_BYTES (4u << 20) /* 1M floats */
#define KERNEL_ID 7
#define TIMEOUT_NS (30ull * 1000000000ull)

static int cu_load(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h)
		return -1;
#define LOAD(f) if (!(p_##f = (__typeof__(p_##f))dlsym(h, STR(f)))) return -1;
	CU_FNS(LOAD)
	return 0;
}

static struct run *cur; /* the case CU() failures are charged to */

#define CU(call) do { \
	CUresult e_ = (p_##call); \
	if (e_ != CUDA_SUCCESS) { \
		const char *s_ = "?"; \
		p_cuGetErrorString(e_, &s_); \
		fail(cur, "%s: %s (%d)", #call, s_, (int)e_); \
		goto out; \
	} \
} while (0)

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	if (fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	} else {
		b[n] = 0;
		if (len)
			*len = (size_t)n;
	}
	fclose(f);
	return b;
}

/* The `.map NAME KEY VALUE ENTRIES ; agg` lines, in map index order. */
static int parse_maps(struct run *r, const char *bpf)
{
	for (const char *p = bpf; (p = strstr(p, ".map ")); p++) {
		if (p != bpf && p[-1] != '\n')
			continue;
		if (r->nmaps == MAX_MAPS)
			return fail(r, "more than %d maps", MAX_MAPS);
		struct map_meta *m = &r->maps[r->nmaps++].meta;
		if (sscanf(p, ".map %63s %u %u %u", m->name, &m->key_size,
			   &m->value_size, &m->max_entries) != 4)
			return fail(r, "bad .map line in device.bpf");
		const char *semi = strchr(p, ';'), *nl = strchr(p, '\n');
		if (semi && (!nl || semi < nl))
			snprintf(m->agg, sizeof(m->agg), "%.*s",
				 (int)((nl ? nl : semi + strlen(semi)) - semi - 1), semi + 1);
		m->array = strstr(m->agg, " array") != NULL;
		const char *lh = strstr(m->agg, "lhist(");
		long long lo, hi, st;
		if (lh && sscanf(lh, "lhist(%lld, %lld, %lld)", &lo, &hi, &st) == 3) {
			m->lhist_min = lo;
			m->lhist_max = hi;
			m->lhist_step = st;
		}
	}
	return 0;
}

/* Refuse duplicate keys: two FULL slots with one key means an insert
 * missed the first (a visibility bug in slot_get). */
static int check_map_sanity(struct run *r)
{
	for (int i = 0; i < r->nmaps; i++) {
		struct map_data *m = &r->maps[i];
		unsigned kw = m->meta.key_size / 8;
		if (m->drops || m->busy || m->dead)
			return fail(r, "@%s: drops %" PRIu64 ", busy %u, dead %u", m->meta.name,
				    m->drops, m->busy, m->dead);
		for (uint32_t a = 0; a < m->n; a++)
			for (uint32_t b = a + 1; b < m->n; b++)
				if (!memcmp(m->keys + a * kw, m->keys + b * kw, kw * 8))
					return fail(r, "@%s: key %" PRIu64 " in two slots",
						    m->meta.name, m->keys[a * kw]);
	}
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char *kernel_ptx;
static size_t kernel_ptx_len;
static int nsm;
static int ctx_lost; /* a launch failed or hung: later cases cannot run */

/* Map storage, the printf ring and the host copies of a run. */
struct probe_mem {
	CUdeviceptr dstate[MAX_MAPS], dkeys[MAX_MAPS], dvals[MAX_MAPS], dring, gctl;
	uint32_t *states;
	uint8_t *ring;
};

static int probe_mem_setup(struct run *r, CUmodule mod, struct probe_mem *pm)
{
	/* Map storage per gpux_dev.h: zeroed state/keys/values arrays, the
	 * descriptor copied into the module's gpux_map_N. */
	for (int i = 0; i < r->nmaps; i++) {
		struct map_meta *mm = &r->maps[i].meta;
		uint64_t n = mm->max_entries;
		CU(cuMemAlloc(&pm->dstate[i], n * 4));
		CU(cuMemAlloc(&pm->dkeys[i], n * mm->key_size));
		CU(cuMemAlloc(&pm->dvals[i], n * mm->value_size));
		CU(cuMemsetD8(pm->dstate[i], 0, n * 4));
		CU(cuMemsetD8(pm->dkeys[i], 0, n * mm->key_size));
		CU(cuMemsetD8(pm->dvals[i], 0, n * mm->value_size));
		struct gpux_map_desc d = { pm->dstate[i], pm->dkeys[i], pm->dvals[i], mm->key_size,
					   mm->value_size, mm->max_entries,
					   mm->array ? GPUX_MAP_ARRAY : GPUX_MAP_HASH,
					   0, mm->lhist_min, mm->lhist_step };
		char sym[32];
		snprintf(sym, sizeof(sym), "gpux_map_%d", i);
		CUdeviceptr g;
		size_t gsize;
		CU(cuModuleGetGlobal(&g, &gsize, mod, sym));
		if (gsize != sizeof(d)) {
			fail(r, "%s is %zu bytes", sym, gsize);
			goto out;
		}
		CU(cuMemcpyHtoD(g, &d, sizeof(d)));
	}
	CU(cuMemAlloc(&pm->dring, RING_SIZE));
	CU(cuMemsetD8(pm->dring, 0, RING_SIZE));
	size_t ctl_size;
	CU(cuModuleGetGlobal(&pm->gctl, &ctl_size, mod, "gpux_ctl"));
	struct gpux_ctl ctl = { 0 };
	ctl.ring.data = pm->dring;
	ctl.ring.size = RING_SIZE;
	CU(cuMemcpyHtoD(pm->gctl, &ctl, sizeof(ctl)));
	return 0;
out:
	return 1;
}

/* Wait for the launch on the null stream. */
static int wait_kernel(struct run *r)
{
	/* Poll rather than synchronise, so a deadlocked helper fails the
	 * case instead of hanging the suite. */
	double t0 = now_ms();
	CUresult q;
	while ((q = p_cuStreamQuery(NULL)) == CUDA_ERROR_NOT_READY) {
		if ((now_ms() - t0) * 1e6 > TIMEOUT_NS) {
			ctx_lost = 1;
			fail(r, "kernel still running after %llu s (deadlock?)",
			     TIMEOUT_NS / 1000000000ull);
			goto out;
		}
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
	}
	if (q != CUDA_SUCCESS) {
		const char *s = "?";
		p_cuGetErrorString(q, &s);
		ctx_lost = 1;
		fail(r, "kernel failed: %s (%d)", s, (int)q);
		goto out;
	}
	return 0;
out:
	return 1;
}

static int probe_mem_read(struct run *r, CUmodule mod, struct probe_mem *pm)
{
	/* Read back and decode: FULL slots only, in slot order. */
	for (int i = 0; i < r->nmaps; i++) {
		struct map_data *m = &r->maps[i];
		uint32_t n = m->meta.max_entries, kw = m->meta.key_size / 8,
			 vw = m->meta.value_size / 8;
		uint64_t *keys = malloc((size_t)n * kw * 8), *vals = malloc((size_t)n * vw * 8);
		pm->states = realloc(pm->states, (size_t)n * 4);
		m->keys = malloc((size_t)n * kw * 8);
		m->vals = malloc((size_t)n * vw * 8);
		CUresult e1 = p_cuMemcpyDtoH(pm->states, pm->dstate[i], (size_t)n * 4);
		CUresult e2 = p_cuMemcpyDtoH(keys, pm->dkeys[i], (size_t)n * kw * 8);
		CUresult e3 = p_cuMemcpyDtoH(vals, pm->dvals[i], (size_t)n * vw * 8);
		for (uint32_t s = 0; s < n; s++) {
			bool any = false;
			for (uint32_t w = 0; w < vw; w++)
				any |= vals[(size_t)s * vw + w] != 0;
			if (m->meta.array && (pm->states[s] == GPUX_SLOT_FULL || any)) {
				/* an array's slot is its one key word (gpux_dev.h) */
				memset(m->keys + (size_t)m->n * kw, 0, kw * 8);
				m->keys[(size_t)m->n * kw] = s;
				memcpy(m->vals + (size_t)m->n * vw, vals + (size_t)s * vw, vw * 8);
				m->n++;
			} else if (!m->meta.array && pm->states[s] == GPUX_SLOT_FULL) {
				memcpy(m->keys + (size_t)m->n * kw, keys + (size_t)s * kw, kw * 8);
				memcpy(m->vals + (size_t)m->n * vw, vals + (size_t)s * vw, vw * 8);
				m->n++;
			}
			m->busy += pm->states[s] == GPUX_SLOT_BUSY;
			m->dead += pm->states[s] == GPUX_SLOT_DEAD;
		}
		free(keys);
		free(vals);
		char sym[32];
		snprintf(sym, sizeof(sym), "gpux_map_%d", i);
		CUdeviceptr g;
		size_t gsize;
		struct gpux_map_desc d;
		CU(cuModuleGetGlobal(&g, &gsize, mod, sym));
		CU(cuMemcpyDtoH(&d, g, sizeof(d)));
		m->drops = d.drops;
		if (e1 || e2 || e3) {
			fail(r, "reading map %d back failed", i);
			goto out;
		}
	}
	struct gpux_ctl ctl;
	CU(cuMemcpyDtoH(&ctl, pm->gctl, sizeof(ctl)));
	pm->ring = malloc(RING_SIZE);
	CU(cuMemcpyDtoH(pm->ring, pm->dring, RING_SIZE));
	r->ring = pm->ring;
	r->ring_size = RING_SIZE;
	r->ring_head = ctl.ring.head;
	r->ring_tail = ctl.ring.tail;
	r->ring_drops = ctl.ring.drops;
	return 0;
out:
	return 1;
}

/* Frees device memory unless the context is lost, and the host copies
 * (r->maps' keys and values, the ring). */
static void probe_mem_free(struct run *r, struct probe_mem *pm)
{
	if (!ctx_lost) {
		for (int i = 0; i < MAX_MAPS; i++) {
			if (pm->dstate[i]) p_cuMemFree(pm->dstate[i]);
			if (pm->dkeys[i]) p_cuMemFree(pm->dkeys[i]);
			if (pm->dvals[i]) p_cuMemFree(pm->dvals[i]);
		}
		if (pm->dring) p_cuMemFree(pm->dring);
	}
	for (int i = 0; i < r->nmaps; i++) {
		free(r->maps[i].keys);
		free(r->maps[i].vals);
		r->maps[i].keys = r->maps[i].vals = NULL;
	}
	free(pm->states);
	free(pm->ring);
	memset(pm, 0, sizeof(*pm));
	r->ring = NULL;
}

static int run_case(const char *dir, const struct tcase *tc, struct run *r)
{
	char path[4096], log_err[8192] = "", log_info[8192] = "";
	char *ptx = NULL, *bpf = NULL;
	CUlinkState link = NULL;
	CUmodule mod = NULL;
	struct probe_mem pm = { 0 };
	CUdeviceptr dbuf = 0, dsm = 0, dwarp = 0;
	uint32_t *smid = NULL, *warpid = NULL;
	uint64_t threads = (uint64_t)tc->grid * tc->block;
	size_t ptx_len = 0;

	memset(r, 0, sizeof(*r));
	r->tc = tc;
	r->nsm = nsm;
	r->kernel_id = KERNEL_ID;
	cur = r;
	snprintf(path, sizeof(path), "%s/cases/%s/device.ptx", dir, tc->name);
	if (!(ptx = slurp(path, &ptx_len))) {
		fail(r, "cannot read %s", path);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/cases/%s/device.bpf", dir, tc->name);
	if (!(bpf = slurp(path, NULL))) {
		fail(r, "cannot read %s", path);
		goto out;
	}
	if (parse_maps(r, bpf))
		goto out;

	/* Link the probe module and the test kernel, as the runtime will. */
	CUjit_option opt[] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
			       CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES };
	void *optv[] = { log_err, (void *)(uintptr_t)sizeof(log_err), log_info,
			 (void *)(uintptr_t)sizeof(log_info) };
	CU(cuLinkCreate(4, opt, optv, &link));
	CUresult le = p_cuLinkAddData(link, CU_JIT_INPUT_PTX, ptx, ptx_len + 1,
				      "device.ptx", 0, NULL, NULL);
	if (le == CUDA_SUCCESS)
		le = p_cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)kernel_ptx,
				     kernel_ptx_len + 1, "test_kernel.ptx", 0, NULL, NULL);
	void *cubin = NULL;
	size_t cubin_len = 0;
	if (le == CUDA_SUCCESS)
		le = p_cuLinkComplete(link, &cubin, &cubin_len);
	if (le != CUDA_SUCCESS) {
		fail(r, "link failed (%d): %s", (int)le, log_err);
		goto out;
	}
	CU(cuModuleLoadData(&mod, cubin));
	CUfunction fn;
	CU(cuModuleGetFunction(&fn, mod, "gpux_test_kernel"));
	int lmem = 0;
	CU(cuFuncGetAttribute(&lmem, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn));
	printf("  info %s: %u x %u threads, %d bytes local per thread\n", tc->name,
	       tc->grid, tc->block, lmem);

	if (probe_mem_setup(r, mod, &pm))
		goto out;

	struct kparams kp = { 0 };
	kp.kernel_id = KERNEL_ID;
	kp.mode = tc->mode;
	kp.stride = tc->stride;
	if (tc->base == BASE_BUFFER) {
		if (threads * tc->stride > BUF_BYTES) {
			fail(r, "buffer too small");
			goto out;
		}
		CU(cuMemAlloc(&dbuf, BUF_BYTES));
		CU(cuMemsetD8(dbuf, 0, BUF_BYTES));
		kp.base = kp.touch = dbuf;
	} else if (tc->base == BASE_SYNTHETIC) {
		kp.base = 0x7f0000000000ull + 12345 * 16; /* not page-aligned */
	}
	r->base = kp.base;
	if (tc->rec) {
		CU(cuMemAlloc(&dsm, threads * 4));
		CU(cuMemAlloc(&dwarp, threads * 4));
		CU(cuMemsetD8(dsm, 0xff, threads * 4));
		CU(cuMemsetD8(dwarp, 0xff, threads * 4));
		kp.rec_smid = dsm;
		kp.rec_warpid = dwarp;
	}

	void *args[] = { &kp };
	CU(cuLaunchKernel(fn, tc->grid, 1, 1, tc->block, 1, 1, 0, NULL, args, NULL));
	if (wait_kernel(r))
		goto out;

	if (probe_mem_read(r, mod, &pm))
		goto out;
	if (tc->rec) {
		smid = malloc(threads * 4);
		warpid = malloc(threads * 4);
		CU(cuMemcpyDtoH(smid, dsm, threads * 4));
		CU(cuMemcpyDtoH(warpid, dwarp, threads * 4));
		r->smid = smid;
		r->warpid = warpid;
	}
	if (!check_map_sanity(r))
		tc->check(r);

out:
	probe_mem_free(r, &pm);
	if (!ctx_lost) {
		if (dbuf) p_cuMemFree(dbuf);
		if (dsm) p_cuMemFree(dsm);
		if (dwarp) p_cuMemFree(dwarp);
		if (mod) p_cuModuleUnload(mod);
	}
	if (link)
		p_cuLinkDestroy(link);
	free(smid);
	free(warpid);
	free(ptx);
	free(bpf);
	return r->msg[0] != 0;
}

/* --- app cases: an nvcc-made kernel, original and rewritten --- */

/* Seeded inputs, not zeros: one in 8 exactly 0, the rest in [-2, 2] in
 * steps of 1/1000 (so devfunc clamps some and skips the zeros' stores). */
static float gen(uint64_t *st)
{
	*st = *st * 6364136223846793005ull + 1442695040888963407ull;
	uint32_t x = (uint32_t)(*st >> 33);
	if (x % 8 == 0)
		return 0.0f;
	return (float)((int)(x % 4001) - 2000) / 1000.0f;
}

/* Load a PTX module (the driver JITs it), with the JIT's error log. */
static int load_ptx(struct run *r, const char *ptx, const char *what, CUmodule *mod)
{
	char log_err[8192] = "";
	CUjit_option opt[] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *optv[] = { log_err, (void *)(uintptr_t)sizeof(log_err) };
	CUresult e = p_cuModuleLoadDataEx(mod, ptx, 2, opt, optv);
	if (e != CUDA_SUCCESS) {
		const char *s = "?";
		p_cuGetErrorString(e, &s);
		return fail(r, "loading the %s PTX: %s (%d): %s", what, s, (int)e, log_err);
	}
	return 0;
}

/* Copy the inputs and the output's initial contents, launch, wait, read
 * the output back into out. */
static int app_launch(struct run *r, CUmodule mod, const struct app *a,
		      CUdeviceptr *din, CUdeviceptr dout, float *const *in,
		      const float *init, float *out, const char *what)
{
	CUfunction fn;
	int lmem = 0;
	CU(cuModuleGetFunction(&fn, mod, a->kernel));
	CU(cuFuncGetAttribute(&lmem, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn));
	printf("  info %s: %s kernel %s, %u x %u threads, %d bytes local per thread\n",
	       r->tc->name, what, a->kernel, a->grid, a->block, lmem);
	for (int k = 0; k < a->nin; k++)
		CU(cuMemcpyHtoD(din[k], in[k], (size_t)a->n * 4));
	CU(cuMemcpyHtoD(dout, init, (size_t)a->nout * 4));
	int n = (int)a->n;
	void *args[4];
	int na = 0;
	for (int k = 0; k < a->nin; k++)
		args[na++] = &din[k];
	args[na++] = &dout;
	args[na++] = &n;
	CU(cuLaunchKernel(fn, a->grid, 1, 1, a->block, 1, 1, 0, NULL, args, NULL));
	if (wait_kernel(r))
		goto out;
	CU(cuMemcpyDtoH(out, dout, (size_t)a->nout * 4));
	return 0;
out:
	return 1;
}

/* The rewriter's site counts (app_rewrite's SITES): each function of
 * app->ids has its id there and no access it could not instrument. */
static int check_sites(struct run *r, const char *sites, const char *ids)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", ids);
	for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
		char *eq = strchr(tok, '='), pat[160];
		if (!eq)
			return fail(r, "bad ids %s", ids);
		*eq = 0;
		snprintf(pat, sizeof(pat), " %s id=%s ", tok, eq + 1);
		const char *l = strstr(sites, pat);
		if (!l)
			return fail(r, "sites: no \"%s\"", pat + 1);
		const char *nl = strchr(l, '\n'), *sk = strstr(l, " skipped=0");
		if (!sk || (nl && sk > nl))
			return fail(r, "sites: %s skipped accesses", tok);
	}
	return 0;
}

static int run_app_case(const char *dir, const struct tcase *tc, struct run *r)
{
	const struct app *a = tc->app;
	char path[4096];
	char *orig = NULL, *rw = NULL, *bpf = NULL, *sites = NULL;
	CUmodule m0 = NULL, m1 = NULL;
	struct probe_mem pm = { 0 };
	CUdeviceptr din[2] = { 0 }, dout = 0;
	float *in[2] = { NULL, NULL }, *init = NULL, *want = NULL, *out0 = NULL, *out1 = NULL;
	struct app_counts counts = { 0 };

	memset(r, 0, sizeof(*r));
	r->tc = tc;
	r->nsm = nsm;
	r->kernel_id = a->kernel_id;
	r->counts = &counts;
	cur = r;
	snprintf(path, sizeof(path), "%s/apps/%s.ptx", dir, a->name);
	if (!(orig = slurp(path, NULL))) {
		fail(r, "cannot read %s", path);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/cases/%s/rewritten.ptx", dir, tc->name);
	if (!(rw = slurp(path, NULL))) {
		fail(r, "cannot read %s", path);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/cases/%s/device.bpf", dir, tc->name);
	if (!(bpf = slurp(path, NULL))) {
		fail(r, "cannot read %s", path);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/cases/%s/sites", dir, tc->name);
	if (!(sites = slurp(path, NULL))) {
		fail(r, "cannot read %s", path);
		goto out;
	}
	if (parse_maps(r, bpf) || check_sites(r, sites, a->ids))
		goto out;

	/* Inputs, the output's initial contents (1000 + i: no value the
	 * kernels write, so a store that should not happen shows), and the
	 * host model's output. */
	for (int k = 0; k < a->nin; k++) {
		uint64_t st = 0x9e3779b97f4a7c15ull * (uint64_t)(k + 1);
		in[k] = malloc((size_t)a->n * 4);
		for (uint32_t i = 0; i < a->n; i++)
			in[k][i] = gen(&st);
	}
	init = malloc((size_t)a->nout * 4);
	want = malloc((size_t)a->nout * 4);
	out0 = malloc((size_t)a->nout * 4);
	out1 = malloc((size_t)a->nout * 4);
	for (uint32_t i = 0; i < a->nout; i++)
		init[i] = want[i] = 1000.0f + (float)i;
	a->model(a, (const float *const *)in, want, &counts);
	for (int k = 0; k < a->nin; k++)
		CU(cuMemAlloc(&din[k], (size_t)a->n * 4));
	CU(cuMemAlloc(&dout, (size_t)a->nout * 4));

	/* 1. The original module. */
	if (load_ptx(r, orig, "original", &m0) ||
	    app_launch(r, m0, a, din, dout, in, init, out0, "original"))
		goto out;
	for (uint32_t i = 0; i < a->nout; i++)
		if (memcmp(&out0[i], &want[i], 4)) {
			fail(r, "original run: out[%u] = %a, host model %a", i, out0[i], want[i]);
			goto out;
		}
	CU(cuModuleUnload(m0));
	m0 = NULL;

	/* 2. The rewritten one: probes, descriptors and the helper library
	 * in one module, maps and ring set up as for the other cases. */
	if (load_ptx(r, rw, "rewritten", &m1) || probe_mem_setup(r, m1, &pm) ||
	    app_launch(r, m1, a, din, dout, in, init, out1, "rewritten") ||
	    probe_mem_read(r, m1, &pm))
		goto out;
	for (uint32_t i = 0; i < a->nout; i++)
		if (memcmp(&out1[i], &out0[i], 4)) {
			fail(r, "instrumented out[%u] = %a, uninstrumented %a", i, out1[i],
			     out0[i]);
			goto out;
		}
	if (r->ring_head || r->ring_drops) {
		fail(r, "ring: head %llu drops %llu, want nothing", (unsigned long long)r->ring_head,
		     (unsigned long long)r->ring_drops);
		goto out;
	}
	if (!check_map_sanity(r))
		tc->check(r);

out:
	probe_mem_free(r, &pm);
	if (!ctx_lost) {
		for (int k = 0; k < 2; k++)
			if (din[k]) p_cuMemFree(din[k]);
		if (dout) p_cuMemFree(dout);
		if (m0) p_cuModuleUnload(m0);
		if (m1) p_cuModuleUnload(m1);
	}
	r->counts = NULL;
	free(in[0]);
	free(in[1]);
	free(init);
	free(want);
	free(out0);
	free(out1);
	free(orig);
	free(rw);
	free(bpf);
	free(sites);
	return r->msg[0] != 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		/* App cases add: the app, and FUNC=ID for every function. */
		for (int i = 0; i < gpu_ncases; i++) {
			const struct tcase *tc = &gpu_cases[i];
			printf("%s\t%s", tc->name, tc->prog);
			if (tc->app)
				printf("\t%s\t%s", tc->app->name, tc->app->ids);
			printf("\n");
		}
		return 0;
	}
	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: %s --list | DIR [CASE...]\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	char path[4096];
	snprintf(path, sizeof(path), "%s/test_kernel.ptx", dir);
	if (!(kernel_ptx = slurp(path, &kernel_ptx_len))) {
		fprintf(stderr, "cannot read %s (run scripts/gpu_build.sh)\n", path);
		return 2;
	}
	int ndev = 0;
	CUdevice dev;
	CUcontext ctx;
	if (cu_load() || p_cuInit(0) != CUDA_SUCCESS ||
	    p_cuDeviceGetCount(&ndev) != CUDA_SUCCESS || ndev == 0) {
		printf("SKIP: no CUDA driver or no GPU here\n");
		return 77;
	}
	char name[256] = "?";
	if (p_cuDeviceGet(&dev, 0) || p_cuDeviceGetName(name, sizeof(name), dev) ||
	    p_cuDeviceGetAttribute(&nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) ||
	    p_cuDevicePrimaryCtxRetain(&ctx, dev) || p_cuCtxSetCurrent(ctx)) {
		printf("FAIL: cannot set up device 0\n");
		return 1;
	}
	size_t freeb = 0, total = 0;
	p_cuMemGetInfo(&freeb, &total);
	printf("device: %s, %d SMs, %zu MiB free of %zu\n", name, nsm, freeb >> 20,
	       total >> 20);

	int pass = 0, failed = 0, ran = 0;
	for (int i = 0; i < gpu_ncases; i++) {
		const struct tcase *tc = &gpu_cases[i];
		int want = argc == 2;
		for (int a = 2; a < argc; a++)
			want |= !strcmp(argv[a], tc->name);
		if (!want)
			continue;
		static struct run r;
		ran++;
		double t0 = now_ms();
		if (ctx_lost) {
			memset(&r, 0, sizeof(r));
			fail(&r, "not run: an earlier kernel broke the context");
		} else if (tc->app) {
			run_app_case(dir, tc, &r);
		} else {
			run_case(dir, tc, &r);
		}
		int ok = !r.msg[0];
		printf("%s %s (%.1f ms)%s%s\n", ok ? "PASS" : "FAIL", tc->name, now_ms() - t0,
		       ok ? "" : ": ", r.msg);
		fflush(stdout);
		ok ? pass++ : failed++;
	}
	if (!ran) {
		fprintf(stderr, "no such case\n");
		return 2;
	}
	p_cuMemGetInfo(&freeb, &total);
	printf("%d passed, %d failed (%zu MiB free at the end)\n", pass, failed, freeb >> 20);
	return failed ? 1 : 0;
}
