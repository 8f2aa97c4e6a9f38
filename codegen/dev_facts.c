/* Facts about a device module's maps that the controller needs and that
 * only the compiler can tell (dev_lower.h: struct dev_map_meta): which
 * maps the device reads or writes, which only add up, which are arrays,
 * and whether the device reads the host's clock. */
#include <stdint.h>
#include <string.h>

#include "gpux_dev.h"

#include "dev_lower.h"

/* Maps the device program reads or overwrites (lookup, update, delete),
 * and those it changes at all (written), from the map reference in r1
 * at those calls; a reference it cannot follow marks every map. */
static void read_on_device(struct dev_module *mod)
{
	for (int p = 0; p < mod->nprobes; p++) {
		const struct dev_prog *prog = &mod->probes[p].prog;
		int reg_map[BPF_NREGS];
		for (int r = 0; r < BPF_NREGS; r++)
			reg_map[r] = -1;
		for (int i = 0; i < prog->ninsns; i++) {
			const struct bpf_insn *in = &prog->insns[i];
			unsigned cls = BPF_CLASS(in->code);
			if (bpf_is_lddw(in)) {
				reg_map[in->dst] = in->src == BPF_PSEUDO_MAP_IDX ? in->imm : -1;
				i++;
			} else if (in->code == (BPF_JMP | BPF_CALL)) {
				const struct dev_helper_info *hi = dev_helper_info(in->imm);
				bool op = hi && (hi->flags & DHF_MAP_OP);
				bool reads = in->imm == DH_MAP_LOOKUP || in->imm == DH_MAP_UPDATE ||
					     in->imm == DH_MAP_DELETE;
				int m = reg_map[1];
				for (int k = 0; op && k < mod->nmaps; k++)
					if (m < 0 || m == k) {
						mod->map_meta[k].read_on_device |= reads;
						mod->map_meta[k].written_on_device |=
							in->imm != DH_MAP_LOOKUP;
					}
				for (int r = 0; r <= 5; r++)
					reg_map[r] = -1;
			} else if (cls == BPF_ALU || cls == BPF_ALU64 || cls == BPF_LDX ||
				   cls == BPF_LD) {
				bool mov = BPF_OP(in->code) == BPF_MOV && (in->code & BPF_X) &&
					   cls == BPF_ALU64;
				reg_map[in->dst] = mov ? reg_map[in->src] : -1;
			}
		}
	}
}

struct adds {
	const struct map_info *mi;
	bool add, other;
};

static bool is_map(const struct node *n, const struct map_info *mi)
{
	return n->kind == N_MAP && n->u.map.info == mi;
}

static void scan_writes(struct node *n, void *arg)
{
	struct adds *a = arg;
	if (n->kind == N_ASSIGN && is_map(n->u.assign.target, a->mi)) {
		if (n->u.assign.op == OP_ADD || n->u.assign.op == OP_SUB)
			a->add = true;
		else
			a->other = true;
	} else if (n->kind == N_INCDEC && is_map(n->u.incdec.target, a->mi)) {
		a->add = true;
	}
	ast_visit_children(n, scan_writes, arg);
}

/* A plain map whose every write is `@m += v`, `@m -= v`, `@m++` or
 * `@m--` holds per-process partial sums, which merge by adding; any other
 * store makes the values whole, and the last slot's wins. */
static bool only_added(const struct program *prog, const struct map_info *mi)
{
	struct adds a = { mi, false, false };
	for (struct node *p = prog->probes; p; p = p->next)
		if (p->u.probe.place & PLACE_DEVICE)
			scan_writes(p, &a);
	return a.add && !a.other;
}

static void find_clock(struct node *n, void *arg)
{
	if (n->kind == N_IDENT && n->u.ident.builtin && !strcmp(n->u.ident.builtin->name, "nsecs"))
		*(bool *)arg = true;
	ast_visit_children(n, find_clock, arg);
}

/* What a predicate requires of the memory instruction: the `store`,
 * `!store` and `atomic` terms of its top-level && chain, each settled
 * per instruction (a probe is still called only where it holds). */
static unsigned access_only(const struct node *e)
{
	if (!e)
		return 0;
	if (e->kind == N_BINOP && e->u.binop.op == OP_LAND)
		return access_only(e->u.binop.lhs) | access_only(e->u.binop.rhs);
	bool neg = e->kind == N_UNOP && e->u.unop.op == OP_NOT;
	if (neg)
		e = e->u.unop.operand;
	if (e->kind != N_IDENT || e->u.ident.kind != ID_FIELD)
		return 0;
	if (!strcmp(e->u.ident.name, "store"))
		return neg ? GPUX_SITE_LOADS : GPUX_SITE_STORES;
	return !neg && !strcmp(e->u.ident.name, "atomic") ? GPUX_SITE_ATOMICS : 0;
}

/* Whether e, an integer key, lies in [0, *hi]: what makes a map an
 * array (GPUX_MAP_ARRAY). Only what holds whatever the program's data:
 * kernel ids, lane and warp indices, constants, and `%`, `&` and `/` by
 * a constant of something never negative; threadIdx's parts. *kern:
 * e is also at most the kernel id (the kernel, or `%`, `&`, `/` of it). */
static bool key_bound(const struct node *e, uint64_t *hi, bool *kern)
{
	uint64_t a, c;
	*kern = false;
	switch (e->kind) {
	case N_INT:
		*hi = e->u.num.value;
		return !e->type.is_signed || e->u.num.value <= INT64_MAX;
	case N_IDENT:
		if (e->u.ident.kind != ID_BUILTIN || !e->u.ident.builtin)
			return false;
		if (!strcmp(e->u.ident.builtin->name, "kernel")) {
			*hi = GPUX_KERNEL_IDS - 1;
			*kern = true;
		} else if (!strcmp(e->u.ident.builtin->name, "lane") ||
			 !strcmp(e->u.ident.builtin->name, "warp"))
			*hi = 31;
		else
			return false;
		return true;
	case N_FIELD: {
		/* threadIdx.x, .y, .z: a block has at most 1024 threads */
		const struct node *b = e->u.field.base;
		if (b->kind != N_IDENT || b->u.ident.kind != ID_BUILTIN || !b->u.ident.builtin ||
		    strcmp(b->u.ident.builtin->name, "threadIdx"))
			return false;
		*hi = 1023;
		return true;
	}
	case N_BINOP: {
		const struct node *l = e->u.binop.lhs, *r = e->u.binop.rhs;
		if (r->kind != N_INT || (r->type.is_signed && r->u.num.value > INT64_MAX))
			return false;
		c = r->u.num.value;
		bool bounded = key_bound(l, &a, kern);
		bool nonneg = bounded || (l->type.kind == TY_INT && !l->type.is_signed);
		if (!bounded)
			a = UINT64_MAX;
		switch (e->u.binop.op) {
		case OP_MOD:
			if (!nonneg || c == 0)
				return false;
			*hi = a < c - 1 ? a : c - 1;
			return true;
		case OP_BAND: /* a nonnegative mask clears the sign */
			*hi = a < c ? a : c;
			return true;
		case OP_DIV:
			if (!nonneg || c == 0)
				return false;
			*hi = a / c;
			return true;
		default:
			*kern = false;
			return false;
		}
	}
	default:
		return false;
	}
}

/* Whether e differs between the lanes of a warp whatever the data: the
 * lane, threadIdx.x and the global thread id (consecutive in a warp for
 * blocks at least a warp wide), and `%` or `&` of them by 32 or more.
 * Such keys never share a reduction, so the warp need not vote on them. */
static bool lane_distinct(const struct node *e)
{
	switch (e->kind) {
	case N_IDENT:
		return e->u.ident.kind == ID_BUILTIN && e->u.ident.builtin &&
		       (!strcmp(e->u.ident.builtin->name, "lane") ||
			!strcmp(e->u.ident.builtin->name, "gtid"));
	case N_FIELD: {
		const struct node *b = e->u.field.base;
		return b->kind == N_IDENT && b->u.ident.kind == ID_BUILTIN && b->u.ident.builtin &&
		       !strcmp(b->u.ident.builtin->name, "threadIdx") &&
		       !strcmp(e->u.field.name, "x");
	}
	case N_BINOP: {
		const struct node *r = e->u.binop.rhs;
		if (r->kind != N_INT || (r->type.is_signed && r->u.num.value > INT64_MAX))
			return false;
		uint64_t c = r->u.num.value;
		if (e->u.binop.op == OP_MOD)
			return c >= 32 && lane_distinct(e->u.binop.lhs);
		if (e->u.binop.op == OP_BAND) /* a mask keeping the low five bits */
			return (c & 31) == 31 && lane_distinct(e->u.binop.lhs);
		return false;
	}
	default:
		return false;
	}
}

struct bound {
	const struct map_info *mi;
	uint64_t hi;
	bool ok;
	bool kern;  /* every key is at most the kernel id */
	bool lanes; /* every key differs between lanes (lane_distinct) */
	bool warp;  /* every key is the same in every lane (sema's unif) */
};

static void scan_keys(struct node *n, void *arg)
{
	struct bound *b = arg;
	uint64_t hi;
	bool kern = false;
	if (n->kind == N_MAP && n->u.map.info == b->mi) {
		if (n->u.map.nkeys == 1 && key_bound(n->u.map.keys, &hi, &kern))
			b->hi = hi > b->hi ? hi : b->hi;
		else if (n->u.map.nkeys != 0)
			b->ok = false;
		b->kern = b->kern && kern;
		b->lanes = b->lanes && n->u.map.nkeys == 1 && lane_distinct(n->u.map.keys);
		/* sema_uniform.c's answer: one reduction for the warp by its
		 * lowest lane, with no vote to find that out */
		b->warp = b->warp && (n->u.map.nkeys == 0 || n->u.map.keys->unif == UNIF_UNIFORM);
	}
	ast_visit_children(n, scan_keys, arg);
}

struct host_use {
	const struct map_info *mi;
	bool data;
};

/* print(@m), clear(@m) and zero(@m) in host probes go through the
 * controller's view of the snapshots, never the device's tables; any
 * other use on the host reads or writes the table itself. */
static void scan_host(struct node *n, void *arg)
{
	struct host_use *u = arg;
	if (n->kind == N_CALL && n->u.call.args && n->u.call.args->kind == N_MAP &&
	    (!strcmp(n->u.call.name, "print") || !strcmp(n->u.call.name, "clear") ||
	     !strcmp(n->u.call.name, "zero"))) {
		for (struct node *a = n->u.call.args->next; a; a = a->next)
			scan_host(a, arg);
		return;
	}
	if (n->kind == N_MAP && n->u.map.info == u->mi)
		u->data = true;
	ast_visit_children(n, scan_host, arg);
}

/* An aggregation the device only adds into, keyed by nothing or by one
 * bounded integer, becomes an array of the bound's size (a power of two,
 * at most the hash table's 4096 entries): its updates are single
 * reductions (helpers.cu, "Array maps"). min() and max() stay hashed:
 * their first value seeds the slot, which an array has no moment for. */
static void choose_arrays(const struct program *prog, struct dev_module *mod)
{
	for (int k = 0; k < mod->nmaps; k++) {
		struct dev_map_meta *meta = &mod->map_meta[k];
		struct dev_map *dm = &mod->maps[k];
		dm->array = false;
		dm->kernel_rows = false;
		dm->lane_keys = false;
		dm->warp_keys = false;
		if (meta->read_on_device || meta->nkeys > 1 ||
		    meta->agg == AGG_NONE || meta->agg == AGG_MIN || meta->agg == AGG_MAX)
			continue;
		struct bound b = { meta->info, 0, true, true, true, true };
		struct host_use u = { meta->info, false };
		for (struct node *p = prog->probes; p && b.ok && !u.data; p = p->next) {
			if (p->u.probe.place & PLACE_DEVICE)
				ast_visit_children(p, scan_keys, &b);
			else
				ast_visit_children(p, scan_host, &u);
		}
		if (!b.ok || u.data || b.hi >= dm->max_entries)
			continue;
		uint32_t n = 1;
		while (n <= b.hi)
			n <<= 1;
		dm->array = true;
		dm->kernel_rows = b.kern;
		dm->lane_keys = b.lanes;
		dm->warp_keys = b.warp;
		dm->max_entries = n;
	}
}

/* Whether the predicate is all store/atomic terms (access_only settles
 * every one of them per instruction). */
static bool settled(const struct node *e)
{
	if (!e)
		return true;
	if (e->kind == N_BINOP && e->u.binop.op == OP_LAND)
		return settled(e->u.binop.lhs) && settled(e->u.binop.rhs);
	return access_only(e) != 0;
}

bool dev_only_counts(const struct node *p)
{
	for (const struct node *at = p->u.probe.attach; at; at = at->next)
		for (int e = 0; e < at->u.attach.nevents; e++)
			if (!at->u.attach.events[e]->name ||
			    strcmp(at->u.attach.events[e]->name, "access"))
				return false;
	const struct node *b = p->u.probe.body;
	const struct node *st = b && b->kind == N_BLOCK ? b->u.block.stmts : NULL;
	if (!st || st->next || st->kind != N_ASSIGN || st->u.assign.op != OP_ASSIGN ||
	    !settled(p->u.probe.pred))
		return false;
	const struct node *m = st->u.assign.target, *v = st->u.assign.value;
	if (m->kind != N_MAP || v->kind != N_CALL || strcmp(v->u.call.name, "count") ||
	    v->u.call.nargs)
		return false;
	const struct node *k = m->u.map.keys;
	/* no key, or the kernel: the same for every site of a function */
	return m->u.map.nkeys == 0 ||
	       (m->u.map.nkeys == 1 && k->kind == N_IDENT && k->u.ident.kind == ID_BUILTIN &&
		k->u.ident.builtin && !strcmp(k->u.ident.builtin->name, "kernel"));
}

/* An expression a thread evaluates to the same value at any point of its
 * life: constants and lifelong builtins, combined without reading
 * memory, maps or variables. */
static bool lifelong(const struct node *e)
{
	switch (e->kind) {
	case N_INT:
	case N_STR:
	case N_POSITIONAL:
		return true;
	case N_IDENT:
		return e->u.ident.kind == ID_BUILTIN && e->u.ident.builtin &&
		       e->u.ident.builtin->lifelong;
	case N_FIELD:
		return !e->u.field.arrow && lifelong(e->u.field.base);
	case N_BINOP:
		return e->u.binop.op != OP_INDEX && lifelong(e->u.binop.lhs) &&
		       lifelong(e->u.binop.rhs);
	case N_UNOP:
		return e->u.unop.op != OP_DEREF && lifelong(e->u.unop.operand);
	case N_TERNARY:
		return lifelong(e->u.ternary.cond) && lifelong(e->u.ternary.then) &&
		       lifelong(e->u.ternary.els);
	case N_CAST:
		return !e->u.cast.stars && lifelong(e->u.cast.operand);
	case N_TUPLE:
		for (const struct node *x = e->u.tuple.elems; x; x = x->next)
			if (!lifelong(x))
				return false;
		return true;
	default:
		return false;
	}
}

bool dev_runs_anytime(const struct node *p)
{
	static const char *const aggs[] = { "count", "sum", "min",  "max",
					    "avg",   "stats", "hist", "lhist" };
	const struct node *b = p->u.probe.body;
	const struct node *st = b && b->kind == N_BLOCK ? b->u.block.stmts : NULL;
	if (!st || (p->u.probe.pred && !lifelong(p->u.probe.pred)))
		return false;
	for (; st; st = st->next) {
		if (st->kind != N_ASSIGN || st->u.assign.op != OP_ASSIGN)
			return false;
		const struct node *m = st->u.assign.target, *v = st->u.assign.value;
		if (m->kind != N_MAP || v->kind != N_CALL)
			return false;
		bool agg = false;
		for (size_t i = 0; i < sizeof(aggs) / sizeof(aggs[0]); i++)
			agg |= !strcmp(v->u.call.name, aggs[i]);
		if (!agg)
			return false;
		for (const struct node *k = m->u.map.keys; k; k = k->next)
			if (!lifelong(k))
				return false;
		for (const struct node *a = v->u.call.args; a; a = a->next)
			if (!lifelong(a))
				return false;
	}
	return true;
}

void dev_map_facts(struct program *prog, struct dev_module *mod)
{
	for (int i = 0; i < mod->nprobes; i++) {
		const struct node *p = mod->probes[i].node;
		mod->probes[i].access_only = access_only(p->u.probe.pred);
		mod->probes[i].anytime = dev_runs_anytime(p);
	}
	read_on_device(mod);
	mod->reads_clock = false;
	for (struct node *p = prog->probes; p && !mod->reads_clock; p = p->next)
		if (p->u.probe.place & PLACE_DEVICE)
			ast_visit_children(p, find_clock, &mod->reads_clock);
	for (int k = 0; k < mod->nmaps; k++) {
		struct dev_map_meta *meta = &mod->map_meta[k];
		meta->additive = meta->agg == AGG_NONE && only_added(prog, meta->info);
	}
	for (int k = 0; k < mod->nmaps; k++)
		mod->maps[k].device_reads_only = !mod->map_meta[k].written_on_device;
	choose_arrays(prog, mod);
}
