/* Maps of the host object: which maps host and driver probes use, their
 * layout (bpftrace's: packed keys, per-CPU hashes for aggregations, the
 * hist bucket as the last key component), their BTF definitions, and the
 * helper calls that read and write them. */
#include <string.h>

#include "host_priv.h"

struct hmap *hl_map_of(struct hctx *h, const struct node *m)
{
	return m->u.map.info ? hl_index_get(&h->map_ix, m->u.map.info) : NULL;
}

unsigned hl_str_size(struct hctx *h, const struct node *e)
{
	if (e->type.kind == TY_TUPLE || e->type.kind == TY_RECORD || e->type.kind == TY_ARRAY)
		return tuple_size(e->type);
	if (e->type.kind == TY_STR && e->type.count)
		return e->type.count + 1; /* a char array: NUL added */
	if (e->type.kind == TY_BUF)
		return BUF_SIZE;
	if (e->type.kind == TY_INET)
		return INET_SIZE;
	if (e->type.kind == TY_USYM)
		return USYM_SIZE;
	unsigned known = ast_str_size(e);
	if (known)
		return known;
	switch (e->kind) {
	case N_IDENT:
		if (e->u.ident.kind == ID_BUILTIN && !strcmp(e->u.ident.name, "probe"))
			return h->probe_str;
		return HOST_STR_MAX;
	case N_FIELD:
		for (struct tp_field *f = h->tp; f && f->f.name; f++)
			if (!strcmp(f->f.name, e->u.field.name) && f->array && !f->dynamic)
				return f->size ? f->size : 1;
		return HOST_STR_MAX;
	case N_TERNARY: {
		unsigned a = hl_str_size(h, e->u.ternary.then);
		unsigned b = hl_str_size(h, e->u.ternary.els);
		return a > b ? a : b;
	}
	default:
		return HOST_STR_MAX;
	}
}

/* ---- layout: one pass over the host probes ---- */

struct seen {
	struct map_info *info;
	unsigned key_str[8];
	/* per key: uses that are a cuda: event's 'kernel' (whose id it can
	 * store), and uses that are other strings */
	bool key_kernel[8], key_other[8];
	unsigned value_str;
	const struct node *lhist;
	bool cuda; /* a cuda: probe uses it */
	bool cuda_writes; /* ... and changes it */
};

struct walk_state {
	struct hctx *h;
	struct seen *s;
	int *ns;
	struct hindex *ix; /* map_info -> its struct seen */
	bool cuda;
	bool kernel_events; /* every event of the probe carries a kernel id */
};

/* 'kernel' in a probe whose events all carry the kernel's id. */
static bool is_kernel_field(const struct walk_state *w, const struct node *k)
{
	return w->kernel_events && k->kind == N_IDENT && k->u.ident.kind == ID_FIELD &&
	       !strcmp(k->u.ident.name, "kernel");
}

static struct seen *seen_of(struct walk_state *w, struct map_info *mi)
{
	return hl_index_get(w->ix, mi);
}

static void note_map(struct walk_state *w, struct node *m)
{
	struct map_info *mi = m->u.map.info;
	if (!mi)
		return;
	struct seen *e = seen_of(w, mi);
	if (!e) {
		e = &w->s[(*w->ns)++];
		memset(e, 0, sizeof(*e));
		e->info = mi;
		hl_index_put(w->ix, &w->h->obj->arena, mi, e);
	}
	struct hctx *h = w->h;
	int i = 0;
	for (struct node *k = m->u.map.keys; k && i < 8; k = k->next, i++)
		if (type_is_bytes(k->type)) {
			unsigned z = hl_str_size(h, k);
			if (z > e->key_str[i])
				e->key_str[i] = z;
			if (is_kernel_field(w, k))
				e->key_kernel[i] = true;
			else
				e->key_other[i] = true;
		}
}

/* Every map use and what it stores: string sizes, lhist bounds, and
 * whether any call needs the event ring. */
static void walk_node(struct node *n, void *arg)
{
	struct walk_state *w = arg;
	struct hctx *h = w->h;
	if (n->kind == N_MAP) {
		note_map(w, n);
		struct seen *e = seen_of(w, n->u.map.info);
		if (e && w->cuda)
			e->cuda = true;
	}
	if (n->kind == N_CALL) {
		static const char *const rec[] = { "printf", "exit", "print", "clear",
						   "zero", "time", "cat", "system", "join",
						   "unwatch" };
		for (size_t i = 0; i < sizeof(rec) / sizeof(rec[0]); i++)
			if (!strcmp(n->u.call.name, rec[i]))
				h->need_events = true;
		if (!strcmp(n->u.call.name, "join"))
			h->need_join = true;
	}
	ast_visit_children(n, walk_node, w);
	const struct node *changed = NULL;
	if (n->kind == N_INCDEC)
		changed = n->u.incdec.target;
	else if (n->kind == N_CALL && n->u.call.args &&
		 (!strcmp(n->u.call.name, "delete") || !strcmp(n->u.call.name, "clear") ||
		  !strcmp(n->u.call.name, "zero")))
		changed = n->u.call.args;
	else if (n->kind == N_ASSIGN)
		changed = n->u.assign.target;
	if (w->cuda && changed && changed->kind == N_MAP && changed->u.map.info)
		seen_of(w, changed->u.map.info)->cuda_writes = true;
	if (n->kind != N_ASSIGN)
		return;
	struct node *t = n->u.assign.target, *v = n->u.assign.value;
	if (t->kind != N_MAP || !t->u.map.info)
		return;
	struct seen *e = seen_of(w, t->u.map.info);
	if (type_is_bytes(v->type) &&
	    hl_str_size(h, v) > e->value_str)
		e->value_str = hl_str_size(h, v);
	if (v->kind == N_CALL && !strcmp(v->u.call.name, "lhist") && !e->lhist)
		e->lhist = v;
}

static void walk(struct walk_state *w, struct node *n, bool cuda, bool kernel_events)
{
	w->cuda = cuda;
	w->kernel_events = kernel_events;
	if (n)
		walk_node(n, w);
}

/* A cuda: event filtered by kernel name has the kernel's id after its
 * fields (llvm_host.h): the runtime filters on it. */
static bool carries_kernel_id(const struct event *e)
{
	return e->filter == FILTER_KERNEL;
}

/* Whether every event probe p attaches to is a cuda: one carrying the
 * kernel's id. */
static bool kernel_events(const struct node *p)
{
	for (const struct node *a = p->u.probe.attach; a; a = a->next) {
		if (!provider_in_target_vm(a->u.attach.prov) || !a->u.attach.nevents)
			return false;
		for (int i = 0; i < a->u.attach.nevents; i++)
			if (!carries_kernel_id(a->u.attach.events[i]))
				return false;
	}
	return true;
}

LLVMValueRef hl_map_global(struct hctx *h, const char *sym,
			    const uint32_t *vals, const char *const *names, int n)
{
	LLVMTypeRef t = LLVMArrayType(h->ptr, (unsigned)n);
	LLVMValueRef g = LLVMAddGlobal(h->mod, t, sym);
	LLVMSetInitializer(g, LLVMConstNull(t));
	LLVMSetSection(g, ".maps");
	LLVMSetAlignment(g, 8);
	hl_btf_map_note(h, sym, vals, names, n);
	return g;
}

/* A map gdev: probes use too takes the device's layout (dev_maps.c):
 * the VM in the traced process works on the device's own table. When
 * cuda: probes only read it, it is the device's (a mirror: the runtime
 * refills it from the device's snapshots), and its value may be any
 * one-word aggregation; when they write it, the host's table is the
 * one the device reads, so its values are plain integers. */
static int layout_device(struct hctx *h, struct map_info *mi, struct host_map *p,
			 bool mirror)
{
	struct arena *a = &h->obj->arena;
	p->device = true;
	p->type = BPF_M_HASH;
	p->nkeys = mi->nkeys > 0 ? mi->nkeys : 0;
	p->keys = arena_zalloc(a, sizeof(*p->keys) * (size_t)(p->nkeys + 1));
	for (int i = 0; i < p->nkeys; i++) {
		struct type t = mi->keys[i];
		if (t.kind != TY_INT && t.kind != TY_STR) {
			host_err(h, mi->first_use, "@%s: keys of this type are not supported in "
				 "a map shared with gdev: probes", mi->name);
			return -1;
		}
		p->keys[i] = (struct host_key){ t, 8u * (unsigned)i, 8 };
	}
	struct type v = mi->value;
	bool word = v.kind == TY_INT ||
		    (v.kind == TY_AGG && (v.agg == AGG_COUNT || v.agg == AGG_SUM ||
					  v.agg == AGG_MIN || v.agg == AGG_MAX));
	if (!word || (!mirror && v.kind != TY_INT)) {
		host_err(h, mi->first_use, mirror ? "@%s is used by gdev: probes too: cuda: probes can "
			 "read it when it holds integers or count, sum, min or max values"
			 : "@%s is used by gdev: probes too: host probes may only store integers "
			 "in it (aggregate on the device instead)", mi->name);
		return -1;
	}
	p->mirror = mirror;
	p->key_size = 8u * (unsigned)(p->nkeys ? p->nkeys : 1);
	p->value_size = 8;
	p->max_entries = p->nkeys ? HOST_MAP_ENTRIES : 1;
	return 0;
}

static int layout_one(struct hctx *h, struct seen *e, struct hmap *hm)
{
	struct map_info *mi = e->info;
	struct host_map *p = hm->pub;
	struct arena *a = &h->obj->arena;
	p->name = mi->name;
	p->sym = arena_printf(a, "AT_%s", mi->name);
	p->value = mi->value;
	/* a gdev: map that only BEGIN/END/interval print or clear keeps the
	 * host layout: they never touch its values */
	if ((mi->places & PLACE_DEVICE) && e->cuda) {
		if (layout_device(h, mi, p, !e->cuda_writes))
			return -1;
		goto define;
	}
	p->max_entries = HOST_MAP_ENTRIES;
	p->nkeys = mi->nkeys > 0 ? mi->nkeys : 0;
	p->keys = arena_zalloc(a, sizeof(*p->keys) * (size_t)(p->nkeys + 1));
	unsigned off = 0;
	for (int i = 0; i < p->nkeys; i++) {
		struct type t = mi->keys[i];
		unsigned sz = 8;
		int j = i < 8 ? i : 7;
		bool kid = i < 8 && t.kind == TY_STR && e->key_kernel[j] && !e->key_other[j];
		if (kid)
			sz = 8; /* the id */
		else if (type_is_bytes(t))
			sz = (e->key_str[j] + 7) & ~7u;
		else if (t.kind != TY_INT && t.kind != TY_PTR && t.kind != TY_POINTER &&
			 !type_prints_as_text(t) && t.kind != TY_STACK && t.kind != TY_KSYM) {
			host_err(h, mi->first_use, "@%s: keys of this type are not supported in host probes",
				 mi->name);
			return -1;
		}
		p->keys[i] = (struct host_key){ t, off, sz ? sz : 8 };
		if (kid)
			p->kernel_id_keys |= 1u << i;
		off += p->keys[i].size;
	}
	if (!p->nkeys)
		off = 8; /* a scalar map is one element at key 0 */
	p->type = BPF_M_HASH;
	p->value_size = 8;
	if (mi->value.kind == TY_AGG) {
		p->type = BPF_M_PERCPU_HASH;
		switch (mi->value.agg) {
		case AGG_MIN: case AGG_MAX: case AGG_AVG: case AGG_STATS:
			p->value_size = 16; /* {value, set} or {sum, count} */
			break;
		case AGG_LHIST:
			for (int i = 0; i < 3 && e->lhist; i++) {
				struct node *arg = e->lhist->u.call.args;
				for (int k = 0; k <= i && arg; k++)
					arg = arg->next;
				if (!arg || !host_const_int(arg, &p->lhist[i])) {
					host_err(h, e->lhist, "lhist() bounds must be constants");
					return -1;
				}
			}
			/* fall through */
		case AGG_HIST:
			p->bucket = true;
			off += 8;
			break;
		default:
			break;
		}
	} else if (type_is_bytes(mi->value)) {
		/* bytes whole, as strings are (host_fns.c) */
		p->value_str = (e->value_str + 7) & ~7u;
		p->value_size = p->value_str;
	}
	p->key_size = off;
define:;
	static const char *const names[] = { "type", "max_entries", "key_size",
					     "value_size" };
	uint32_t vals[] = { p->type, p->max_entries, p->key_size, p->value_size };
	hm->global = hl_map_global(h, p->sym, vals, names, 4);
	return 0;
}

int hl_maps_layout(struct hctx *h)
{
	int cap = 0;
	for (struct map_info *mi = h->prog->maps; mi; mi = mi->next)
		cap++;
	struct seen *s = arena_zalloc(&h->obj->arena, sizeof(*s) * (size_t)(cap + 1));
	int ns = 0;
	struct hindex ix = { 0 };
	struct walk_state w = { .h = h, .s = s, .ns = &ns, .ix = &ix };
	for (struct node *p = h->prog->probes; p; p = p->next) {
		if (!(p->u.probe.place & (PLACE_HOST | PLACE_DRIVER)))
			continue;
		if (hl_probe_tp(h, p))
			return -1;
		bool cuda = provider_in_target_vm(p->u.probe.attach->u.attach.prov);
		/* FUNC+argN hands its argument over as a record */
		for (const struct node *a = p->u.probe.attach; a; a = a->next)
			if (a->u.attach.wp_func)
				h->need_events = true;
		bool kev = cuda && kernel_events(p);
		walk(&w, p->u.probe.pred, cuda, kev);
		walk(&w, p->u.probe.body, cuda, kev);
	}
	h->tp = NULL;
	h->maps = arena_zalloc(&h->obj->arena, sizeof(*h->maps) * (size_t)(ns + 1));
	h->obj->maps = arena_zalloc(&h->obj->arena,
				    sizeof(*h->obj->maps) * (size_t)(ns + 1));
	/* program order, so record ids do not depend on first use */
	for (struct map_info *mi = h->prog->maps; mi; mi = mi->next) {
		struct seen *e = seen_of(&w, mi);
		if (!e)
			continue;
		struct hmap *hm = &h->maps[h->nmaps];
		hm->info = mi;
		hm->index = h->nmaps;
		hm->pub = &h->obj->maps[h->nmaps];
		h->nmaps++;
		hl_index_put(&h->map_ix, &h->obj->arena, mi, hm);
		if (layout_one(h, e, hm))
			return -1;
	}
	h->obj->nmaps = h->nmaps;
	if (h->need_events || h->opts->helper_check) { /* -k's records too */
		static const char *const names[] = { "type", "max_entries" };
		uint32_t vals[] = { BPF_M_RINGBUF, HOST_RINGBUF_BYTES };
		h->events = hl_map_global(h, HOST_EVENTS_MAP, vals, names, 2);
	}
	if (h->need_join) {
		static const char *const names[] = { "type", "max_entries", "key_size",
						     "value_size" };
		uint32_t vals[] = { BPF_M_PERCPU_ARRAY, 1, 4, HOST_JOIN_BYTES };
		h->join = hl_map_global(h, HOST_JOIN_MAP, vals, names, 4);
	}
	return 0;
}

/* ---- operations ---- */

/* One key word of a device-layout map: integers as i64, 'kernel' as the
 * launched kernel's id (the events that carry one: llvm_host.h). */
static LLVMValueRef device_key_word(struct hctx *h, const struct host_map *p, struct node *k)
{
	if (k->type.kind != TY_STR)
		return hl_expr_int(h, k);
	if (k->kind != N_IDENT || strcmp(k->u.ident.name, "kernel") || !h->cuda ||
	    !carries_kernel_id(h->at->events[0])) {
		host_err(h, k, "@%s is used by gdev: probes too: its only string key is "
			 "'kernel', in cuda:launch and cuda:kernel_end", p->name);
		return NULL;
	}
	return hl_cuda_kernel_id(h);
}

LLVMValueRef hl_map_key(struct hctx *h, struct hmap *hm, const struct node *m,
		     LLVMValueRef bucket)
{
	struct host_map *p = hm->pub;
	struct node *k0 = m->u.map.keys;
	/* one key of bytes as big as the key (a record, an array): its own
	 * buffer is the key, not a copy of it, which would double the BPF
	 * stack it takes */
	if (p->nkeys == 1 && !bucket && !p->device && !p->kernel_id_keys && k0 &&
	    type_is_bytes(k0->type)) {
		struct hval v = hl_expr(h, k0);
		if (!v.v)
			return NULL;
		if (v.ssize == p->keys[0].size && p->keys[0].size == p->key_size)
			return v.v;
		LLVMValueRef key = host_alloca(h, p->key_size, "key");
		host_zero(h, key, p->key_size, 8);
		hl_str_copy(h, key, p->keys[0].size, v);
		return key;
	}
	LLVMValueRef key = host_alloca(h, p->key_size, "key");
	host_zero(h, key, p->key_size, 8);
	int i = 0;
	for (struct node *k = m->u.map.keys; k && i < p->nkeys; k = k->next, i++) {
		if (p->device || (p->kernel_id_keys & (1u << i))) {
			LLVMValueRef w = p->device ? device_key_word(h, p, k) : hl_cuda_kernel_id(h);
			if (!w)
				return NULL;
			LLVMBuildStore(h->b, w, host_gep(h, key, p->keys[i].offset));
			continue;
		}
		struct hval v = hl_expr(h, k);
		if (!v.v)
			return NULL;
		LLVMValueRef dst = host_gep(h, key, p->keys[i].offset);
		if (v.ssize)
			hl_str_copy(h, dst, p->keys[i].size, v);
		else
			LLVMBuildStore(h->b, v.v, dst);
	}
	if (bucket)
		LLVMBuildStore(h->b, bucket, host_gep(h, key, p->key_size - 8));
	return key;
}

LLVMValueRef hl_map_lookup(struct hctx *h, struct hmap *hm, LLVMValueRef key)
{
	LLVMValueRef args[] = { hm->global, key };
	LLVMValueRef p = host_helper(h, BPF_H_MAP_LOOKUP, h->ptr, args, 2);
	hl_lookup_checked(h, p);
	return p;
}

void hl_map_update(struct hctx *h, struct hmap *hm, LLVMValueRef key,
		LLVMValueRef val, uint64_t flags)
{
	LLVMValueRef args[] = { hm->global, key, val, host_const(h, flags) };
	host_helper(h, BPF_H_MAP_UPDATE, h->i64, args, 4);
}

void hl_map_delete(struct hctx *h, struct hmap *hm, LLVMValueRef key)
{
	LLVMValueRef args[] = { hm->global, key };
	host_helper(h, BPF_H_MAP_DELETE, h->i64, args, 2);
}
