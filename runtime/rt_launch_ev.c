/* cuda:launch contexts. The kernel's name comes from the driver
 * (cuFuncGetName, CUDA 12.3+; cuKernelGetName when cudart hands a
 * CUkernel in place of a CUfunction) once per function handle, then
 * from a cache: an open-addressing table of handle -> name record whose
 * slots are read without a lock (a sequence count per slot) and written
 * under rt_lock. Records are interned by PTX name and never freed, so a
 * reader may keep one after its slot is cleared. Without either name
 * function, or when both refuse the handle, the kernel is "" with id
 * UINT32_MAX (as without a session), and the launch still fires.
 * The record also keeps where each parameter lies in the launch's
 * parameter buffer (cuFuncGetParamInfo / cuKernelGetParamInfo, CUDA
 * 12.4+), so that arg0.. read each with its own size; a driver without
 * them gives nargs 0. */
#include "rt_hooks.h"

#include <stdlib.h>
#include <string.h>

struct name_rec {
	struct name_rec *next; /* intern chain */
	uint32_t id;           /* rt_name_id, UINT32_MAX if none */
	char kernel[GPUX_CEV_STR]; /* the name table's, cut, zero-padded */
	const char *ptx;       /* the driver's name, copied after the record */
	bool params_known;     /* the fields below are filled (under rt_lock) */
	uint32_t nparams;
	uint32_t off[GPUX_CEV_ARGS], size[GPUX_CEV_ARGS];
};

#define NSLOTS 4096u                /* a power of two */
#define MAX_USED (NSLOTS / 4 * 3)   /* then the table starts over */
#define NBUCKETS 1024u

struct slot {
	uint32_t seq; /* odd while written */
	const void *key;
	const struct name_rec *rec;
};

static struct slot slots[NSLOTS];
static unsigned used;                       /* writers: under rt_lock */
static struct name_rec *interned[NBUCKETS]; /* under rt_lock */
static struct name_rec unnamed = { .id = UINT32_MAX, .ptx = "" };

static inline uint32_t slot_of(const void *f)
{
	return (uint32_t)(((uintptr_t)f >> 4) * 0x9e3779b97f4a7c15ull >> 40) & (NSLOTS - 1);
}

/* The record of f, or NULL: not cached, or a slot on the way is being
 * written (the caller takes the slow path). */
static const struct name_rec *lookup(const void *f)
{
	for (uint32_t i = 0, at = slot_of(f); i < NSLOTS; i++, at = (at + 1) & (NSLOTS - 1)) {
		struct slot *s = &slots[at];
		uint32_t q = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		const void *k = __atomic_load_n(&s->key, __ATOMIC_RELAXED);
		const struct name_rec *r = __atomic_load_n(&s->rec, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if ((q & 1) || __atomic_load_n(&s->seq, __ATOMIC_RELAXED) != q)
			return NULL;
		if (k == f)
			return r;
		if (!k)
			return NULL;
	}
	return NULL;
}

static void slot_set(struct slot *s, const void *k, const struct name_rec *r)
{
	uint32_t q = s->seq;
	__atomic_store_n(&s->seq, q + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&s->key, k, __ATOMIC_RELAXED);
	__atomic_store_n(&s->rec, r, __ATOMIC_RELAXED);
	__atomic_store_n(&s->seq, q + 2, __ATOMIC_RELEASE);
}

static void clear_locked(void)
{
	for (uint32_t i = 0; i < NSLOTS; i++)
		if (slots[i].key)
			slot_set(&slots[i], NULL, NULL);
	__atomic_store_n(&used, 0, __ATOMIC_RELAXED);
}

void rt_launch_names_forget(void)
{
	if (!__atomic_load_n(&used, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&rt_lock);
	clear_locked();
	pthread_mutex_unlock(&rt_lock);
}

/* The record of a PTX name (under rt_lock): registered in the session's
 * name table and demangled once per process. */
static const struct name_rec *intern(const char *ptx)
{
	uint32_t h = 2166136261u;
	for (const char *p = ptx; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	struct name_rec **b = &interned[h & (NBUCKETS - 1)];
	for (struct name_rec *r = *b; r; r = r->next)
		if (!strcmp(r->ptx, ptx))
			return r;
	size_t n = strlen(ptx);
	struct name_rec *r = calloc(1, sizeof(*r) + n + 1);
	if (!r)
		return &unnamed;
	memcpy(r + 1, ptx, n + 1);
	r->ptx = (const char *)(r + 1);
	r->id = rt_name_id(ptx);
	rt_kernel_str(ptx, r->kernel);
	r->next = *b;
	*b = r;
	return r;
}

typedef CUresult (*name_fn)(const char **, void *);

/* The driver's name for f (under rt_lock), or NULL. */
static const char *driver_name(const void *f)
{
	static name_fn func_name, kernel_name;
	static bool resolved;
	if (!resolved) {
		resolved = true;
		func_name = (name_fn)rt_cuda_sym("cuFuncGetName");
		kernel_name = (name_fn)rt_cuda_sym("cuKernelGetName");
	}
	const char *n = NULL;
	if (func_name && (func_name(&n, (void *)f) != CUDA_SUCCESS || !n))
		n = NULL;
	if (!n && kernel_name && (kernel_name(&n, (void *)f) != CUDA_SUCCESS || !n))
		n = NULL;
	return n;
}

typedef CUresult (*param_fn)(void *, size_t, size_t *, size_t *);

#define MAX_PARAMS 4096 /* more than any kernel has: the count stops there */

/* Where f's parameters lie (under rt_lock), once per interned record:
 * records are shared by every handle of one PTX name, and the layout is
 * the name's. */
static void driver_params(const void *f, struct name_rec *r)
{
	static param_fn func_info, kernel_info;
	static bool resolved;
	if (!resolved) {
		resolved = true;
		func_info = (param_fn)rt_cuda_sym("cuFuncGetParamInfo");
		kernel_info = (param_fn)rt_cuda_sym("cuKernelGetParamInfo");
	}
	r->params_known = true;
	param_fn fn = NULL;
	size_t off, size;
	if (func_info && func_info((void *)f, 0, &off, &size) == CUDA_SUCCESS)
		fn = func_info;
	else if (kernel_info && kernel_info((void *)f, 0, &off, &size) == CUDA_SUCCESS)
		fn = kernel_info;
	for (uint32_t i = 0; fn && i < MAX_PARAMS && fn((void *)f, i, &off, &size) == CUDA_SUCCESS;
	     i++) {
		if (i < GPUX_CEV_ARGS) {
			r->off[i] = (uint32_t)off;
			r->size[i] = (uint32_t)size;
		}
		r->nparams = i + 1;
	}
}

static const struct name_rec *miss(const void *f)
{
	pthread_mutex_lock(&rt_lock);
	const struct name_rec *r = lookup(f);
	if (!r) {
		const char *n = driver_name(f);
		r = n ? intern(n) : &unnamed;
		if (r != &unnamed && !r->params_known)
			driver_params(f, (struct name_rec *)r);
		if (used >= MAX_USED)
			clear_locked();
		uint32_t at = slot_of(f);
		while (slots[at].key)
			at = (at + 1) & (NSLOTS - 1);
		slot_set(&slots[at], f, r);
		__atomic_store_n(&used, used + 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&rt_lock);
	return r;
}

/* The launch's parameter buffer: kernelParams (one pointer each) or
 * extra's CU_LAUNCH_PARAM_BUFFER_POINTER (all of them at their
 * offsets). Each value is read with its own size, zero-extended; a
 * larger one (a struct) gives its first 8 bytes. */
static void read_args(const struct name_rec *r, void **p, void **e, struct gpux_cev_launch *c)
{
	const unsigned char *buf = NULL;
	for (int i = 0; !p && e && e[i] != CU_LAUNCH_PARAM_END && i < 16; i += 2)
		if (e[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buf = e[i + 1];
	if (!p && !buf)
		return;
	c->nargs = r->nparams;
	for (uint32_t i = 0; i < r->nparams && i < GPUX_CEV_ARGS; i++) {
		const unsigned char *v = p ? p[i] : buf + r->off[i];
		size_t n = r->size[i] < 8 ? r->size[i] : 8;
		if (v)
			memcpy(&c->args[i], v, n); /* little-endian: zero-extended */
	}
}

struct rt_kname rt_launch_name(CUfunction f)
{
	const struct name_rec *r = f ? lookup(f) : &unnamed;
	if (!r)
		r = miss(f);
	return (struct rt_kname){ r->kernel, r->id, r->ptx };
}

void rt_launch_ev(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		  unsigned by, unsigned bz, unsigned shmem, CUstream s, void **p, void **e)
{
	const struct name_rec *r = f ? lookup(f) : &unnamed;
	if (!r)
		r = miss(f);
	struct gpux_cev_launch c = {
		.grid = { gx, gy, gz },
		.block = { bx, by, bz },
		.shmem = shmem,
		.stream = (uint64_t)(uintptr_t)s,
		.kernel_id = r->id,
	};
	memcpy(c.kernel, r->kernel, sizeof(c.kernel));
	read_args(r, p, e, &c);
	rt_cev_emit(GPUX_CEV_LAUNCH, &c, sizeof c, r->ptx);
}
