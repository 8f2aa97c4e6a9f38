/* Pass 2: types. This file holds the walk over statements and the
 * state it keeps (variables, maps); sema_exprs.c types expressions. */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "sema_types.h"
#include "suggest.h"

struct diag *terr(struct tctx *c, struct span sp, const char *fmt, ...)
{
	if (!c->final)
		return NULL;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return c->last = diag_error(c->diags, sp, "%s", buf);
}

const char *tname(struct type t, char *buf)
{
	return type_str(t, buf, 64);
}

const char *probe_name(const struct tctx *c, char *buf, size_t len)
{
	const struct attach *at = &c->probe->u.probe.attach->u.attach;
	if (at->nevents == 1 && at->events[0]->name)
		return event_str(at->events[0], buf, len);
	snprintf(buf, len, "%s", at->prov ? at->prov->name : at->text);
	return buf;
}

/* ---- variables ---- */

struct var *var_find(struct tctx *c, const char *name)
{
	for (struct var *v = c->vars; v; v = v->next)
		if (!strcmp(v->name, name))
			return v;
	return NULL;
}

void var_assign(struct tctx *c, struct node *target, struct type t,
		       struct span value_span)
{
	char b1[64], b2[64];
	struct var *v = var_find(c, target->u.var.name);
	if (!v) {
		v = arena_zalloc(&c->prog->arena, sizeof(*v));
		v->name = target->u.var.name;
		v->type = t;
		v->next = c->vars;
		c->vars = v;
	} else if (v->type.kind == TY_NONE) {
		v->type = t;
	} else if (t.kind != TY_NONE && !type_compatible(v->type, t)) {
		terr(c, value_span,
		     "Type mismatch for $%s: trying to assign value of type '%s' when variable already contains a value of type '%s'",
		     v->name, tname(t, b1), tname(v->type, b2));
	} else {
		type_widen_strs(v->type, t);
	}
	target->type = v->type;
}

/* ---- maps ---- */

/* Maps by name in a table: a walk of the list per map use cost uses x
 * maps, seconds for a program of 25,000 maps. */
static struct map_info **map_slot(struct map_info **tab, unsigned cap, const char *name)
{
	unsigned x = 2166136261u; /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		x = (x ^ *p) * 16777619u;
	unsigned i = x & (cap - 1);
	while (tab[i] && strcmp(tab[i]->name, name))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static void map_index(struct tctx *c, struct map_info *mi)
{
	if (2 * (c->nmaps + 1) > c->map_cap) {
		unsigned cap = c->map_cap ? 2 * c->map_cap : 64;
		struct map_info **tab = arena_zalloc(&c->prog->arena, sizeof(*tab) * cap);
		for (unsigned i = 0; i < c->map_cap; i++)
			if (c->map_tab[i])
				*map_slot(tab, cap, c->map_tab[i]->name) = c->map_tab[i];
		c->map_tab = tab;
		c->map_cap = cap;
	}
	*map_slot(c->map_tab, c->map_cap, mi->name) = mi;
	c->nmaps++;
}

struct map_info *map_lookup(struct tctx *c, struct node *m)
{
	if (!c->map_tail) {
		c->map_tail = &c->prog->maps;
		for (; *c->map_tail; c->map_tail = &(*c->map_tail)->next)
			if (!c->nmaps || !*map_slot(c->map_tab, c->map_cap, (*c->map_tail)->name))
				map_index(c, *c->map_tail);
	}
	struct map_info *mi = c->nmaps ? *map_slot(c->map_tab, c->map_cap, m->u.map.name)
				       : NULL;
	if (!mi) {
		mi = arena_zalloc(&c->prog->arena, sizeof(*mi));
		mi->name = m->u.map.name;
		mi->first_use = m;
		mi->nkeys = -1;
		*c->map_tail = mi;
		c->map_tail = &mi->next;
		map_index(c, mi);
	}
	mi->places |= c->probe->u.probe.place;
	m->u.map.info = mi;
	return mi;
}

static void keys_str(const struct type *ts, const struct node *keys, int n,
		     char *buf, size_t len)
{
	char tb[64];
	size_t off = (size_t)snprintf(buf, len, "[");
	for (int i = 0; i < n && off < len; i++) {
		struct type t = ts ? ts[i] : keys->type;
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					i ? ", " : "", tname(t, tb));
		if (keys)
			keys = keys->next;
	}
	if (off < len)
		snprintf(buf + off, len - off, "]");
}

/* Check the keys of a map access against the map's key types. */
void check_map_keys(struct tctx *c, struct node *m)
{
	struct map_info *mi = map_lookup(c, m);
	bool known = true;
	for (struct node *k = m->u.map.keys; k; k = k->next) {
		check_expr(c, k);
		char b[64];
		if (k->type.kind == TY_NONE)
			known = false;
		else if (k->type.kind == TY_TUPLE) {
			struct diag *dg = terr(c, k->span, "a tuple cannot be a map key");
			diag_hint(dg, "give the map several keys instead: @m[a, b] = ...");
			known = false;
		} else if (k->type.kind == TY_AGG || k->type.kind == TY_VOID ||
			 k->type.kind == TY_DIM3) {
			terr(c, k->span, "a value of type '%s' cannot be a map key",
			     tname(k->type, b));
			known = false;
		}
	}
	if (!known)
		return;
	if (mi->nkeys < 0) {
		mi->nkeys = m->u.map.nkeys;
		mi->keys = arena_alloc(&c->prog->arena,
				       sizeof(struct type) * (size_t)(mi->nkeys + 1));
		int i = 0;
		for (struct node *k = m->u.map.keys; k; k = k->next)
			mi->keys[i++] = k->type.kind == TY_INT ? TYPE_INT(64, k->type.is_signed) : k->type;
		return;
	}
	bool ok = mi->nkeys == m->u.map.nkeys;
	int i = 0;
	for (struct node *k = m->u.map.keys; ok && k; k = k->next, i++)
		ok = type_compatible(mi->keys[i], k->type);
	if (!ok) {
		char have[256], want[256];
		keys_str(NULL, m->u.map.keys, m->u.map.nkeys, have, sizeof(have));
		keys_str(mi->keys, NULL, mi->nkeys, want, sizeof(want));
		if (!mi->nkeys)
			snprintf(want, sizeof(want), "no key");
		if (!m->u.map.nkeys)
			snprintf(have, sizeof(have), "no key");
		terr(c, m->span,
		     "Argument mismatch for @%s: trying to access with arguments: %s when map expects arguments: %s",
		     mi->name, have, want);
	}
}

/* Store a value of type t into map m (the map node already checked). */
void map_store(struct tctx *c, struct node *m, struct type t)
{
	struct map_info *mi = m->u.map.info;
	char b1[64], b2[64];
	if (!mi || t.kind == TY_NONE)
		return;
	mi->written = true;
	if (mi->value.kind == TY_NONE)
		mi->value = t.kind == TY_INT ? TYPE_INT(64, t.is_signed) : t;
	else if (!type_compatible(mi->value, t))
		terr(c, m->span,
		     "Type mismatch for @%s: trying to assign value of type '%s' when map already contains a value of type '%s'",
		     mi->name, tname(t, b1), tname(mi->value, b2));
	else
		type_widen_strs(mi->value, t);
	m->type = mi->value;
}

/* A map read: its type is the stored value's; aggregations that hold a
 * single number read as one. */
void map_read(struct tctx *c, struct node *m)
{
	check_map_keys(c, m);
	struct map_info *mi = m->u.map.info;
	if (!mi)
		return;
	if (mi->value.kind == TY_NONE) {
		if (c->final && !mi->written) {
			struct diag *dg = terr(c, m->span, "Undefined map: @%s", mi->name);
			diag_hint(dg, "no probe assigns @%s", mi->name);
		}
		return;
	}
	struct type v = mi->value;
	if (v.kind == TY_AGG) {
		switch (v.agg) {
		case AGG_COUNT:
			v = TYPE_U64;
			break;
		case AGG_SUM: case AGG_MIN: case AGG_MAX: case AGG_AVG:
			v = TYPE_I64;
			break;
		default:
			terr(c, m->span, "@%s holds a %s() aggregation, which cannot be read in an expression",
			     mi->name, agg_name(v.agg));
			v = TYPE_NONE;
		}
	}
	m->type = v;
}

/* ---- statements ---- */

static void check_block(struct tctx *c, struct node *b);

static void check_assign(struct tctx *c, struct node *s)
{
	struct node *t = s->u.assign.target, *v = s->u.assign.value;
	int op = s->u.assign.op;
	char b[64];
	if (t->kind == N_MAP)
		check_map_keys(c, t);
	struct type vt;
	if (v->kind == N_CALL && t->kind == N_MAP && op == OP_ASSIGN) {
		vt = check_call(c, v, true);
		v->type = vt;
	} else {
		check_expr(c, v);
		vt = v->type;
		if (vt.kind == TY_DIM3 || vt.kind == TY_VOID) {
			reject_non_scalar(c, v);
			return;
		}
	}
	if (op != OP_ASSIGN) {
		/* x op= v is x = x op v: both sides integers. */
		if (t->kind == N_VAR && !var_find(c, t->u.var.name)) {
			terr(c, t->span, "Undefined or undeclared variable: $%s", t->u.var.name);
			return;
		}
		if (vt.kind != TY_NONE && vt.kind != TY_INT) {
			terr(c, s->span, "Type mismatch for '%s=': the value is '%s', not an integer",
			     op_str(op), tname(vt, b));
			return;
		}
		/* a pointer moves by whole elements: += and -= only */
		bool step = op == OP_ADD || op == OP_SUB;
		if (t->kind == N_MAP) {
			struct map_info *mi = t->u.map.info;
			if (mi && mi->value.kind == TY_AGG)
				terr(c, s->span, "@%s holds a %s() aggregation; '%s=' needs an integer map",
				     mi->name, agg_name(mi->value.agg), op_str(op));
			else if (mi && mi->value.kind == TY_POINTER && !step)
				terr(c, s->span, "@%s holds a pointer; '%s=' needs an integer map",
				     mi->name, op_str(op));
			else
				map_store(c, t, mi && mi->value.kind == TY_POINTER ? mi->value
										  : TYPE_I64);
		} else {
			struct var *var = var_find(c, t->u.var.name);
			if (var->type.kind != TY_NONE && var->type.kind != TY_INT &&
			    !(var->type.kind == TY_POINTER && step))
				terr(c, s->span, "'%s=' needs an integer variable; $%s is '%s'",
				     op_str(op), var->name, tname(var->type, b));
			t->type = var->type;
		}
		return;
	}
	if (t->kind == N_MAP)
		map_store(c, t, vt);
	else
		var_assign(c, t, vt, v->span);
}

static void check_cond(struct tctx *c, struct node *cond, const char *what)
{
	char b[64];
	check_expr(c, cond);
	if (cond->type.kind == TY_NONE || reject_non_scalar(c, cond))
		return;
	if (cond->type.kind == TY_STR)
		terr(c, cond->span, "%s must be an integer, not a string", what);
	(void)b;
}

/* Loop bounds must be known at compile time: both verifiers need a
 * bound, and on the device every lane must agree. */
static void check_const_bound(struct tctx *c, struct node *e, const char *what,
			      int64_t *out)
{
	check_expr(c, e);
	if (!const_int(e, out)) {
		if (e->type.kind != TY_NONE)
			terr(c, e->span, "%s must be a constant integer expression", what);
		*out = -1;
	}
}

static void check_return(struct tctx *c, struct node *s)
{
	struct node *v = s->u.ret.value;
	const struct probe *p = &c->probe->u.probe;
	char pb[64];
	if (!v)
		return;
	if (!p->policy) {
		struct diag *dg = terr(c, s->span,
			"return with a value is only allowed in policy hooks (gpu_mem:, gpu_sched:)");
		diag_hint(dg, "use 'return;' to leave the probe early");
		/* A decision here is the same mistake: say it once. */
		enum decision d;
		if (v->kind != N_IDENT || !catalog_decision(v->u.ident.name, &d))
			check_expr(c, v);
		return;
	}
	check_expr(c, v);
	if (v->type.kind != TY_NONE && v->type.kind != TY_INT) {
		terr(c, v->span, "a policy hook returns a decision (DEFAULT, BYPASS, ENTER_LOOP), not a %s",
		     tname(v->type, pb));
		return;
	}
	if (v->kind != N_IDENT || v->u.ident.kind != ID_DECISION)
		return;
	enum decision d = v->u.ident.decision;
	for (const struct node *a = p->attach; a; a = a->next)
		for (int i = 0; i < a->u.attach.nevents; i++) {
			const struct event *e = a->u.attach.events[i];
			if (e->decisions & DECISION_BIT(d))
				continue;
			char allowed[128] = "";
			size_t off = 0;
			for (int k = 0; k < DECISION_COUNT; k++)
				if (e->decisions & DECISION_BIT(k))
					off += (size_t)snprintf(allowed + off, sizeof(allowed) - off,
						"%s%s", off ? ", " : "", decision_name((enum decision)k));
			struct diag *dg = terr(c, v->span, "%s does not honour %s",
					       event_str(e, pb, sizeof(pb)), decision_name(d));
			diag_hint(dg, "%s accepts: %s", pb, off ? allowed : "nothing");
			return;
		}
}

/* A block of one expression statement, e. */
static struct node *stmt_block(struct tctx *c, struct node *e)
{
	struct node *s = ast_new(&c->prog->arena, N_EXPR_STMT, e->span);
	s->u.expr_stmt.expr = e;
	struct node *b = ast_new(&c->prog->arena, N_BLOCK, e->span);
	b->u.block.stmts = s;
	return b;
}

static void check_stmt(struct tctx *c, struct node *s)
{
	int64_t lo, hi;
	switch (s->kind) {
	case N_EXPR_STMT: {
		struct node *e = s->u.expr_stmt.expr;
		if (e->kind == N_TERNARY) {
			/* `c ? printf("a") : printf("b");` runs one arm, as
			 * bpftrace does: an if, whatever the arms' types */
			struct node *cond = e->u.ternary.cond, *then = e->u.ternary.then,
				    *els = e->u.ternary.els;
			s->kind = N_IF;
			s->u.if_.cond = cond;
			s->u.if_.then = stmt_block(c, then);
			s->u.if_.els = stmt_block(c, els);
			check_stmt(c, s);
			break;
		}
		if (e->kind == N_CALL) {
			e->type = check_call(c, e, false);
		} else if (e->kind == N_INCDEC) {
			check_expr(c, e);
		} else {
			/* evaluated and dropped, as bpftrace does (a read through
			 * a pointer still happens) */
			check_expr(c, e);
		}
		break;
	}
	case N_ASSIGN:
		check_assign(c, s);
		break;
	case N_IF:
		check_cond(c, s->u.if_.cond, "an if condition");
		check_block(c, s->u.if_.then);
		if (s->u.if_.els) {
			if (s->u.if_.els->kind == N_IF)
				check_stmt(c, s->u.if_.els);
			else
				check_block(c, s->u.if_.els);
		}
		break;
	case N_UNROLL:
		check_const_bound(c, s->u.unroll.count, "the unroll count", &lo);
		if (lo != -1 && lo > 100)
			terr(c, s->span, "unroll maximum value is 100 (not %lld)", (long long)lo);
		else if (lo != -1 && lo < 1)
			terr(c, s->span, "unroll minimum value is 1 (not %lld)", (long long)lo);
		check_block(c, s->u.unroll.body);
		break;
	case N_FOR: {
		check_const_bound(c, s->u.for_.lo, "a for range start", &lo);
		check_const_bound(c, s->u.for_.hi, "a for range end", &hi);
		struct node *v = s->u.for_.var;
		var_assign(c, v, TYPE_I64, v->span);
		if (lo != -1 && hi != -1 && (hi < lo || hi - lo > 1000000))
			terr(c, s->span, "a for range must run 0 to 1000000 times; %lld..%lld does not",
			     (long long)lo, (long long)hi);
		check_block(c, s->u.for_.body);
		break;
	}
	case N_WHILE: {
		/* the kernel's verifier and gpux's VM bound a loop's run; a
		 * device probe's lanes would have to agree on every test */
		if (c->probe->u.probe.place == PLACE_DEVICE) {
			struct diag *dg = terr(c, s->span,
				"while loops are not supported in device probes: they run only "
				"bounded loops");
			diag_hint(dg, "use for ($i : 0..N) { ... } or unroll(N) { ... }");
			break;
		}
		check_cond(c, s->u.while_.cond, "a while condition");
		check_block(c, s->u.while_.body);
		break;
	}
	case N_RETURN:
		check_return(c, s);
		break;
	case N_BLOCK:
		check_block(c, s);
		break;
	default:
		break;
	}
}

static void check_block(struct tctx *c, struct node *b)
{
	for (struct node *s = b->u.block.stmts; s; s = s->next)
		check_stmt(c, s);
}

static void check_probe(struct tctx *c, struct node *p)
{
	c->probe = p;
	c->vars = NULL;
	if (p->u.probe.pred)
		check_cond(c, p->u.probe.pred, "a predicate");
	check_block(c, p->u.probe.body);
}

int sema_types(struct program *prog, struct diags *diags)
{
	int before = diags->errors;
	struct tctx c = { .prog = prog, .diags = diags };
	/* Quiet walks until no map gains a type (a map copied from one
	 * assigned further down, `@prev = @cur; @cur = x;`, needs one walk
	 * per link), then the walk that reports. */
	int typed = -1;
	for (int walk = 0; walk < 64; walk++) {
		int now = 0;
		for (struct map_info *mi = prog->maps; mi; mi = mi->next)
			now += mi->value.kind != TY_NONE;
		c.final = now == typed || walk == 63;
		typed = now;
		for (struct node *p = prog->probes; p; p = p->next)
			if (p->u.probe.place)
				check_probe(&c, p);
		if (c.final)
			break;
	}
	return diags->errors == before ? 0 : -1;
}
