/* Pass 2: names, variables, maps and types of every expression. */
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

bool is_int(struct type t)
{
	return t.kind == TY_INT;
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

static struct var *var_find(struct tctx *c, const char *name)
{
	for (struct var *v = c->vars; v; v = v->next)
		if (!strcmp(v->name, name))
			return v;
	return NULL;
}

static void var_assign(struct tctx *c, struct node *target, struct type t,
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
	}
	target->type = v->type;
}

/* ---- maps ---- */

struct map_info *map_lookup(struct tctx *c, struct node *m)
{
	struct map_info **pp = &c->prog->maps;
	for (; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->name, m->u.map.name))
			break;
	if (!*pp) {
		struct map_info *mi = arena_zalloc(&c->prog->arena, sizeof(*mi));
		mi->name = m->u.map.name;
		mi->first_use = m;
		mi->nkeys = -1;
		*pp = mi;
	}
	(*pp)->places |= c->probe->u.probe.place;
	m->u.map.info = *pp;
	return *pp;
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
static void check_map_keys(struct tctx *c, struct node *m)
{
	struct map_info *mi = map_lookup(c, m);
	bool known = true;
	for (struct node *k = m->u.map.keys; k; k = k->next) {
		check_expr(c, k);
		char b[64];
		if (k->type.kind == TY_NONE)
			known = false;
		else if (k->type.kind == TY_AGG || k->type.kind == TY_VOID ||
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
static void map_store(struct tctx *c, struct node *m, struct type t)
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
	m->type = mi->value;
}

/* A map read: its type is the stored value's; aggregations that hold a
 * single number read as one. */
static void map_read(struct tctx *c, struct node *m)
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

/* ---- identifiers ---- */

/* Where else a name exists, to explain why it is not available here. */
static void explain_unknown(struct tctx *c, struct node *n)
{
	const char *name = n->u.ident.name;
	char pb[64], eb[64];
	enum place place = c->probe->u.probe.place;
	const struct builtin *b = catalog_builtin(name);
	if (b) {
		struct diag *dg = terr(c, n->span,
			"builtin '%s' is not available in %s (%s probe)",
			name, probe_name(c, pb, sizeof(pb)), place_name(place));
		const char *where[3];
		int k = 0;
		if (b->places & PLACE_DEVICE) where[k++] = "device (gdev:)";
		if (b->places & PLACE_DRIVER) where[k++] = "driver (gpu_mem:, gpu_sched:)";
		if (b->places & PLACE_HOST) where[k++] = "host";
		diag_hint(dg, "'%s' exists in %s%s%s%s%s probes", name, where[0],
			  k > 1 ? (k > 2 ? ", " : " and ") : "", k > 1 ? where[1] : "",
			  k > 2 ? " and " : "", k > 2 ? where[2] : "");
		return;
	}
	size_t n_ev;
	const struct event *es = catalog_events(&n_ev);
	for (size_t i = 0; i < n_ev; i++)
		if (event_field(&es[i], name)) {
			struct diag *dg = terr(c, n->span,
				"'%s' is not available in %s", name,
				probe_name(c, pb, sizeof(pb)));
			diag_hint(dg, "'%s' is a field of %s", name,
				  event_str(&es[i], eb, sizeof(eb)));
			return;
		}
	enum decision d;
	if (catalog_decision(name, &d)) {
		struct diag *dg = terr(c, n->span,
			"'%s' is a policy decision; it is only meaningful in gpu_mem: and gpu_sched: hooks",
			name);
		(void)dg;
		return;
	}
	/* Suggest among what is available here. */
	const char *cands[96];
	size_t k = 0, nb;
	const struct builtin *bs = catalog_builtins(&nb);
	for (size_t i = 0; i < nb && k < 64; i++)
		if (bs[i].places & place)
			cands[k++] = bs[i].name;
	const struct attach *at = &c->probe->u.probe.attach->u.attach;
	for (int e = 0; e < at->nevents; e++)
		for (const struct field *f = at->events[e]->fields; f && f->name && k < 96; f++)
			cands[k++] = f->name;
	static const char *const decisions[] = { "DEFAULT", "BYPASS", "ENTER_LOOP" };
	bool caps = true;
	for (const char *q = name; *q; q++)
		if (*q >= 'a' && *q <= 'z')
			caps = false;
	if (c->probe->u.probe.policy)
		for (size_t i = 0; i < 3 && k < 96; i++)
			cands[k++] = decisions[i];
	struct diag *dg = terr(c, n->span, "Unknown identifier: '%s'", name);
	const char *best = suggest_closest(name, cands, k);
	if (best)
		diag_hint(dg, "did you mean '%s'?", best);
	else if (caps && c->probe->u.probe.policy)
		diag_hint(dg, "policy decisions are DEFAULT, BYPASS and ENTER_LOOP");
}

static bool is_tracepoint(const struct tctx *c)
{
	const struct attach *at = &c->probe->u.probe.attach->u.attach;
	return at->prov && at->prov->syntax == SYN_TRACEPOINT;
}

static void check_ident(struct tctx *c, struct node *n)
{
	const char *name = n->u.ident.name;
	const struct field *f = probe_field(c->probe, name);
	if (f) {
		n->u.ident.kind = ID_FIELD;
		n->u.ident.field = f;
		n->type = f->type;
		return;
	}
	const struct builtin *b = catalog_builtin(name);
	if (b && (b->places & c->probe->u.probe.place)) {
		n->u.ident.kind = ID_BUILTIN;
		n->u.ident.builtin = b;
		n->type = b->type;
		return;
	}
	enum decision d;
	if (c->probe->u.probe.policy && catalog_decision(name, &d)) {
		n->u.ident.kind = ID_DECISION;
		n->u.ident.decision = d;
		n->type = TYPE_I64;
		return;
	}
	if (!strcmp(name, "args")) {
		if (!is_tracepoint(c))
			terr(c, n->span, "'args' is only available in tracepoint probes");
		else
			terr(c, n->span, "'args' is a record; access a field: args.NAME");
		return;
	}
	explain_unknown(c, n);
}

/* args.NAME in tracepoint probes, .x/.y/.z on dim3 values. */
static void check_field(struct tctx *c, struct node *n)
{
	struct node *base = n->u.field.base;
	const char *name = n->u.field.name;
	char b[64];
	if (base->kind == N_IDENT && !strcmp(base->u.ident.name, "args") &&
	    is_tracepoint(c)) {
		const struct attach *at = &c->probe->u.probe.attach->u.attach;
		if (!at->tp_fields) {
			/* Unreadable format or a glob: checked at attach time. */
			n->type = TYPE_U64;
			return;
		}
		for (int i = 0; i < at->ntp_fields; i++)
			if (!strcmp(at->tp_fields[i].name, name)) {
				n->type = at->tp_fields[i].type;
				return;
			}
		const char *cands[128];
		size_t k = 0;
		for (int i = 0; i < at->ntp_fields && k < 128; i++)
			cands[k++] = at->tp_fields[i].name;
		struct diag *dg = terr(c, n->span,
			"tracepoint %s:%s has no field '%s'", at->event,
			at->filter, name);
		const char *best = suggest_closest(name, cands, k);
		if (best)
			diag_hint(dg, "did you mean 'args.%s'?", best);
		return;
	}
	check_expr(c, base);
	if (base->type.kind == TY_NONE)
		return;
	if (base->type.kind == TY_DIM3) {
		if (!strcmp(name, "x") || !strcmp(name, "y") || !strcmp(name, "z")) {
			n->type = TYPE_U32;
			return;
		}
		terr(c, n->span, "dim3 has no field '%s'; use .x, .y or .z", name);
		return;
	}
	terr(c, n->span, "a value of type '%s' has no fields", tname(base->type, b));
}

/* ---- operators ---- */

static bool is_compare(int op)
{
	return op == OP_EQ || op == OP_NE || op == OP_LT || op == OP_GT ||
	       op == OP_LE || op == OP_GE;
}

/* A dim3 or a record used whole where a number is wanted. */
static bool reject_non_scalar(struct tctx *c, struct node *n)
{
	char b[64];
	if (n->type.kind == TY_DIM3) {
		struct diag *dg = terr(c, n->span,
			"'%.*s' is a dim3, not a number", 40,
			n->kind == N_IDENT ? n->u.ident.name : "value");
		diag_hint(dg, "use one of its fields: .x, .y or .z");
		return true;
	}
	if (n->type.kind == TY_AGG || n->type.kind == TY_VOID) {
		terr(c, n->span, "a value of type '%s' cannot be used in an expression",
		     tname(n->type, b));
		return true;
	}
	return false;
}

static struct type arith_result(struct type a, struct type b)
{
	bool u = (!a.is_signed && a.bits == 64) || (!b.is_signed && b.bits == 64);
	return u ? TYPE_U64 : TYPE_I64;
}

static void check_binop(struct tctx *c, struct node *n)
{
	struct node *l = n->u.binop.lhs, *r = n->u.binop.rhs;
	int op = n->u.binop.op;
	char b1[64], b2[64];
	check_expr(c, l);
	check_expr(c, r);
	if (l->type.kind == TY_NONE || r->type.kind == TY_NONE)
		return;
	if (reject_non_scalar(c, l) || reject_non_scalar(c, r))
		return;
	struct type lt = l->type, rt = r->type;
	if (lt.kind == TY_STR || rt.kind == TY_STR) {
		if (lt.kind == TY_STR && rt.kind == TY_STR &&
		    (op == OP_EQ || op == OP_NE)) {
			n->type = TYPE_I64;
			return;
		}
		if (lt.kind == rt.kind)
			terr(c, n->span, "operator '%s' is not defined for strings; only == and != compare them",
			     op_str(op));
		else
			terr(c, n->span, "Type mismatch for '%s': comparing '%s' with '%s'",
			     op_str(op), tname(lt, b1), tname(rt, b2));
		return;
	}
	if (lt.kind == TY_PTR || rt.kind == TY_PTR) {
		if ((op == OP_EQ || op == OP_NE) && type_compatible(lt, rt)) {
			n->type = TYPE_I64;
			return;
		}
		struct diag *dg = terr(c, n->span,
			"operator '%s' is not defined for '%s' and '%s'",
			op_str(op), tname(lt, b1), tname(rt, b2));
		diag_hint(dg, "driver objects are handles: compare them with == or use them as map keys");
		return;
	}
	if (is_compare(op) || op == OP_LAND || op == OP_LOR) {
		n->type = TYPE_I64;
		return;
	}
	if ((op == OP_DIV || op == OP_MOD) && r->kind == N_INT && !r->u.num.value) {
		terr(c, r->span, "division by zero");
		return;
	}
	n->type = arith_result(lt, rt);
}

static void check_unop(struct tctx *c, struct node *n)
{
	struct node *o = n->u.unop.operand;
	char b[64];
	check_expr(c, o);
	if (o->type.kind == TY_NONE || reject_non_scalar(c, o))
		return;
	if (o->type.kind != TY_INT && !(n->u.unop.op == OP_NOT && o->type.kind == TY_PTR)) {
		terr(c, n->span, "operator '%s' expects an integer, not '%s'",
		     op_str(n->u.unop.op), tname(o->type, b));
		return;
	}
	n->type = n->u.unop.op == OP_NOT ? TYPE_I64
		: n->u.unop.op == OP_NEG ? TYPE_I64 : TYPE_INT(64, o->type.is_signed);
}

static void check_ternary(struct tctx *c, struct node *n)
{
	struct node *cond = n->u.ternary.cond, *a = n->u.ternary.then,
		    *b = n->u.ternary.els;
	char b1[64], b2[64];
	check_expr(c, cond);
	check_expr(c, a);
	check_expr(c, b);
	if (cond->type.kind != TY_NONE && !reject_non_scalar(c, cond) &&
	    cond->type.kind == TY_STR)
		terr(c, cond->span, "condition must be an integer, not a string");
	if (a->type.kind == TY_NONE || b->type.kind == TY_NONE)
		return;
	if (reject_non_scalar(c, a) || reject_non_scalar(c, b))
		return;
	if (!type_compatible(a->type, b->type)) {
		terr(c, n->span, "Type mismatch for '?:': '%s' and '%s'",
		     tname(a->type, b1), tname(b->type, b2));
		return;
	}
	n->type = a->type.kind == TY_INT ? arith_result(a->type, b->type) : a->type;
}

static void check_cast(struct tctx *c, struct node *n)
{
	struct node *o = n->u.cast.operand;
	char b[64];
	check_expr(c, o);
	if (o->type.kind == TY_NONE || reject_non_scalar(c, o))
		return;
	if (o->type.kind != TY_INT && o->type.kind != TY_PTR) {
		terr(c, n->span, "cannot cast a value of type '%s' to %s",
		     tname(o->type, b), n->u.cast.name);
		return;
	}
	n->type = n->u.cast.to;
}

static void check_positional(struct tctx *c, struct node *n)
{
	int i = n->u.positional.index;
	if (i == 0) {
		n->type = TYPE_I64;
		return;
	}
	if (i > c->prog->npositional) {
		struct diag *dg = terr(c, n->span,
			"positional parameter $%d is not set (the program got %d argument%s)",
			i, c->prog->npositional, c->prog->npositional == 1 ? "" : "s");
		diag_hint(dg, "pass it after the script: gpux script.gpx ARG...");
		return;
	}
	const char *s = c->prog->positional[i - 1];
	char *end;
	(void)strtoll(s, &end, 0);
	n->type = *s && !*end ? TYPE_I64 : TYPE_STR;
}

static void check_incdec_target(struct tctx *c, struct node *n, struct node *t)
{
	char b[64];
	if (t->kind == N_VAR) {
		struct var *v = var_find(c, t->u.var.name);
		if (!v) {
			terr(c, t->span, "Undefined or undeclared variable: $%s", t->u.var.name);
			return;
		}
		t->type = v->type;
		if (v->type.kind != TY_NONE && v->type.kind != TY_INT)
			terr(c, n->span, "'%s' needs an integer variable; $%s is '%s'",
			     op_str(n->u.incdec.op), v->name, tname(v->type, b));
		n->type = v->type;
		return;
	}
	if (t->kind == N_MAP) {
		check_map_keys(c, t);
		map_store(c, t, TYPE_I64);
		n->type = TYPE_I64;
		return;
	}
	terr(c, t->span, "'%s' needs a variable or a map", op_str(n->u.incdec.op));
}

void check_expr(struct tctx *c, struct node *n)
{
	switch (n->kind) {
	case N_INT:
		n->type = n->u.num.value > INT64_MAX ? TYPE_U64 : TYPE_I64;
		break;
	case N_STR:
		n->type = TYPE_STR;
		break;
	case N_VAR: {
		struct var *v = var_find(c, n->u.var.name);
		if (!v)
			terr(c, n->span, "Undefined or undeclared variable: $%s", n->u.var.name);
		else
			n->type = v->type;
		break;
	}
	case N_POSITIONAL:
		check_positional(c, n);
		break;
	case N_MAP:
		map_read(c, n);
		break;
	case N_IDENT:
		check_ident(c, n);
		break;
	case N_FIELD:
		check_field(c, n);
		break;
	case N_BINOP:
		check_binop(c, n);
		break;
	case N_UNOP:
		check_unop(c, n);
		break;
	case N_TERNARY:
		check_ternary(c, n);
		break;
	case N_CAST:
		check_cast(c, n);
		break;
	case N_CALL:
		n->type = check_call(c, n, false);
		break;
	case N_INCDEC:
		check_incdec_target(c, n, n->u.incdec.target);
		break;
	default:
		break;
	}
}

/* ---- statements ---- */

static void check_block(struct tctx *c, struct node *b);

static bool is_agg_call(const struct node *n)
{
	static const char *const aggs[] = { "count", "sum", "avg", "min",
					    "max", "stats", "hist", "lhist" };
	if (n->kind != N_CALL)
		return false;
	for (size_t i = 0; i < sizeof(aggs) / sizeof(aggs[0]); i++)
		if (!strcmp(n->u.call.name, aggs[i]))
			return true;
	return false;
}

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
		if (t->kind == N_MAP) {
			struct map_info *mi = t->u.map.info;
			if (mi && mi->value.kind == TY_AGG)
				terr(c, s->span, "@%s holds a %s() aggregation; '%s=' needs an integer map",
				     mi->name, agg_name(mi->value.agg), op_str(op));
			else
				map_store(c, t, TYPE_I64);
		} else {
			struct var *var = var_find(c, t->u.var.name);
			if (var->type.kind != TY_NONE && var->type.kind != TY_INT)
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

static void check_stmt(struct tctx *c, struct node *s)
{
	int64_t lo, hi;
	switch (s->kind) {
	case N_EXPR_STMT: {
		struct node *e = s->u.expr_stmt.expr;
		if (e->kind == N_CALL) {
			e->type = check_call(c, e, false);
		} else if (e->kind == N_INCDEC) {
			check_expr(c, e);
		} else {
			check_expr(c, e);
			struct diag *dg = terr(c, e->span, "this expression has no effect");
			diag_hint(dg, "a statement is a call, an assignment or ++/--");
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
		if (lo != -1 && (lo < 1 || lo > 100))
			terr(c, s->span, "unroll count must be between 1 and 100, not %lld",
			     (long long)lo);
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
		struct diag *dg = terr(c, s->span,
			"while loops are not supported: gpux runs only bounded loops");
		diag_hint(dg, "use for ($i : 0..N) { ... } or unroll(N) { ... }");
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
	(void)is_agg_call;
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
	for (int walk = 0; walk < 2; walk++) {
		c.final = walk == 1;
		for (struct node *p = prog->probes; p; p = p->next)
			if (p->u.probe.place)
				check_probe(&c, p);
	}
	return diags->errors == before ? 0 : -1;
}
