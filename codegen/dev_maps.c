/* Maps and printf on the device: the module's shared map table, keys
 * built on the stack (8 bytes per component), and the helper calls
 * (device_abi.h): aggregations group lanes by key inside the helper, so
 * the key may vary; lookups return a value pointer or 0. */
#include <string.h>

#include "dev_priv.h"
#include "sema.h"

static void *grow_to(struct lw *L, void *old, int n, int cap, size_t elem)
{
	void *p = arena_zalloc(&L->prog->arena, elem * (size_t)cap);
	if (old)
		memcpy(p, old, elem * (size_t)n);
	return p;
}

/* lhist() bounds of a map: from its lhist() assignment in any probe. */
static const struct node *find_lhist(const struct node *s, const struct map_info *mi)
{
	for (; s; s = s->next) {
		const struct node *hit = NULL;
		switch (s->kind) {
		case N_PROBE:
			hit = find_lhist(s->u.probe.body, mi);
			break;
		case N_BLOCK:
			hit = find_lhist(s->u.block.stmts, mi);
			break;
		case N_ASSIGN: {
			const struct node *v = s->u.assign.value;
			if (s->u.assign.target->kind == N_MAP &&
			    s->u.assign.target->u.map.info == mi && v->kind == N_CALL &&
			    !strcmp(v->u.call.name, "lhist") && v->u.call.nargs == 4)
				hit = v;
			break;
		}
		case N_IF:
			hit = find_lhist(s->u.if_.then, mi);
			if (!hit && s->u.if_.els) {
				const struct node *e = s->u.if_.els;
				/* the else of an else-if chain is a lone N_IF */
				struct node one = *e;
				one.next = NULL;
				hit = find_lhist(&one, mi);
			}
			break;
		case N_UNROLL:
			hit = find_lhist(s->u.unroll.body, mi);
			break;
		case N_FOR:
			hit = find_lhist(s->u.for_.body, mi);
			break;
		default:
			break;
		}
		if (hit)
			return hit;
	}
	return NULL;
}

static struct node *arg_n(const struct node *call, int i)
{
	struct node *a = call->u.call.args;
	while (a && i--)
		a = a->next;
	return a;
}

static uint32_t agg_value_size(struct lw *L, struct dev_map *dm,
			       const struct map_info *mi)
{
	switch (mi->value.agg) {
	case AGG_AVG: case AGG_STATS:
		return 16; /* struct gpux_avg */
	case AGG_HIST:
		return 66 * 8; /* GPUX_HIST_BUCKETS */
	case AGG_LHIST: {
		const struct node *c = find_lhist(L->prog->probes, mi);
		int64_t v[3] = { 0, 1, 1 };
		for (int k = 0; c && k < 3; k++)
			const_int(arg_n(c, k + 1), &v[k]);
		dm->lhist_min = v[0];
		dm->lhist_max = v[1];
		dm->lhist_step = v[2] > 0 ? v[2] : 1;
		/* below min, ceil((max - min) / step) in range, at or above max */
		int64_t n = (v[1] - v[0] + dm->lhist_step - 1) / dm->lhist_step;
		return (uint32_t)(n + 2) * 8;
	}
	default:
		return 8;
	}
}

int dl_map_index(struct lw *L, struct node *m)
{
	struct dev_module *mod = L->mod;
	const struct map_info *mi = m->u.map.info;
	for (int k = 0; k < mod->nmaps; k++)
		if (mod->map_meta[k].info == mi)
			return k;
	if (mod->nmaps == L->capmaps) {
		L->capmaps = L->capmaps ? L->capmaps * 2 : 8;
		mod->maps = grow_to(L, mod->maps, mod->nmaps, L->capmaps, sizeof(*mod->maps));
		mod->map_meta = grow_to(L, mod->map_meta, mod->nmaps, L->capmaps,
					sizeof(*mod->map_meta));
	}
	struct dev_map *dm = &mod->maps[mod->nmaps];
	struct dev_map_meta *meta = &mod->map_meta[mod->nmaps];
	int nkeys = mi->nkeys > 0 ? mi->nkeys : 0;
	meta->info = mi;
	meta->nkeys = nkeys;
	meta->keys = arena_zalloc(&L->prog->arena, sizeof(*meta->keys) * (size_t)(nkeys + 1));
	for (int k = 0; k < nkeys; k++)
		meta->keys[k] = (struct dev_val){
			mi->keys[k].kind == TY_STR ? DEV_VAL_KERNEL : DEV_VAL_INT,
			mi->keys[k].is_signed };
	meta->agg = mi->value.kind == TY_AGG ? mi->value.agg : AGG_NONE;
	meta->cross_layer = (mi->places & ~(unsigned)PLACE_DEVICE) != 0;
	dm->name = mi->name;
	dm->key_size = 8 * (uint32_t)(nkeys ? nkeys : 1);
	dm->value_size = mi->value.kind == TY_AGG ? agg_value_size(L, dm, mi) : 8;
	dm->max_entries = nkeys ? 4096 : 1;
	dm->agg = meta->agg;
	return mod->nmaps++;
}

int dl_build_key(struct lw *L, struct node *m, int lvl)
{
	int nkeys = m->u.map.nkeys;
	int off = dl_tmp_alloc(L, 8 * (nkeys ? nkeys : 1));
	if (off < 0)
		return -1;
	if (!nkeys)
		dl_emit_st_k(L, 8, BPF_REG_FP, -off, 0);
	int i = 0;
	for (struct node *k = m->u.map.keys; k; k = k->next, i++) {
		int64_t v;
		if (k->type.kind == TY_STR && !dl_is_kernel_ident(k))
			return dl_unsupported(L, k, "a string map key other than 'kernel'");
		if (k->type.kind != TY_STR && k->type.kind != TY_INT)
			return dl_unsupported(L, k, "this kind of map key");
		if (k->kind == N_INT && const_int(k, &v) && dl_fits_imm(v)) {
			struct span saved = L->cur;
			L->cur = k->span;
			dl_emit_st_k(L, 8, BPF_REG_FP, -off + 8 * i, (int32_t)v);
			L->cur = saved;
			continue;
		}
		int r = dl_eval(L, k, lvl);
		if (r < 0)
			return -1;
		dl_emit_stx(L, 8, BPF_REG_FP, -off + 8 * i, r);
	}
	return off;
}

static int check_int_map(struct lw *L, struct node *m)
{
	const struct map_info *mi = m->u.map.info;
	if (mi->value.kind == TY_INT || mi->value.kind == TY_NONE)
		return 0;
	if (mi->value.kind == TY_STR)
		return dl_unsupported(L, m, "a map of strings");
	return dl_unsupported(L, m, "reading @%s's %s() value", mi->name,
			   agg_name(mi->value.agg));
}

int dl_map_read(struct lw *L, struct node *m, int lvl)
{
	int R = dl_reg_of(lvl), idx, saved = L->sp, key;
	if (check_int_map(L, m) < 0 || (idx = dl_map_index(L, m)) < 0 ||
	    (key = dl_build_key(L, m, lvl)) < 0)
		return -1;
	dl_emit_map_ref(L, 1, idx);
	dl_emit_stack_ptr(L, 2, key);
	dl_emit_call(L, DH_MAP_LOOKUP);
	/* An absent key reads as 0, as in bpftrace. */
	int miss = dl_new_label(L);
	dl_emit_mov_k(L, R, 0);
	dl_emit_jmp_k(L, BPF_JEQ, 0, 0, miss);
	dl_emit_ldx(L, 8, R, 0, 0);
	dl_place_label(L, miss);
	L->sp = saved;
	return R;
}

static int agg_helper(const char *name)
{
	static const struct { const char *name; int id; } t[] = {
		{ "count", DH_AGG_COUNT }, { "sum", DH_AGG_SUM },
		{ "min", DH_AGG_MIN }, { "max", DH_AGG_MAX },
		{ "avg", DH_AGG_AVG }, { "stats", DH_AGG_STATS },
		{ "hist", DH_AGG_HIST }, { "lhist", DH_AGG_LHIST },
	};
	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++)
		if (!strcmp(t[k].name, name))
			return t[k].id;
	return -1;
}

static int lower_agg(struct lw *L, struct node *m, struct node *call, int helper)
{
	int idx = dl_map_index(L, m), key, r = -1;
	struct node *a = call->u.call.args;
	if (helper == DH_AGG_LHIST) {
		const struct dev_map *dm = &L->mod->maps[idx];
		int64_t v[3] = { 0 };
		for (int k = 0; k < 3; k++)
			const_int(arg_n(call, k + 1), &v[k]);
		if (v[0] != dm->lhist_min || v[1] != dm->lhist_max || v[2] != dm->lhist_step) {
			diag_error(L->diags, call->span,
				   "lhist() of @%s has other bounds than its first lhist()",
				   m->u.map.name);
			return -1;
		}
	}
	if (a && (r = dl_eval(L, a, 0)) < 0)
		return -1;
	struct span saved = L->cur;
	L->cur = m->span;
	key = dl_build_key(L, m, a ? 1 : 0);
	L->cur = call->span;
	if (key < 0)
		return -1;
	dl_emit_map_ref(L, 1, idx);
	dl_emit_stack_ptr(L, 2, key);
	if (a)
		dl_emit_alu_x(L, BPF_MOV, 3, r);
	if (L->counted && helper == DH_AGG_COUNT) {
		/* a count of many sites at once: its value layout is sum's */
		dl_emit_ldx(L, 8, 3, DR_CTX, 0);
		helper = DH_AGG_SUM;
	}
	dl_emit_call(L, helper);
	L->cur = saved;
	return 0;
}

/* x op= v as x = x op v, typed as the front end types a binary op. */
struct node *dl_synth_binop(struct lw *L, struct node *target, int op, struct node *v)
{
	struct node *b = ast_new(&L->prog->arena, N_BINOP, target->span);
	b->u.binop.op = op;
	b->u.binop.lhs = target;
	b->u.binop.rhs = v;
	bool u = (target->type.kind == TY_INT && !target->type.is_signed &&
		  target->type.bits == 64) ||
		 (!v->type.is_signed && v->type.bits == 64);
	b->type = u ? TYPE_U64 : TYPE_I64;
	b->unif = target->unif == UNIF_VARYING || v->unif == UNIF_VARYING
			  ? UNIF_VARYING : UNIF_UNIFORM;
	return b;
}

static int lower_update(struct lw *L, struct node *m, struct node *v)
{
	int idx, r, val, key;
	if (check_int_map(L, m) < 0)
		return -1;
	if (v->type.kind != TY_INT)
		return dl_unsupported(L, v, "storing this kind of value in a map");
	idx = dl_map_index(L, m);
	if ((r = dl_eval(L, v, 0)) < 0 || (val = dl_tmp_alloc(L, 8)) < 0)
		return -1;
	dl_emit_stx(L, 8, BPF_REG_FP, -val, r);
	if ((key = dl_build_key(L, m, 1)) < 0)
		return -1;
	dl_emit_map_ref(L, 1, idx);
	dl_emit_stack_ptr(L, 2, key);
	dl_emit_stack_ptr(L, 3, val);
	dl_emit_call(L, DH_MAP_UPDATE);
	return 0;
}

int dl_lower_map_assign(struct lw *L, struct node *s)
{
	struct node *m = s->u.assign.target, *v = s->u.assign.value;
	int op = s->u.assign.op;
	if (op == OP_ASSIGN && v->kind == N_CALL) {
		int h = agg_helper(v->u.call.name);
		if (h < 0)
			return dl_unsupported(L, v, "%s() as a map value", v->u.call.name);
		return lower_agg(L, m, v, h);
	}
	if (op == OP_ADD || op == OP_SUB)
		return dl_lower_map_incdec(L, m, op == OP_ADD ? 1 : -1, v);
	if (op != OP_ASSIGN)
		v = dl_synth_binop(L, m, op, v);
	return lower_update(L, m, v);
}

int dl_lower_map_incdec(struct lw *L, struct node *m, int sign, struct node *delta)
{
	int r = -1, key, idx;
	int64_t v = 1;
	if (check_int_map(L, m) < 0)
		return -1;
	idx = dl_map_index(L, m);
	/* A constant delta goes straight into r3. */
	if (delta && delta->kind == N_INT && const_int(delta, &v) && dl_fits_imm(v) &&
	    v != INT32_MIN)
		delta = NULL;
	if (delta && (r = dl_eval(L, delta, 0)) < 0)
		return -1;
	if (delta && sign < 0)
		dl_emit(L, (struct bpf_insn){ .code = BPF_ALU64 | BPF_NEG, .dst = r });
	if ((key = dl_build_key(L, m, delta ? 1 : 0)) < 0)
		return -1;
	dl_emit_map_ref(L, 1, idx);
	dl_emit_stack_ptr(L, 2, key);
	if (delta)
		dl_emit_alu_x(L, BPF_MOV, 3, r);
	else
		dl_emit_mov_k(L, 3, sign * v);
	dl_emit_call(L, DH_MAP_ADD);
	return 0;
}

int dl_lower_delete(struct lw *L, struct node *call)
{
	struct node *m = call->u.call.args;
	int key, idx;
	if (!m || m->kind != N_MAP)
		return dl_unsupported(L, call, "this form of delete()");
	idx = dl_map_index(L, m);
	if ((key = dl_build_key(L, m, 0)) < 0)
		return -1;
	dl_emit_map_ref(L, 1, idx);
	dl_emit_stack_ptr(L, 2, key);
	dl_emit_call(L, DH_MAP_DELETE);
	return 0;
}

int dl_lower_printf(struct lw *L, struct node *call)
{
	struct dev_module *mod = L->mod;
	struct node *fmt = call->u.call.args;
	int nargs = call->u.call.nargs - 1, i = 0;
	if (!fmt || fmt->kind != N_STR)
		return dl_unsupported(L, call, "a printf without a literal format");
	struct dev_val *vals = arena_zalloc(&L->prog->arena,
					    sizeof(*vals) * (size_t)(nargs + 1));
	/* The verifier wants a non-empty record: no arguments send one
	 * zero word (arg_size says so; the host prints none). */
	int size = 8 * (nargs ? nargs : 1);
	int area = dl_tmp_alloc(L, size);
	if (area < 0)
		return -1;
	if (!nargs)
		dl_emit_st_k(L, 8, BPF_REG_FP, -area, 0);
	for (struct node *a = fmt->next; a; a = a->next, i++) {
		if (a->type.kind == TY_STR && !dl_is_kernel_ident(a))
			return dl_unsupported(L, a, "a string printf argument other than 'kernel'");
		vals[i] = (struct dev_val){ a->type.kind == TY_STR ? DEV_VAL_KERNEL : DEV_VAL_INT,
					    a->type.is_signed };
		int r = dl_eval(L, a, 0);
		if (r < 0)
			return -1;
		dl_emit_stx(L, 8, BPF_REG_FP, -area + 8 * i, r);
	}
	if (mod->nfmts == L->capfmts) {
		L->capfmts = L->capfmts ? L->capfmts * 2 : 8;
		mod->fmts = grow_to(L, mod->fmts, mod->nfmts, L->capfmts, sizeof(*mod->fmts));
	}
	struct dev_printf *f = &mod->fmts[mod->nfmts];
	*f = (struct dev_printf){ mod->nfmts, L->probe_no, fmt->u.str.s, fmt->u.str.len,
				  nargs, vals, (uint32_t)size, call->span };
	dl_emit_mov_k(L, 1, mod->nfmts++);
	dl_emit_stack_ptr(L, 2, area);
	dl_emit_mov_k(L, 3, size);
	dl_emit_call(L, DH_PRINTF);
	return 0;
}
