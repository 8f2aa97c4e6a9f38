/* What the driver loads instead of a program's image: the image's PTX
 * for this device, rewritten with the session's probes (ptx_rewrite.h)
 * and linked with the helper library's cubin (rt_link.c), or carrying
 * the library as PTX where it cannot be. Images with nothing to probe
 * load untouched and cost a parse; images that cannot be instrumented
 * (SASS only, PTX newer than the device, rewriting refused) load
 * untouched and are reported once. Results are cached by content, so a
 * module loaded in several contexts is rewritten once. Called with
 * rt_lock held. */
#include "rt.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cubin.h"
#include "fatbin.h"
#include "gpux_dev.h"
#include "kernel_list.h"
#include "ptx_rewrite.h"
#include "ptx_vars.h"
#include "sass_only.h"

/* Kernels a module's one line names; beyond, it counts them. */
#define RT_NAMED_KERNELS 3

struct patched {
	uint64_t hash;   /* of the original image */
	size_t len;
	bool lib_ptx;    /* carrying the library as PTX was asked for */
	bool live;       /* RT_AS_LIVE: variables remapped */
	char *ptx;       /* PTX or a cubin; NULL: load the original */
	const void *orig; /* what the program loaded: for the queries that the
			   * original kernels answer (rt_original.c) */
	void *orig_copy;  /* orig, when the program's buffer may not outlive it */
};

static struct patched *cache;
static size_t ncache, capcache;
static int need_library = -1; /* probes_need_library's answer */

uint64_t rt_fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ull;
	return h;
}

static unsigned device_arch(void)
{
	CUdevice dev = 0;
	if (rt_cu.CtxGetDevice(&dev) != CUDA_SUCCESS && rt_cu.DeviceGet(&dev, 0) != CUDA_SUCCESS)
		return 0;
	return rt_device_arch(dev);
}

static bool probed(const char *name, bool is_kernel)
{
	struct gpux_sess_hdr *h = rt_sess();
	const struct gpux_sess_probe *p = gpux_sess_probes(h);
	for (uint32_t i = 0; i < h->nprobes; i++) {
		bool kernel_site = p[i].site == PTX_SITE_KERNEL_ENTRY;
		bool func_site = p[i].site == PTX_SITE_FUNC_ENTRY || p[i].site == PTX_SITE_FUNC_EXIT;
		if ((kernel_site && !is_kernel) || (func_site && is_kernel))
			continue;
		if (rt_glob_matches(p[i].glob, name))
			return true;
	}
	return false;
}

const char *rt_image_file(const void *image)
{
	Dl_info di;
	if (!image || !dladdr(image, &di) || !di.dli_fname || !*di.dli_fname)
		return NULL;
	const char *slash = strrchr(di.dli_fname, '/');
	return slash ? slash + 1 : di.dli_fname;
}

/* Whether image lies in a shared library (not the program itself, nor
 * memory the program filled): one gpux's user did not build, for which
 * "rebuild with PTX" is no advice (PyTorch's, cuBLAS's). */
static bool in_library(const void *image)
{
	Dl_info di;
	if (!image || !dladdr(image, &di) || !di.dli_fname || !*di.dli_fname)
		return false;
	char self[4096], lib[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || !realpath(di.dli_fname, lib))
		return false;
	self[n] = '\0';
	return strcmp(self, lib) != 0;
}

/* Reports kernels a probe wanted that cannot be patched, each name
 * once: one line per module, which names them when they are few (with
 * -v, a line each); a library of thousands of SASS-only kernels (cuBLAS,
 * PyTorch) is one line. */
static void report_unpatched(const struct gpux_names *k, const char *why, unsigned arch,
			     const void *image)
{
	static struct gpux_names told;
	char hint[700] = "", dn[512], list[768] = "";
	if (rt_sass_can())
		return; /* SASS patching takes them, and says so (rt_sass.c) */
	/* the advice is for this GPU, and for the program's own code; a
	 * library cannot be rebuilt, but SASS patching could take it */
	const char *no_sass = rt_sass_why_not(), *lead = "";
	if (arch && !in_library(image)) {
		gpux_fb_rebuild_hint(arch, hint, sizeof(hint));
		lead = ". Rebuild with PTX: nvcc ";
	} else if (no_sass) {
		snprintf(hint, sizeof(hint), "%s", no_sass);
		lead = "; SASS patching is off: ";
	}
	bool verbose = rt_sess()->flags & GPUX_SESS_VERBOSE;
	size_t n = 0, len = 0;
	for (size_t i = 0; i < k->n; i++) {
		if (!probed(k->name[i], true) || gpux_names_has(&told, k->name[i]))
			continue;
		gpux_names_add(&told, k->name[i], strlen(k->name[i]), 0);
		const char *name = rt_demangle(k->name[i], dn, sizeof(dn));
		if (verbose)
			rt_warn("kernel %s not instrumented: %s; it runs untouched%s%s", name, why,
				lead, hint);
		else if (n < RT_NAMED_KERNELS && len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
						n ? ", " : "", name);
		n++;
	}
	if (verbose || !n)
		return;
	const char *file = rt_image_file(image);
	if (n == 1)
		rt_warn("kernel %s not instrumented: %s; it runs untouched%s%s", list, why,
			lead, hint);
	else if (n <= RT_NAMED_KERNELS)
		rt_warn("kernels %s%s%s not instrumented: %s; they run untouched%s%s", list,
			file ? " of " : "", file ? file : "", why,
			lead, hint);
	else
		rt_warn("%zu kernels of %s not instrumented: %s; they run untouched (-v lists "
			"them)%s%s", n, file ? file : "a module", why,
			lead, hint);
}

enum rt_img_kind rt_image_classify(const void *image, size_t *size)
{
	const unsigned char *b = image;
	uint32_t magic;
	memcpy(&magic, b, 4);
	if (magic == GPUX_FB_WRAPPER_MAGIC || magic == GPUX_FB_MAGIC)
		return RT_IMG_FATBIN;
	if (!memcmp(b, "\x7f" "ELF", 4)) {
		if (!*size) { /* to the end of the last header table */
			uint64_t phoff, shoff;
			uint16_t phentsize, phnum, shentsize, shnum;
			memcpy(&phoff, b + 32, 8);
			memcpy(&shoff, b + 40, 8);
			memcpy(&phentsize, b + 54, 2);
			memcpy(&phnum, b + 56, 2);
			memcpy(&shentsize, b + 58, 2);
			memcpy(&shnum, b + 60, 2);
			uint64_t ph = phoff + (uint64_t)phentsize * phnum;
			uint64_t sh = shoff + (uint64_t)shentsize * shnum;
			*size = ph > sh ? ph : sh;
		}
		return RT_IMG_ELF;
	}
	/* PTX text: a .version directive within the first few KiB */
	size_t n = *size ? *size : strnlen(image, 1u << 30);
	if (memmem(image, n < 8192 ? n : 8192, ".version", 8)) {
		*size = n;
		return RT_IMG_PTX;
	}
	return RT_IMG_UNKNOWN;
}

void rt_image_sass_regs(const void *b, size_t len, unsigned arch, struct gpux_cubin_regs *r)
{
	struct gpux_fb_iter it;
	struct gpux_fb_elem e, best = { 0 };
	gpux_fb_iter_init(&it, b, len);
	while (gpux_fb_next(&it, &e) == GPUX_FB_OK)
		if (e.kind == GPUX_FB_ELF && e.arch / 10 == arch / 10 && e.arch <= arch &&
		    e.arch > best.arch)
			best = e;
	uint8_t *elf;
	size_t n;
	if (!best.arch || gpux_fb_elem_data(&best, &elf, &n) != GPUX_FB_OK)
		return;
	if (gpux_cubin_regs(elf, n, r) != GPUX_FB_OK)
		gpux_cubin_regs_free(r);
	free(elf);
}

/* The fatbin's PTX for this device in *ptx (malloc'd), or NULL when
 * the image must load untouched (reported). *regs gets the register
 * counts of its SASS for this device, if it has some. */
static char *fatbin_ptx(const void *image, struct gpux_cubin_regs *regs)
{
	const unsigned char *b = image;
	uint32_t magic;
	memcpy(&magic, b, 4);
	if (magic == GPUX_FB_WRAPPER_MAGIC) {
		struct gpux_fb_wrapper w;
		if (gpux_fb_wrapper_parse(b, GPUX_FB_WRAPPER_SIZE, &w) || !w.data)
			return NULL;
		b = (const unsigned char *)(uintptr_t)w.data;
	}
	size_t len;
	if (gpux_fb_container_size(b, GPUX_FB_HEADER_SIZE, &len))
		return NULL;
	unsigned arch = device_arch(), lowest = 0;
	struct gpux_names sass = { 0 };
	if (gpux_fb_sass_only(b, len, &sass, NULL) == GPUX_FB_OK && sass.n) {
		/* the patched module must define every kernel: all or none */
		report_unpatched(&sass, "the fatbin has SASS but no PTX for it", arch, image);
		gpux_names_free(&sass);
		return NULL;
	}
	gpux_names_free(&sass);
	struct gpux_fb_elem e;
	int rc = gpux_fb_best_ptx(b, len, arch, &e, &lowest);
	if (rc == GPUX_FB_ENOTFOUND && lowest) {
		rt_warn("a module's PTX is for compute_%u, newer than this sm_%u device; "
			"it runs untouched", lowest, arch);
		return NULL;
	}
	char *text = NULL;
	if (rc != GPUX_FB_OK || gpux_fb_elem_ptx(&e, &text) != GPUX_FB_OK) {
		if (rc != GPUX_FB_ENOTFOUND)
			rt_warn("cannot read a fatbin (%s); its kernels run untouched",
				gpux_fb_strerror(rc));
		return NULL;
	}
	rt_image_sass_regs(b, len, arch, regs);
	return text;
}

/* where: the Triton cache looked in for its PTX, or "". */
static void report_cubin(const void *image, size_t size, const char *where)
{
	struct gpux_names k = { 0 };
	char why[1600];
	snprintf(why, sizeof(why), "it was loaded as a cubin, SASS without PTX (as NVRTC and "
		 "numba-cuda make them)%s%s", *where ? ", and Triton's cache " : "",
		 *where ? where : "");
	if (*where)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), " has no PTX for it");
	/* a cubin with our helper kernel was linked from patched PTX (numba) */
	if (gpux_cubin_kernels(image, size, &k) == GPUX_FB_OK &&
	    !gpux_names_has(&k, GPUX_SYM_CLOCK_SAMPLE))
		report_unpatched(&k, why, 0, image);
	gpux_names_free(&k);
}

/* Only functions some probe may fire in get a name-table entry: big
 * modules must not fill the table with functions nobody probes. */
static uint32_t func_id(void *arg, const char *name, bool is_kernel)
{
	(void)arg;
	return probed(name, is_kernel) ? rt_name_id(name) : UINT32_MAX;
}

static bool match(void *arg, const struct ptx_probe *p, const char *name)
{
	(void)arg;
	return rt_glob_matches(p->glob, name);
}

static unsigned max_regs(void *arg, const char *name)
{
	return arg ? gpux_cubin_regs_of(arg, name) : 0;
}

bool rt_image_probed(const char *ptx)
{
	struct gpux_names fns = { 0 };
	bool any = false;
	if (gpux_ptx_names(ptx, &fns) == GPUX_FB_OK)
		for (size_t i = 0; !any && i < fns.n; i++)
			any = probed(fns.name[i], fns.kind[i] == GPUX_SYM_ENTRY);
	gpux_names_free(&fns);
	return any;
}

/* ptx, rewritten, made to use the original module's variables. */
static char *remap_vars(char *ptx)
{
	char *out, err[200];
	size_t n;
	int rc = ptx_vars_remap(ptx, strlen(ptx), &out, &n, err, sizeof(err));
	if (rc == 1)
		return ptx;
	free(ptx);
	if (rc < 0) {
		rt_warn("a module's variables cannot be shared with its live copy (%s); its "
			"kernels run untouched in this session", err);
		return NULL;
	}
	return out;
}

char *rt_image_rewrite(const char *user, size_t len, const struct gpux_cubin_regs *regs,
		       int unit, bool link, bool live)
{
	struct gpux_sess_hdr *h = rt_sess();
	if (!rt_image_probed(user))
		return NULL;
	const struct gpux_sess_probe *sp = gpux_sess_probes(h);
	struct ptx_probe *probes = calloc(h->nprobes ? h->nprobes : 1, sizeof(*probes));
	if (!probes)
		return NULL;
	for (uint32_t i = 0; i < h->nprobes; i++)
		probes[i] = (struct ptx_probe){ (enum ptx_site_kind)sp[i].site, sp[i].glob,
						sp[i].func, sp[i].only };
	struct ptx_rewrite_in in = {
		.user = user, .user_len = len,
		.probes_ptx = (const char *)h + (link ? h->link_ptx_off : h->ptx_off),
		.probes_len = link ? h->link_ptx_len : h->ptx_len,
		.probes = probes, .nprobes = (int)h->nprobes,
		.func_id = func_id, .match = match,
		.max_regs = regs && regs->n ? max_regs : NULL, .arg = (void *)regs,
		.unit = unit,
	};
	struct ptx_rewrite_out out;
	uint64_t t0 = rt_now_ns();
	char *ptx = NULL;
	if (ptx_rewrite(&in, &out)) {
		rt_warn("cannot instrument a module (%s); its kernels run untouched", out.err);
	} else {
		ptx = out.ptx;
		out.ptx = NULL;
		for (int i = 0; i < out.nwarnings; i++)
			rt_warn("%s", out.warnings[i]);
		if (h->flags & GPUX_SESS_VERBOSE) {
			int capped = 0;
			for (int i = 0; i < out.nfuncs; i++)
				capped += out.funcs[i].max_regs != 0;
			if (capped)
				rt_warn("patched a module of %d functions in %.2f ms; %d kernels "
					"kept to the register count of their SASS", out.nfuncs,
					rt_ms_since(t0), capped);
			else
				rt_warn("patched a module of %d functions in %.2f ms", out.nfuncs,
					rt_ms_since(t0));
		}
	}
	ptx_rewrite_free(&out);
	free(probes);
	return ptx && live ? remap_vars(ptx) : ptx;
}

bool rt_image_original(const char *patched, const void **image)
{
	for (size_t i = 0; i < ncache; i++)
		if (cache[i].ptx && cache[i].ptx == patched) {
			*image = cache[i].orig;
			return *image != NULL;
		}
	return false;
}

/* What the original kernels can be loaded from later: a fatbin wrapper
 * lies in the program's image (cudart registers those), anything else
 * is copied (*copy, malloc'd). NULL when its size cannot be told. */
const void *rt_image_keep(const void *image, size_t size, void **copy)
{
	*copy = NULL;
	uint32_t magic;
	memcpy(&magic, image, 4);
	if (magic == GPUX_FB_WRAPPER_MAGIC)
		return image;
	enum rt_img_kind kind = rt_image_classify(image, &size);
	size_t n = size;
	if (kind == RT_IMG_FATBIN && gpux_fb_container_size(image, GPUX_FB_HEADER_SIZE, &n))
		return NULL;
	if (kind == RT_IMG_PTX)
		n = strnlen(image, size ? size : SIZE_MAX) + 1;
	if (kind == RT_IMG_UNKNOWN || !n || !(*copy = malloc(n)))
		return NULL;
	memcpy(*copy, image, n);
	if (kind == RT_IMG_PTX)
		((char *)*copy)[n - 1] = 0;
	return *copy;
}

static void keep_original(struct patched *p, const void *image, size_t size)
{
	p->orig = rt_image_keep(image, size, &p->orig_copy);
}

void rt_image_forget(void)
{
	for (size_t i = 0; i < ncache; i++) {
		free(cache[i].ptx);
		free(cache[i].orig_copy);
	}
	ncache = 0;
	need_library = -1;
}

/* The PTX a load of image would be rewritten from, malloc'd, or NULL. */
static char *image_ptx(const void *image, size_t size)
{
	enum rt_img_kind kind = rt_image_classify(image, &size);
	if (kind == RT_IMG_PTX)
		return strndup(image, size ? size : SIZE_MAX);
	if (kind != RT_IMG_FATBIN)
		return NULL;
	struct gpux_cubin_regs regs = { 0 };
	char *t = fatbin_ptx(image, &regs);
	gpux_cubin_regs_free(&regs);
	return t;
}

int rt_image_vars(const void *image, size_t size, struct ptx_var_list *out)
{
	memset(out, 0, sizeof(*out));
	char *t = image_ptx(image, size), err[200];
	int rc = t ? ptx_vars_list(t, strlen(t), out, err, sizeof(err)) : 0;
	if (rc)
		rt_warn("a module's variables cannot be shared with its live copy (%s); its "
			"kernels run untouched in this session", err);
	free(t);
	return rc;
}

static struct patched *remember(uint64_t hash, size_t len, bool lib_ptx, bool live, char *ptx)
{
	if (ncache == capcache) {
		size_t c = capcache ? 2 * capcache : 16;
		struct patched *v = realloc(cache, c * sizeof(*v));
		if (!v)
			return NULL; /* not cached: rewritten again next time */
		cache = v;
		capcache = c;
	}
	cache[ncache] = (struct patched){ hash, len, lib_ptx, live, ptx, NULL, NULL };
	return &cache[ncache++];
}

/* A module of relocatable device code (rt_relink.c), cached by its
 * linked container: the cubin, or NULL to load it untouched. *rdc:
 * whether image is one. */
static const char *relinked(const void *image, bool *rdc, bool live)
{
	struct gpux_fb_wrapper w;
	size_t len;
	*rdc = false;
	if (gpux_fb_wrapper_parse(image, GPUX_FB_WRAPPER_SIZE, &w) || w.version != 2 || !w.extra ||
	    !w.data || gpux_fb_container_size((const void *)(uintptr_t)w.data, GPUX_FB_HEADER_SIZE,
					       &len))
		return NULL;
	uint64_t hash = rt_fnv(RT_FNV_SEED, (const void *)(uintptr_t)w.data, len);
	for (size_t i = 0; i < ncache; i++)
		if (cache[i].hash == hash && cache[i].len == len && !cache[i].lib_ptx) {
			*rdc = true;
			return cache[i].ptx;
		}
	size_t size = 0;
	char *cubin = rt_relink(&w, device_arch(), &size, rdc, live);
	if (!*rdc)
		return NULL;
	struct patched *p = remember(hash, len, false, false, cubin);
	if (p && cubin)
		p->orig = image; /* a wrapper: in the program's image */
	return cubin;
}

bool rt_probes_call(const char *prefix)
{
	/* the form without the library appended, where there is one: only
	 * the JIT's calls are written this way */
	const struct gpux_sess_hdr *h = rt_sess();
	bool link = h->link_ptx_len != 0;
	const char *p = (const char *)h + (link ? h->link_ptx_off : h->ptx_off);
	const char *end = p + (link ? h->link_ptx_len : h->ptx_len);
	static const char call[] = "call (gpux_rv), ";
	size_t n = strlen(prefix);
	while ((p = memmem(p, (size_t)(end - p), call, sizeof(call) - 1))) {
		p += sizeof(call) - 1;
		if ((size_t)(end - p) >= n && !memcmp(p, prefix, n))
			return true;
	}
	return false;
}

/* Whether the probes call the helper library at all. Array maps'
 * updates and hash lookups are inline (codegen/ptx_array.c,
 * ptx_lookup.c), so a count or histogram into an array, or a read of
 * `@launched[kernel]`, needs none, and compiled with the user's code in
 * one program it runs at the speed measured in bench/gpu (a separately
 * compiled library made xlarge counts 1.3 times as slow, and a CuPy
 * workload 1.23 times with the call never made). Hash table updates,
 * printf and the rest are worth the precompiled cubin: compiling them
 * with each module cost 0.7 s. */
static bool probes_need_library(void)
{
	if (need_library < 0)
		need_library = rt_probes_call("gpux_h_");
	return need_library;
}

/* user rewritten for a load: linked with the helper library's cubin
 * where it can be and the probes need more of it than the array
 * updates (rt_link.c), else as PTX carrying the library. */
static char *patch_for_load(const char *user, size_t len, const struct gpux_cubin_regs *regs,
			    bool live)
{
	unsigned arch = device_arch();
	if (rt_link_lib(arch) && probes_need_library()) {
		char *ptx = rt_image_rewrite(user, len, regs, PTX_FIRST_UNIT, true, live);
		if (!ptx)
			return NULL; /* nothing probed, or refused (said) */
		size_t size;
		char *cubin = rt_link_with_lib(ptx, regs, arch, &size);
		free(ptx);
		if (cubin)
			return cubin;
	}
	return rt_image_rewrite(user, len, regs, PTX_WHOLE_MODULE, false, live);
}

const char *rt_image_patch(const void *image, size_t size, enum rt_patch_as as)
{
	/* nothing to splice without device probes (cuda:-only programs) */
	if (!image || !rt_sess() || !rt_sess()->nprobes || !rt_cu_ready() || rt_detached())
		return NULL;
	enum rt_img_kind kind = rt_image_classify(image, &size);
	if (kind == RT_IMG_UNKNOWN)
		return NULL;
	if (kind == RT_IMG_FATBIN && as != RT_AS_PTX) {
		bool rdc;
		const char *cubin = relinked(image, &rdc, as == RT_AS_LIVE || as == RT_AS_LIVE_JIT);
		if (rdc)
			return cubin;
	}
	/* the content, for the cache key; a cubin's own bytes, so that
	 * Triton's caches are looked in once per cubin */
	char *user = NULL;
	size_t ulen;
	struct gpux_cubin_regs regs = { 0 };
	if (kind == RT_IMG_ELF) {
		ulen = size;
	} else if (kind == RT_IMG_FATBIN) {
		if (!(user = fatbin_ptx(image, &regs)))
			return NULL;
		ulen = strlen(user);
	} else {
		ulen = size;
		while (ulen && ((const char *)image)[ulen - 1] == 0)
			ulen--;
	}
	const char *text = user ? user : image;
	uint64_t hash = rt_fnv(RT_FNV_SEED, text, ulen);
	bool lib_ptx = as == RT_AS_JIT || as == RT_AS_PTX || as == RT_AS_LIVE_JIT;
	bool live = as == RT_AS_LIVE || as == RT_AS_LIVE_JIT;
	for (size_t i = 0; i < ncache; i++)
		if (cache[i].hash == hash && cache[i].len == ulen && cache[i].lib_ptx == lib_ptx &&
		    cache[i].live == live) {
			free(user);
			gpux_cubin_regs_free(&regs);
			return cache[i].ptx;
		}
	if (kind == RT_IMG_ELF) {
		/* a Triton kernel: its PTX from Triton's cache, its SASS's
		 * register counts from the cubin itself; none: remembered as
		 * untouched */
		char where[1024];
		int found = rt_triton_ptx(image, size, &user, where, sizeof(where));
		if (found <= 0) {
			if (found == 0)
				report_cubin(image, size, where);
			remember(hash, ulen, lib_ptx, live, NULL);
			return NULL;
		}
		if (gpux_cubin_regs(image, size, &regs) != GPUX_FB_OK)
			gpux_cubin_regs_free(&regs);
	}
	char *copy = NULL;
	if (!user && !(copy = strndup(text, ulen)))
		return NULL;
	size_t src_len = user ? strlen(user) : ulen;
	static int told_jit;
	if ((as == RT_AS_JIT || as == RT_AS_LIVE_JIT) && (rt_sess()->flags & GPUX_SESS_VERBOSE) &&
	    !told_jit++)
		rt_warn("a module loaded with JIT options that shape its code carries the helper "
			"library as PTX, compiled under them");
	const char *src = user ? user : copy;
	char *ptx = lib_ptx ? rt_image_rewrite(src, src_len, &regs, PTX_WHOLE_MODULE, false, live)
			    : patch_for_load(src, src_len, &regs, live);
	free(user);
	free(copy);
	gpux_cubin_regs_free(&regs);
	/* kept for the process's life: a library may JIT it lazily later */
	struct patched *p = remember(hash, ulen, lib_ptx, live, ptx);
	if (p && ptx)
		keep_original(p, image, size);
	return ptx;
}
