/* nvJitLink, as numba-cuda (through cuda.core) uses it: the program adds
 * PTX, fatbins or LTO-IR and takes the linked cubin, which it then loads
 * with cuModuleLoadData. PTX and fatbin inputs are patched as they are
 * added. LTO-IR cannot be rewritten, so after the program's own link
 * completes the same inputs are linked again with -ptx, that PTX is
 * patched and linked to a cubin, and the program is handed that cubin
 * instead. The cubin holds gpux_ctl, so its module is set up when it is
 * loaded. Any failure leaves the program's own link result in place. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt_hooks.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef int (*create_fn)(void **, uint32_t, const char **);
typedef int (*add_fn)(void *, int, const void *, size_t, const char *);
typedef int (*complete_fn)(void *);
typedef int (*size_fn)(void *, size_t *);
typedef int (*get_fn)(void *, void *);
typedef int (*destroy_fn)(void **);

enum { JL_CREATE, JL_ADD, JL_COMPLETE, JL_CUBIN_SIZE, JL_CUBIN, JL_PTX_SIZE, JL_PTX,
       JL_DESTROY, JL_COUNT };
static const char *const jl_names[JL_COUNT] = {
	"nvJitLinkCreate", "nvJitLinkAddData", "nvJitLinkComplete",
	"nvJitLinkGetLinkedCubinSize", "nvJitLinkGetLinkedCubin",
	"nvJitLinkGetLinkedPtxSize", "nvJitLinkGetLinkedPtx", "nvJitLinkDestroy",
};
static void *jl_real[JL_COUNT];

enum { IN_CUBIN = 1, IN_PTX = 2, IN_LTOIR = 3, IN_FATBIN = 4, IN_ANY = 10 };

struct input {
	int type;
	void *data;
	size_t size;
};

/* One program link handle: its options and inputs, and our cubin. */
struct link {
	void *h;
	char **opts;
	uint32_t nopts;
	struct input *in;
	int nin;
	bool lto;
	bool patched; /* a PTX input was patched: no second pass (it would
		       * patch that code twice) */
	void *cubin;
	size_t cubin_size;
	struct link *next;
};

static struct link *links;
static pthread_mutex_t jl_lock = PTHREAD_MUTEX_INITIALIZER;

static void *real(int id)
{
	void *p = __atomic_load_n(&jl_real[id], __ATOMIC_ACQUIRE);
	if (!p) {
		static const char *const libs[] = { "libnvJitLink.so.13", "libnvJitLink.so.12" };
		for (size_t i = 0; !p && i < 2; i++) {
			void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
			p = h ? rt_real_dlsym(h, jl_names[id]) : NULL;
		}
		__atomic_store_n(&jl_real[id], p, __ATOMIC_RELEASE);
	}
	return p;
}

static struct link *find(void *h)
{
	for (struct link *l = links; l; l = l->next)
		if (l->h == h)
			return l;
	return NULL;
}

static void link_free(struct link *l)
{
	for (uint32_t i = 0; i < l->nopts; i++)
		free(l->opts[i]);
	free(l->opts);
	for (int i = 0; i < l->nin; i++)
		free(l->in[i].data);
	free(l->in);
	free(l->cubin);
	free(l);
}

static int jl_create(void **h, uint32_t n, const char **opts)
{
	create_fn fn = (create_fn)real(JL_CREATE);
	int rc = fn ? fn(h, n, opts) : 1;
	if (rc || !rt_sess())
		return rc;
	struct link *l = calloc(1, sizeof(*l));
	char **copy = calloc(n + 1, sizeof(*copy));
	if (!l || !copy) {
		free(l);
		free(copy);
		return rc;
	}
	l->h = *h;
	l->opts = copy;
	for (uint32_t i = 0; i < n; i++)
		if ((copy[i] = strdup(opts[i])))
			l->nopts++;
	pthread_mutex_lock(&jl_lock);
	l->next = links;
	links = l;
	pthread_mutex_unlock(&jl_lock);
	return rc;
}

static void remember(void *h, int type, const void *data, size_t size, bool patched)
{
	pthread_mutex_lock(&jl_lock);
	struct link *l = find(h);
	if (l)
		l->patched |= patched;
	struct input *v = l ? realloc(l->in, (size_t)(l->nin + 1) * sizeof(*v)) : NULL;
	void *copy = v ? malloc(size ? size : 1) : NULL;
	if (v)
		l->in = v;
	if (copy) {
		memcpy(copy, data, size);
		l->in[l->nin++] = (struct input){ type, copy, size };
		l->lto |= type == IN_LTOIR;
	}
	pthread_mutex_unlock(&jl_lock);
}

static int jl_add(void *h, int type, const void *data, size_t size, const char *name)
{
	add_fn fn = (add_fn)real(JL_ADD);
	if (!fn)
		return 1;
	RT_TRACE("nvJitLinkAddData(type %d, %zu bytes, %s)", type, size, name ? name : "");
	const char *ptx = NULL;
	if (type == IN_PTX || type == IN_FATBIN || type == IN_ANY)
		ptx = rt_patch(data, type == IN_FATBIN ? 0 : size, RT_AS_PTX);
	if (ptx) {
		int rc = fn(h, IN_PTX, ptx, strlen(ptx) + 1, name);
		if (rc == 0) {
			remember(h, IN_PTX, ptx, strlen(ptx) + 1, true);
			return 0;
		}
		rt_warn("nvJitLink refused patched PTX (error %d); it runs untouched", rc);
	}
	int rc = fn(h, type, data, size, name);
	if (rc == 0 && rt_sess())
		remember(h, type, data, size, false);
	return rc;
}

/* A new link of inputs with opts (plus extra); 0 and *out, or -1. */
static int relink(char **opts, uint32_t nopts, const char *extra, bool drop_lto,
		  const struct input *in, int nin, void **out)
{
	const char **o = calloc(nopts + 2, sizeof(*o));
	if (!o)
		return -1;
	uint32_t k = 0;
	for (uint32_t i = 0; i < nopts; i++)
		if (!(drop_lto && !strcmp(opts[i], "-lto")))
			o[k++] = opts[i];
	if (extra)
		o[k++] = extra;
	void *h = NULL;
	int rc = ((create_fn)real(JL_CREATE))(&h, k, o);
	free(o);
	for (int i = 0; rc == 0 && i < nin; i++)
		rc = ((add_fn)real(JL_ADD))(h, in[i].type, in[i].data, in[i].size, "gpux");
	if (rc == 0)
		rc = ((complete_fn)real(JL_COMPLETE))(h);
	if (rc) {
		if (h)
			((destroy_fn)real(JL_DESTROY))(&h);
		return -1;
	}
	*out = h;
	return 0;
}

/* Takes a linked result of h2 (ptx: PTX text, else the cubin). */
static void *take(void *h2, bool ptx, size_t *size)
{
	size_t n = 0;
	void *buf = NULL;
	if (((size_fn)real(ptx ? JL_PTX_SIZE : JL_CUBIN_SIZE))(h2, &n) == 0 && n &&
	    (buf = malloc(n + 1)) &&
	    ((get_fn)real(ptx ? JL_PTX : JL_CUBIN))(h2, buf) != 0) {
		free(buf);
		buf = NULL;
	}
	if (buf && ptx)
		((char *)buf)[n] = 0;
	*size = n;
	return buf;
}

/* The LTO path: link to PTX, patch it, link that to a cubin. */
static void instrument_lto(struct link *l)
{
	for (int id = 0; id < JL_COUNT; id++)
		if (!real(id))
			return;
	void *h2 = NULL, *h3 = NULL;
	size_t n;
	char *ptx = NULL;
	if (relink(l->opts, l->nopts, "-ptx", false, l->in, l->nin, &h2) == 0)
		ptx = take(h2, true, &n);
	const char *patched = ptx ? rt_patch(ptx, n, RT_AS_PTX) : NULL;
	if (patched) {
		struct input in = { IN_PTX, (void *)patched, strlen(patched) + 1 };
		if (relink(l->opts, l->nopts, NULL, true, &in, 1, &h3) == 0)
			l->cubin = take(h3, false, &l->cubin_size);
		if (!l->cubin)
			rt_warn("nvJitLink could not link patched PTX; an LTO module runs untouched");
	} else if (!ptx) {
		rt_warn("nvJitLink gave no PTX for an LTO link; its kernels run untouched");
	}
	free(ptx);
	if (h2)
		((destroy_fn)real(JL_DESTROY))(&h2);
	if (h3)
		((destroy_fn)real(JL_DESTROY))(&h3);
}

static int jl_complete(void *h)
{
	complete_fn fn = (complete_fn)real(JL_COMPLETE);
	int rc = fn ? fn(h) : 1;
	if (rc)
		return rc;
	pthread_mutex_lock(&jl_lock);
	struct link *l = find(h);
	if (l && l->lto && !l->patched && !l->cubin)
		instrument_lto(l);
	pthread_mutex_unlock(&jl_lock);
	return rc;
}

static int jl_cubin_size(void *h, size_t *size)
{
	pthread_mutex_lock(&jl_lock);
	struct link *l = find(h);
	bool ours = l && l->cubin;
	if (ours)
		*size = l->cubin_size;
	pthread_mutex_unlock(&jl_lock);
	size_fn fn = (size_fn)real(JL_CUBIN_SIZE);
	return ours ? 0 : fn ? fn(h, size) : 1;
}

static int jl_cubin(void *h, void *buf)
{
	pthread_mutex_lock(&jl_lock);
	struct link *l = find(h);
	bool ours = l && l->cubin;
	if (ours)
		memcpy(buf, l->cubin, l->cubin_size);
	pthread_mutex_unlock(&jl_lock);
	get_fn fn = (get_fn)real(JL_CUBIN);
	return ours ? 0 : fn ? fn(h, buf) : 1;
}

static int jl_destroy(void **h)
{
	pthread_mutex_lock(&jl_lock);
	for (struct link **p = &links; h && *p; p = &(*p)->next)
		if ((*p)->h == *h) {
			struct link *l = *p;
			*p = l->next;
			link_free(l);
			break;
		}
	pthread_mutex_unlock(&jl_lock);
	destroy_fn fn = (destroy_fn)real(JL_DESTROY);
	return fn ? fn(h) : 1;
}

static void *const jl_hooks[JL_COUNT] = {
	(void *)jl_create, (void *)jl_add, (void *)jl_complete, (void *)jl_cubin_size,
	(void *)jl_cubin, NULL, NULL, (void *)jl_destroy,
};

/* nvJitLinkX, or its versioned alias __nvJitLinkX_13_0: same arguments. */
void *rt_nvjitlink_hook(const char *name, void *real_fn)
{
	char base[64];
	const char *n = name;
	if (!strncmp(n, "__", 2)) {
		n += 2;
		const char *us = strchr(n, '_');
		size_t len = us ? (size_t)(us - n) : strlen(n);
		if (len >= sizeof(base))
			return NULL;
		memcpy(base, n, len);
		base[len] = 0;
		n = base;
	}
	for (int id = 0; id < JL_COUNT; id++)
		if (!strcmp(n, jl_names[id])) {
			for (int k = 0; k < JL_COUNT; k++)
				if (real_fn == jl_hooks[k])
					return real_fn; /* one of ours: nothing to record */
			__atomic_store_n(&jl_real[id], real_fn, __ATOMIC_RELEASE);
			return jl_hooks[id];
		}
	return NULL;
}
