/* Joining a process that is already running (gpux -p PID): the runtime
 * is loaded into it by attach/inject.c, which calls gpux_rt_attach with
 * the session's name (GPUX_SESSION's value). The program bound the
 * driver's entry points long before: its GOT entries (linked against
 * libcuda) and cudart's table (filled through cuGetProcAddress) hold
 * libcuda's functions. Every word of the loaded objects' writable
 * segments that holds one becomes the runtime's hook for it, so the
 * program's next call goes through the runtime as if it had been
 * preloaded. Device probes make the session live (rt_live.c): every
 * launch from then on runs an instrumented namesake, also of modules
 * loaded before, whose images are found among the fatbins the program's
 * objects register (rt_attach_images.c).
 *
 * gpux calls gpux_rt_attach_start on a thread of the program's it
 * interrupted wherever it was safe for dlopen: possibly inside the
 * driver, holding its locks. The work (which calls the driver) runs on
 * a thread of its own once that one went back to what it was doing. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt_hooks.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

int gpux_rt_attach(const char *session);
int64_t gpux_rt_attach_start(const char *session);
void *gpux_rt_hook_of(const char *name, void *real, int version, uint64_t flags);
int gpux_rt_busy(void);

/* What this instance puts in place of libcuda's real function (a
 * cuGetProcAddress answer for version and flags when version is not
 * 0): a later instance sends the program's bindings to these on to its
 * own hooks. */
void *gpux_rt_hook_of(const char *name, void *real, int version, uint64_t flags)
{
	return version ? rt_hook_gpa(name, real, version, flags) : rt_hook_for(name, real);
}

/* Whether this instance's session still has a controller reading it. */
int gpux_rt_busy(void)
{
	struct gpux_sess_hdr *h = rt_sess_root();
	if (!h || rt_detached() || __atomic_load_n(&rt_sess()->stop, __ATOMIC_ACQUIRE))
		return 0;
	return !h->ctl_pid || kill((pid_t)h->ctl_pid, 0) == 0;
}

/* Earlier instances of the runtime in the process (an earlier gpux -p
 * loads its own copy of the library: one instance joins one session),
 * found by their exports. */
#define MAX_OTHERS 16
typedef void *(*hook_of_fn)(const char *, void *, int, uint64_t);
struct others {
	int n;
	uintptr_t base[MAX_OTHERS];
	hook_of_fn hook_of[MAX_OTHERS];
	int (*busy[MAX_OTHERS])(void);
	struct rt_cupti_peer cupti[MAX_OTHERS];
};

struct swap {
	uintptr_t from, to;
};

/* a hook by the name a PLT slot binds */
struct named_hook {
	const char *name;
	void *hook;
};

struct swaps {
	struct swap *v;
	size_t n, cap;
	struct named_hook *named; /* sorted by name, for the PLT slots */
	size_t nnamed, capnamed;
	bool oom;
	gpa2_fn gpa; /* libcuda's cuGetProcAddress_v2, or NULL */
	int version; /* the driver's */
	const struct others *o;
};

static void add(struct swaps *s, void *from, void *to)
{
	if (!from || !to || from == to)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].from == (uintptr_t)from)
			return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct swap *v = realloc(s->v, cap * sizeof(*v));
		if (!v) {
			s->oom = true;
			return;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct swap){ (uintptr_t)from, (uintptr_t)to };
}

/* libcuda's function behind hook h, by name and as cuGetProcAddress
 * hands it out (cudart's way), both to become h. */
static void collect(const struct rt_hook *h, void *arg)
{
	struct swaps *s = arg;
	void *real = rt_cuda_sym(h->name);
	if (real) {
		void *to = rt_hook_for(h->name, real);
		add(s, real, to);
		if (to && s->nnamed == s->capnamed) {
			size_t cap = s->capnamed ? 2 * s->capnamed : 256;
			struct named_hook *v = realloc(s->named, cap * sizeof(*v));
			if (v) {
				s->named = v;
				s->capnamed = cap;
			} else {
				s->oom = true;
			}
		}
		if (to && s->nnamed < s->capnamed)
			s->named[s->nnamed++] = (struct named_hook){ h->name, to };
		for (int k = 0; k < s->o->n; k++) /* and what earlier instances put there */
			add(s, s->o->hook_of[k](h->name, real, 0, 0), to);
	}
	static const cuuint64_t flags[] = { CU_GET_PROC_ADDRESS_DEFAULT,
					    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM };
	for (size_t i = 0; s->gpa && i < sizeof(flags) / sizeof(flags[0]); i++) {
		void *p = NULL;
		CUdriverProcAddressQueryResult st;
		if (s->gpa(h->base, &p, s->version, flags[i], &st) != CUDA_SUCCESS || !p)
			continue;
		void *to = rt_hook_gpa(h->base, p, s->version, flags[i]);
		add(s, p, to);
		for (int k = 0; to && k < s->o->n; k++)
			add(s, s->o->hook_of[k](h->base, p, s->version, flags[i]), to);
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct named_hook *)a)->name, ((const struct named_hook *)b)->name);
}

static int by_from(const void *a, const void *b)
{
	uintptr_t x = ((const struct swap *)a)->from, y = ((const struct swap *)b)->from;
	return x < y ? -1 : x > y;
}

struct scan {
	const struct swaps *s;
	uintptr_t self, cuda; /* objects not to touch: ours, libcuda (and others') */
	size_t swapped;
};

static const struct swap *match(const struct swaps *s, uintptr_t w)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->v[mid].from < w)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->v[lo].from == w ? &s->v[lo] : NULL;
}

/* Swaps the word at p; a page made read-only after relocation (RELRO)
 * is opened for the write and closed again. */
static bool put(uintptr_t *p, uintptr_t to, bool relro)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *page = (void *)((uintptr_t)p & ~(uintptr_t)(pg - 1));
	if (relro && mprotect(page, (size_t)pg, PROT_READ | PROT_WRITE))
		return false;
	__atomic_store_n(p, to, __ATOMIC_RELEASE);
	if (relro)
		mprotect(page, (size_t)pg, PROT_READ);
	return true;
}

/* The object's PLT slots of hooked driver functions it has not called
 * yet (lazy binding: the slot still holds the resolver's stub, which
 * would bind libcuda's function, not the runtime's): set to the hook. */
static void bind_slots(struct dl_phdr_info *info, uintptr_t rlo, uintptr_t rhi, struct scan *sc)
{
	const ElfW(Dyn) *dyn = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	const ElfW(Rela) *rel = NULL;
	const ElfW(Sym) *sym = NULL;
	const char *str = NULL;
	size_t relsz = 0;
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		/* the loader has made these addresses absolute (on glibc) */
		if (dyn->d_tag == DT_JMPREL)
			rel = (const ElfW(Rela) *)dyn->d_un.d_ptr;
		else if (dyn->d_tag == DT_PLTRELSZ)
			relsz = dyn->d_un.d_val;
		else if (dyn->d_tag == DT_SYMTAB)
			sym = (const ElfW(Sym) *)dyn->d_un.d_ptr;
		else if (dyn->d_tag == DT_STRTAB)
			str = (const char *)dyn->d_un.d_ptr;
	}
	if (!rel || !sym || !str)
		return;
	for (size_t i = 0; i < relsz / sizeof(*rel); i++) {
		if (ELF64_R_TYPE(rel[i].r_info) != R_X86_64_JUMP_SLOT)
			continue;
		const char *name = str + sym[ELF64_R_SYM(rel[i].r_info)].st_name;
		if (strncmp(name, "cu", 2))
			continue;
		/* found in the table made before: a dlsym here, under the
		 * loader's lock, would wait for a thread that dlopens now and
		 * waits for that lock in turn */
		struct named_hook key = { name, NULL };
		const struct named_hook *nh = bsearch(&key, sc->s->named, sc->s->nnamed,
						      sizeof(key), by_name);
		void *hook = nh ? nh->hook : NULL;
		uintptr_t *slot = (uintptr_t *)(info->dlpi_addr + rel[i].r_offset);
		if (hook && *slot != (uintptr_t)hook &&
		    put(slot, (uintptr_t)hook, (uintptr_t)slot >= rlo && (uintptr_t)slot < rhi)) {
			RT_TRACE("attach: %s's slot for %s", info->dlpi_name, name);
			sc->swapped++;
		}
	}
}

static int scan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct scan *sc = arg;
	if (info->dlpi_addr == sc->self || info->dlpi_addr == sc->cuda)
		return 0;
	for (int k = 0; k < sc->s->o->n; k++)
		if (info->dlpi_addr == sc->s->o->base[k])
			return 0;
	uintptr_t rlo = 0, rhi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
			rlo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			rhi = rlo + info->dlpi_phdr[i].p_memsz;
		}
	bind_slots(info, rlo, rhi, sc);
	uintptr_t lo_v = sc->s->v[0].from, hi_v = sc->s->v[sc->s->n - 1].from;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		uintptr_t a = (info->dlpi_addr + ph->p_vaddr + 7) & ~(uintptr_t)7;
		uintptr_t end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		for (uintptr_t *p = (uintptr_t *)a; (uintptr_t)(p + 1) <= end; p++) {
			uintptr_t w = *p;
			const struct swap *m = w >= lo_v && w <= hi_v ? match(sc->s, w) : NULL;
			if (m && put(p, m->to, (uintptr_t)p >= rlo && (uintptr_t)p < rhi))
				sc->swapped++;
		}
	}
	return 0;
}

static uintptr_t base_of(void *fn)
{
	Dl_info di;
	return fn && dladdr(fn, &di) ? (uintptr_t)di.dli_fbase : 0;
}

struct named {
	int n;
	char *name[64];
	uintptr_t base[64];
};

static int list_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct named *l = arg;
	/* only objects whose names mention the runtime: a process may have
	 * hundreds of others */
	if (info->dlpi_name && strstr(info->dlpi_name, "gpux-rt") && l->n < 64 &&
	    (l->name[l->n] = strdup(info->dlpi_name)))
		l->base[l->n++] = info->dlpi_addr;
	return 0;
}

/* The loaded objects that define gpux_rt_hook_of themselves, ours
 * aside (looked up outside dl_iterate_phdr, which holds the loader's
 * lock): of those whose names mention the runtime. */
static void find_others(struct others *o, uintptr_t self)
{
	struct named l = { 0 };
	dl_iterate_phdr(list_object, &l);
	for (int i = 0; i < l.n; i++) {
		void *h = l.base[i] != self && o->n < MAX_OTHERS
				  ? dlopen(l.name[i], RTLD_LAZY | RTLD_NOLOAD)
				  : NULL;
		Dl_info di;
		void *f = h ? dlsym(h, "gpux_rt_hook_of") : NULL;
		void *b = h ? dlsym(h, "gpux_rt_busy") : NULL;
		void *a = h ? dlsym(h, "gpux_rt_cupti_adopt") : NULL;
		void *c = h ? dlsym(h, "gpux_rt_cupti_lib") : NULL;
		if (f && b && dladdr(f, &di) && (uintptr_t)di.dli_fbase == l.base[i]) {
			struct rt_cupti_peer *p = &o->cupti[o->n];
			const char *slash = strrchr(l.name[i], '/');
			o->base[o->n] = l.base[i];
			*(void **)&p->adopt = a;
			*(void **)&p->lib = c;
			if (slash && (size_t)(slash - l.name[i]) < sizeof(p->dir))
				memcpy(p->dir, l.name[i], (size_t)(slash - l.name[i]));
			o->hook_of[o->n] = (hook_of_fn)f;
			o->busy[o->n++] = (int (*)(void))b;
		}
		if (h)
			dlclose(h);
		free(l.name[i]);
	}
}

/* Set while gpux_rt_attach moves the program's bindings over, object
 * by object (rt.h). */
static int binding;

bool rt_attach_binding(void)
{
	return __atomic_load_n(&binding, __ATOMIC_ACQUIRE);
}

static int attach(const char *session);

/* The number of entry points the program's bindings now send through
 * the runtime (0: none found, so nothing is traced); -1 when the session
 * cannot be joined, -2 when this instance was in a session already (a
 * later gpux -p loads a copy), -3 when an earlier instance's session
 * still has its gpux. */
int gpux_rt_attach(const char *session)
{
	if (rt_sess_root())
		return -2;
	__atomic_store_n(&binding, 1, __ATOMIC_RELEASE);
	int rc = attach(session);
	__atomic_store_n(&binding, 0, __ATOMIC_RELEASE);
	return rc;
}

static int attach(const char *session)
{
	uintptr_t self = base_of((void *)gpux_rt_attach);
	struct others o = { 0 };
	find_others(&o, self);
	for (int k = 0; k < o.n; k++)
		if (o.busy[k]())
			return -3;
	rt_cupti_set_peers(o.cupti, o.n);
	struct gpux_sess_hdr *h = session ? rt_sess_join(session) : NULL;
	if (!h)
		return -1;
	/* device probes: the session is live (rt_live.c), kernels of modules
	 * loaded before now found by their fatbins */
	if (h->flags & GPUX_SESS_LIVE) {
		rt_attach_images_scan();
		/* the runtime thread from now: it follows the generations a
		 * REPL makes before the program's next launch */
		if (rt_cu_ready())
			rt_live();
	}
	struct swaps s = { .o = &o };
	typedef CUresult (*ver_fn)(int *);
	ver_fn ver = (ver_fn)rt_cuda_sym("cuDriverGetVersion");
	if (ver && ver(&s.version) == CUDA_SUCCESS)
		s.gpa = (gpa2_fn)rt_cuda_sym("cuGetProcAddress_v2");
	rt_hooks_each(collect, &s);
	if (s.oom || !s.n) {
		free(s.v);
		free(s.named);
		return s.oom ? -1 : 0;
	}
	qsort(s.v, s.n, sizeof(*s.v), by_from);
	if (s.nnamed)
		qsort(s.named, s.nnamed, sizeof(*s.named), by_name);
	struct scan sc = { &s, self, base_of(rt_cuda_sym("cuInit")), 0 };
	/* nothing in scan_object may take the loader's lock (dlsym, dlopen) */
	dl_iterate_phdr(scan_object, &sc);
	free(s.v);
	free(s.named);
	RT_TRACE("attach: %zu bindings now through the runtime", sc.swapped);
	return (int)(sc.swapped > 0x7fffffff ? 0x7fffffff : sc.swapped);
}

/* gpux_rt_attach's answer, GPUX_ATTACH_PENDING until there is one */
static volatile int64_t answer = GPUX_ATTACH_PENDING;

static void *attach_thread(void *arg)
{
	int r = gpux_rt_attach(arg);
	free(arg);
	__atomic_store_n(&answer, (int64_t)r, __ATOMIC_RELEASE);
	return NULL;
}

/* Where gpux_rt_attach(session)'s answer will be (gpux reads it there,
 * attach/inject.h's inject_wait_word), started on a thread of its own;
 * -2 at once when this instance was in a session already, -1 when no
 * thread can be started. */
int64_t gpux_rt_attach_start(const char *session)
{
	if (rt_sess_root())
		return -2;
	char *copy = session ? strdup(session) : NULL;
	if (session && !copy)
		return -1;
	pthread_attr_t at;
	pthread_t t;
	sigset_t all, old;
	/* the program's signals stay with its own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_attr_init(&at);
	if (!rc) {
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&t, &at, attach_thread, copy);
		pthread_attr_destroy(&at);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		free(copy);
		return -1;
	}
	return (int64_t)(uintptr_t)&answer;
}
