/* The kernel side of a run (kattach.h), through libbpf. */
#include "kattach.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kattach_priv.h"
#include "host_path.h"
#include "kattach_verdict.h"
#include "session.h"

static struct span refused; /* the probe the kernel's verifier refused last */
static struct span unattached; /* the probe that could not be attached last */

/* libbpf's own lines while attaching: gpux's message says what failed
 * and why, at the probe; the raw lines on request */
static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

const struct host_prog *kattach_prog(const struct host_obj *o, const char *name)
{
	for (int i = 0; i < o->nprogs; i++)
		if (!strcmp(o->progs[i].func, name))
			return &o->progs[i];
	return NULL;
}

/* How long one kattach_consume hands records over: probes that fire on
 * what the records' actions do (system() on sched_switch) can refill the
 * ring as fast as it is read, and the run loop must still get to see
 * Ctrl-C. A coarse clock is enough for this and costs nanoseconds. */
#define CONSUME_NS 20000000LL
#define BATCH_DONE (-EAGAIN)

int64_t kattach_coarse_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int on_rec(void *ctx, void *data, size_t len)
{
	struct kattach *l = ctx;
	int rc = l->rec ? l->rec(l->arg, data, len) : 0;
	/* the record is consumed either way: libbpf moves past it first */
	if (rc == 0 && kattach_coarse_ns() - l->consume_start >= CONSUME_NS) {
		l->batch_done = true;
		return BATCH_DONE;
	}
	return rc;
}

int kattach_add_link(struct kattach *l, struct bpf_link *k, char *err, size_t errlen)
{
	if (l->nlinks == l->caplinks) {
		int cap = l->caplinks ? 2 * l->caplinks : 16;
		struct bpf_link **v = realloc(l->links, (size_t)cap * sizeof(*v));
		if (!v) {
			bpf_link__destroy(k);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		l->links = v;
		l->caplinks = cap;
	}
	l->links[l->nlinks++] = k;
	return 0;
}

int kattach_sym_entry(struct kattach *l, const char *func, const char *probe, uint64_t *cookie,
		      char *err, size_t errlen)
{
	struct bpf_map *m = bpf_object__find_map_by_name(l->bo, HOST_SYMS_MAP);
	*cookie = 0;
	if (!m)
		return 0; /* neither is read */
	if (l->nsyms >= HOST_SYMS_MAX) {
		snprintf(err, errlen, "more than %d functions match the globs of this program",
			 HOST_SYMS_MAX);
		return -1;
	}
	/* the probe string fills the rest of the value (host_syms.c) */
	size_t vsize = bpf_map__value_size(m), psize = vsize - HOST_SYM_STR;
	char *v = calloc(1, vsize);
	if (!v || vsize <= HOST_SYM_STR) {
		free(v);
		snprintf(err, errlen, "cannot fill %s", HOST_SYMS_MAP);
		return -1;
	}
	/* cut to the string size, as bpftrace cuts strings */
	memcpy(v, func, strnlen(func, HOST_SYM_STR - 1));
	memcpy(v + HOST_SYM_STR, probe, strnlen(probe, psize - 1));
	uint32_t key = (uint32_t)l->nsyms;
	int rc = bpf_map_update_elem(bpf_map__fd(m), &key, v, BPF_ANY);
	free(v);
	if (rc) {
		snprintf(err, errlen, "cannot fill %s: %s", HOST_SYMS_MAP, strerror(errno));
		return -1;
	}
	*cookie = l->nsyms++;
	return 0;
}

void kattach_same_probe(struct kattach *l)
{
	l->nsame_probe++;
}

int kattach_ncpu(const struct kattach *l)
{
	return l->ncpu;
}

/* A kernel program attached by its unit's attacher (the object's table
 * says which kind each program is). */
static int attach_one(struct kattach *l, struct bpf_program *p, int pid, char *err,
		      size_t errlen)
{
	const struct host_prog *hp = kattach_prog(l->obj, bpf_program__name(p));
	const struct kattach_unit *u = hp ? kattach_unit_of(hp->attach) : NULL;
	if (!u) {
		snprintf(err, errlen, "probes of section %s cannot be attached in the kernel",
			 bpf_program__section_name(p));
		return -1;
	}
	return u->attach(l, p, hp, pid, err, errlen);
}

/* Loads the programs of l->run; the struct_ops maps only for the
 * driver's; the other maps shared with l->share where it has them. */
static int load(struct kattach *l, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "gpux");
	l->bo = bpf_object__open_mem(l->obj->elf, l->obj->size, &oo);
	if (!l->bo) {
		snprintf(err, errlen, "libbpf cannot open the host object: %s", strerror(errno));
		return -1;
	}
	struct bpf_program *p;
	bpf_object__for_each_program(p, l->bo) {
		const struct host_prog *hp = kattach_prog(l->obj, bpf_program__name(p));
		if (!hp || hp->run != l->run)
			bpf_program__set_autoload(p, false);
	}
	struct bpf_map *m;
	bpf_object__for_each_map(m, l->bo) {
		if (bpf_map__type(m) == BPF_MAP_TYPE_STRUCT_OPS) {
			bpf_map__set_autocreate(m, l->run == HOST_RUN_DRIVER);
			continue;
		}
		struct bpf_map *sm = l->share ? bpf_object__find_map_by_name(l->share->bo,
									   bpf_map__name(m)) : NULL;
		if (sm && bpf_map__reuse_fd(m, bpf_map__fd(sm))) {
			snprintf(err, errlen, "cannot share map %s: %s", bpf_map__name(m),
				 strerror(errno));
			return -1;
		}
		if (sm && !strcmp(bpf_map__name(m), HOST_EVENTS_MAP))
			l->shared_events = true;
	}
	libbpf_print_fn_t print = kattach_verdict_begin();
	int e = bpf_object__load(l->bo);
	if (!e) {
		kattach_verdict_end(print, true); /* libbpf's warnings, as always */
		return 0;
	}
	/* the verifier's reason, located at the probe it refused: the raw
	 * log only on request (or when it says nothing gpux can read) */
	struct kattach_verdict v;
	const struct host_prog *hp = kattach_verdict_read(&v) ? kattach_prog(l->obj, v.prog) : NULL;
	kattach_verdict_end(print, !hp || getenv("GPUX_VERIFIER_LOG"));
	if (hp) {
		refused = hp->span;
		const char *ln = strrchr(v.where, ':');
		snprintf(err, errlen, "the kernel's verifier refused %s: %s%s%s%s%s%s", hp->probe,
			 v.message, v.source[0] ? ", at `" : "", v.source, v.source[0] ? "`" : "",
			 ln ? " (line " : "", ln ? ln + 1 : "");
		if (ln && strlen(err) + 2 < errlen)
			strcat(err, ")");
		return -1;
	}
	snprintf(err, errlen, l->run == HOST_RUN_DRIVER
		 ? "cannot load the policy for the driver: %s (libbpf said why above)"
		 : "the kernel refused the programs: %s", strerror(-e));
	return -1;
}

bool kattach_unattached(struct span *where)
{
	if (!unattached.first_line)
		return false;
	*where = unattached;
	return true;
}

bool kattach_refused(struct span *where)
{
	if (!refused.first_line)
		return false;
	*where = refused;
	return true;
}

bool kattach_always_newest(const struct host_prog *hp)
{
	(void)hp;
	return true;
}

static bool newest_first(const struct kattach *l, const struct bpf_program *p)
{
	const struct host_prog *hp = kattach_prog(l->obj, bpf_program__name(p));
	const struct kattach_unit *u = hp ? kattach_unit_of(hp->attach) : NULL;
	return u && u->newest_first && u->newest_first(hp);
}

static int attach_prog(struct kattach *l, struct bpf_program *p, int pid, char *err,
		       size_t errlen)
{
	const struct host_prog *hp = kattach_prog(l->obj, bpf_program__name(p));
	char why[PATH_MAX + 256];
	libbpf_print_fn_t print = libbpf_set_print(getenv("GPUX_VERIFIER_LOG") ? quiet_print
									   : silent_print);
	int rc = attach_one(l, p, pid, why, sizeof(why));
	libbpf_set_print(print);
	if (rc) {
		snprintf(err, errlen, "%s: %s", hp ? hp->probe : bpf_program__name(p), why);
		if (hp)
			unattached = hp->span;
		return -1;
	}
	return 0;
}

/* Probes on one event run in the order they are written, as bpftrace's
 * do: the kernel runs a tracepoint's programs in the order they were
 * attached and a uprobe's newest first, so those attach last to
 * first. */
static int attach_kernel(struct kattach *l, int pid, char *err, size_t errlen)
{
	struct bpf_program *p, *last = NULL;
	bpf_object__for_each_program(p, l->bo) {
		if (!bpf_program__autoload(p))
			continue;
		if (newest_first(l, p))
			last = p;
		else if (attach_prog(l, p, pid, err, errlen))
			return -1;
	}
	for (struct bpf_program *u = last; u; u = bpf_object__prev_program(l->bo, u))
		if (bpf_program__autoload(u) && newest_first(l, u) &&
		    attach_prog(l, u, pid, err, errlen))
			return -1;
	return 0;
}

int kattach_start(const struct host_obj *obj, enum host_run run, int pid,
		    const struct kattach *share, kattach_rec_fn rec, void *arg,
		    struct kattach **out, char *err, size_t errlen)
{
	libbpf_set_print(quiet_print);
	refused = unattached = (struct span){ 0 };
	struct kattach *l = calloc(1, sizeof(*l));
	if (!l) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	*l = (struct kattach){ .obj = obj, .run = run, .share = share, .rec = rec,
				 .arg = arg, .ncpu = libbpf_num_possible_cpus() };
	if (l->ncpu <= 0) {
		snprintf(err, errlen, "out of memory");
		kattach_close(l);
		return -1;
	}
	if (load(l, err, errlen)) {
		kattach_close(l);
		return -1;
	}
	/* records of a shared ring buffer come through its owner */
	struct bpf_map *ev = bpf_object__find_map_by_name(l->bo, HOST_EVENTS_MAP);
	if (ev && !l->shared_events &&
	    !(l->rb = ring_buffer__new(bpf_map__fd(ev), on_rec, l, NULL))) {
		snprintf(err, errlen, "cannot open the ring buffer: %s", strerror(errno));
		kattach_close(l);
		return -1;
	}
	if (run == HOST_RUN_DRIVER ? kattach_driver_attach(l, err, errlen)
				   : attach_kernel(l, pid, err, errlen)) {
		kattach_close(l);
		return -1;
	}
	*out = l;
	return 0;
}

int kattach_open(const struct host_obj *obj, int pid, kattach_rec_fn rec,
		   void *arg, struct kattach **out, char *err, size_t errlen)
{
	return kattach_start(obj, HOST_RUN_KERNEL, pid, NULL, rec, arg, out, err, errlen);
}

int kattach_attached(const struct kattach *l)
{
	/* a kernel address's watchpoint, or a profile: probe, is one probe
	 * on every CPU */
	return l->nlinks - l->nsame_probe + l->nwatch_probes;
}

int kattach_fd(const struct kattach *l)
{
	return l->rb ? ring_buffer__epoll_fd(l->rb) : -1;
}

int kattach_consume(struct kattach *l)
{
	l->consume_start = kattach_coarse_ns();
	if (l->iter.link)
		return kattach_iter_consume(l, l->consume_start + CONSUME_NS);
	if (!l->rb)
		return 0;
	l->batch_done = false;
	int rc = ring_buffer__consume(l->rb);
	if (rc == BATCH_DONE && l->batch_done)
		return 1;
	return rc < 0 ? -1 : 0;
}

void kattach_detach(struct kattach *l)
{
	kattach_iter_stop(l);
	kattach_detach_watches(l);
	while (l->nlinks > 0)
		bpf_link__destroy(l->links[--l->nlinks]);
}

static struct bpf_map *map_of(struct kattach *l, int map)
{
	if (map < 0 || map >= l->obj->nmaps)
		return NULL;
	return bpf_object__find_map_by_name(l->bo, l->obj->maps[map].sym);
}

static bool is_percpu(const struct bpf_map *m)
{
	enum bpf_map_type t = bpf_map__type(m);
	return t == BPF_MAP_TYPE_PERCPU_HASH || t == BPF_MAP_TYPE_PERCPU_ARRAY;
}

/* Folds the per-CPU values of vals (stride bytes apart) into dst. */
static void merge_cpus(const struct host_map *hm, int ncpu, const unsigned char *vals,
		       size_t stride, unsigned char *dst)
{
	enum agg_kind agg = hm->value.kind == TY_AGG ? hm->value.agg : AGG_NONE;
	memset(dst, 0, hm->value_size);
	for (int c = 0; c < ncpu; c++)
		gpux_merge_values((enum gpux_sess_merge)agg_merge(agg, true), 1, dst,
				  vals + (size_t)c * stride, hm->value_size);
}

int kattach_map_read(struct kattach *l, int map, unsigned char **kv, size_t *n)
{
	struct bpf_map *m = map_of(l, map);
	*kv = NULL;
	*n = 0;
	if (!m)
		return -1;
	const struct host_map *hm = &l->obj->maps[map];
	bool percpu = is_percpu(m);
	size_t ks = hm->key_size, vs = hm->value_size, stride = (vs + 7) & ~(size_t)7;
	size_t vbytes = percpu ? stride * (size_t)l->ncpu : vs, cap = 0;
	unsigned char *key = calloc(1, ks), *next = calloc(1, ks), *val = calloc(1, vbytes);
	int fd = bpf_map__fd(m), rc = key && next && val ? 0 : -1;
	const void *prev = NULL;
	while (rc == 0 && bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, ks);
		prev = key;
		if (bpf_map_lookup_elem(fd, key, val))
			continue; /* deleted meanwhile */
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			unsigned char *w = realloc(*kv, cap * (ks + vs));
			if (!w) {
				rc = -1;
				break;
			}
			*kv = w;
		}
		unsigned char *e = *kv + (*n)++ * (ks + vs);
		memcpy(e, key, ks);
		if (percpu)
			merge_cpus(hm, l->ncpu, val, stride, e + ks);
		else
			memcpy(e + ks, val, vs);
	}
	free(key);
	free(next);
	free(val);
	if (rc) {
		free(*kv);
		*kv = NULL;
		*n = 0;
	}
	return rc;
}

/* Every key of the map, then fn on each (deleting while iterating would
 * restart get_next_key). */
static int each_key(struct kattach *l, int map, bool del)
{
	unsigned char *kv;
	size_t n;
	if (kattach_map_read(l, map, &kv, &n))
		return -1;
	const struct host_map *hm = &l->obj->maps[map];
	struct bpf_map *m = map_of(l, map);
	bool percpu = is_percpu(m);
	size_t es = hm->key_size + hm->value_size;
	size_t vbytes = percpu ? ((hm->value_size + 7) & ~(size_t)7) * (size_t)l->ncpu
			       : hm->value_size;
	unsigned char *zero = calloc(1, vbytes);
	int rc = zero ? 0 : -1, fd = bpf_map__fd(m);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const unsigned char *k = kv + i * es;
		if (del)
			bpf_map_delete_elem(fd, k);
		else
			bpf_map_update_elem(fd, k, zero, BPF_EXIST);
	}
	free(zero);
	free(kv);
	return rc;
}

int kattach_map_write(struct kattach *l, int map, const void *key, const void *value)
{
	struct bpf_map *m = map_of(l, map);
	if (!m)
		return -1;
	int fd = bpf_map__fd(m);
	if (!value)
		return bpf_map_delete_elem(fd, key) && errno != ENOENT && errno != EINVAL ? -1 : 0;
	if (!is_percpu(m))
		return bpf_map_update_elem(fd, key, value, BPF_ANY) ? -1 : 0;
	size_t vs = l->obj->maps[map].value_size, stride = (vs + 7) & ~(size_t)7;
	unsigned char *all = calloc((size_t)l->ncpu, stride);
	if (!all)
		return -1;
	memcpy(all, value, vs);
	int rc = bpf_map_update_elem(fd, key, all, BPF_ANY) ? -1 : 0;
	free(all);
	return rc;
}

int kattach_map_clear(struct kattach *l, int map)
{
	return each_key(l, map, true);
}

int kattach_map_zero(struct kattach *l, int map)
{
	return each_key(l, map, false);
}

void kattach_close(struct kattach *l)
{
	if (!l)
		return;
	kattach_detach(l);
	ring_buffer__free(l->rb);
	bpf_object__close(l->bo);
	free(l->links);
	free(l->watches);
	free(l->wp_last);
	free(l);
}

int kattach_stack(struct kattach *l, unsigned limit, uint32_t id, uint64_t *ips)
{
	char name[64];
	snprintf(name, sizeof(name), HOST_STACK_MAP "%u", limit);
	const struct kattach *o = l->share ? l->share : l;
	struct bpf_map *m = bpf_object__find_map_by_name(o->bo, name);
	if (!m)
		return -1;
	return bpf_map_lookup_elem(bpf_map__fd(m), &id, ips) ? -1 : 0;
}
