/* Pass 2, expressions: identifiers against the catalog, fields,
 * operators, casts and positional parameters. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdefs.h"
#include "sema_types.h"
#include "suggest.h"
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
	/* the event with it nearest this probe: of its own unit (retval is
	 * kretprobe's, where a kprobe asks), else the first */
	size_t n_ev;
	const struct event *const *es = catalog_events(&n_ev), *has = NULL;
	const struct provider *own = c->probe->u.probe.attach->u.attach.prov;
	for (size_t i = 0; i < n_ev; i++)
		if (event_field(es[i], name) &&
		    (!has || (own && es[i]->prov->unit == own->unit && has->prov->unit != own->unit)))
			has = es[i];
	if (has) {
		struct diag *dg = terr(c, n->span, "'%s' is not available in %s", name,
				       probe_name(c, pb, sizeof(pb)));
		diag_hint(dg, "'%s' is a field of %s", name, event_str(has, eb, sizeof(eb)));
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

/* args.NAME: a tracepoint's fields, or a uprobe's parameters (DWARF) */
static bool has_args(const struct tctx *c)
{
	const struct attach *at = &c->probe->u.probe.attach->u.attach;
	return is_tracepoint(c) || (at->prov && at->prov->regs && at->prov->user_memory);
}

/* A builtin of the registers (ctx) where the probe's context is them. */
static bool regs_context(struct tctx *c, struct node *n, const char *name)
{
	const struct attach *at = &c->probe->u.probe.attach->u.attach;
	if (at->prov && at->prov->regs)
		return true;
	char pb[64];
	if (is_tracepoint(c)) { /* bpftrace 0.17's words */
		terr(c, n->span, "Use args instead of %s in tracepoint", name);
		return false;
	}
	struct diag *dg = terr(c, n->span, "%s can not be used with \"%s\" probes", name,
			       probe_name(c, pb, sizeof(pb)));
	diag_hint(dg, "it is the registers where a kprobe or uprobe fired (struct pt_regs *)");
	return false;
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
		const struct event *ev = c->probe->u.probe.attach->u.attach.nevents
			? c->probe->u.probe.attach->u.attach.events[0] : NULL;
		if (b->regs_only && ev && ev->ctx_record) {
			/* the context is the event's own kernel record */
			if (sema_record_pointer(c, ev->ctx_record, 1, &n->type))
				n->type.kernel_mem = true;
			else
				terr(c, n->span, "ctx needs the kernel's %s: no BTF here has it",
				     ev->ctx_record);
			return;
		}
		if (b->regs_only && !regs_context(c, n, name))
			return;
		/* an opaque kernel object ("struct task_struct *"): a pointer
		 * to its record where the kernel's types are read (the
		 * registers' everywhere: gpux knows their layout) */
		if (b->type.kind == TY_PTR && b->type.name &&
		    (sema_record_pointer(c, b->type.name, 1, &n->type) ||
		     (b->regs_only && sema_pt_regs(c, &n->type))))
			n->type.kernel_mem = true;
		if (b->kernel_only)
			sema_kernel_only(c, n, name);
		if (b->target_only && (c->probe->u.probe.place & PLACE_HOST))
			sema_target_only(c, n, name);
		return;
	}
	enum decision d;
	if (c->probe->u.probe.policy && catalog_decision(name, &d)) {
		n->u.ident.kind = ID_DECISION;
		n->u.ident.decision = d;
		n->type = TYPE_I64;
		return;
	}
	int64_t ev;
	const struct kernel_types *k = c->prog->kernel_types;
	if (cdefs_enum_value(c->prog->cdefs, name, &ev) ||
	    (k && k->available(c->prog) && k->enum_value(c->prog, name, &ev))) {
		/* an enumerator of the C definitions or the kernel's: its value */
		n->kind = N_INT;
		n->u.num.value = (uint64_t)ev;
		n->type = TYPE_I64;
		return;
	}
	if (!strcmp(name, "args")) {
		if (!has_args(c))
			terr(c, n->span, "'args' is only available in tracepoint probes and uprobes");
		else
			terr(c, n->span, "'args' is a record; access a field: args.NAME");
		return;
	}
	explain_unknown(c, n);
}

/* A tracepoint's field declared as a pointer to a record ("struct
 * __kernel_timespec * rqtp"): a pointer to that record where its layout
 * is known (the script's or the kernel's), as bpftrace types it. */
static void tp_record_pointer(struct tctx *c, const struct field *f, struct type *t)
{
	const char *d = f->doc;
	if (!d || t->kind != TY_INT)
		return;
	if (!strncmp(d, "const ", 6))
		d += 6;
	size_t kw = !strncmp(d, "struct ", 7) ? 7 : !strncmp(d, "union ", 6) ? 6 : 0;
	const char *star = kw ? strchr(d + kw, '*') : NULL;
	if (!star || strchr(star + 1, '*'))
		return;
	const char *e = d + kw;
	while (*e == '_' || (*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') ||
	       (*e >= '0' && *e <= '9'))
		e++;
	if (e == d + kw || strspn(e, " ") != (size_t)(star - e))
		return;
	char *rec = arena_printf(&c->prog->arena, "%.*s", (int)(e - d), d);
	sema_record_pointer(c, rec, 1, t);
}

/* Pointers to records among a uprobe's args: the records' definitions
 * from DWARF join the script's, and a parameter is typed as a pointer
 * to its record, for args->p->x, where their layout here matches
 * DWARF's sizes; where the script defines one of them, the script's
 * definitions are used as they are. The rest stay 64-bit addresses. */
static void type_records(struct tctx *c, struct dwarf_args *da)
{
	bool mine = true;
	for (int i = 0; i < da->ndefs; i++)
		if (sema_script_record(c, da->def_names[i]))
			mine = false;
	if (da->defs && mine) {
		struct diags quiet;
		diags_init(&quiet, &c->prog->arena);
		cdefs_add(c->prog, &quiet, da->defs);
		if (quiet.errors)
			return;
	}
	for (int i = 0; mine && i < da->ndefs; i++)
		if (sema_record_size(c, da->def_names[i]) != (long)da->def_sizes[i])
			return;
	for (size_t i = 0; i < da->n; i++)
		if (da->records[i])
			sema_record_pointer(c, da->records[i], da->stars[i], &da->fields[i].type);
}

/* A uprobe's args from DWARF, for every attach point of the probe (each
 * compiles with its own), on first use (struct program's dwarf_args). */
static void load_dwarf_args(struct tctx *c)
{
	for (struct node *a = c->probe->u.probe.attach; a; a = a->next) {
		struct attach *at = &a->u.attach;
		struct dwarf_args da;
		if (!at->args_dwarf || at->args || at->args_why)
			continue;
		if (!c->prog->dwarf_args)
			at->args_why = "this front end reads no DWARF";
		else if (!c->prog->dwarf_args(&c->prog->arena, at->event, c->prog->target_pid,
					      at->func, &da, &at->args_why)) {
			type_records(c, &da);
			at->args = da.fields;
			at->nargs = (int)da.n;
			at->arg_regs = da.regs;
		}
	}
}

bool sema_is_args_field(const struct tctx *c, const struct node *n)
{
	const struct node *base = n->kind == N_FIELD ? n->u.field.base : NULL;
	return base && base->kind == N_IDENT && !strcmp(base->u.ident.name, "args") &&
	       has_args(c);
}

/* args.NAME (or bpftrace's args->NAME) in tracepoint probes, .x/.y/.z
 * on dim3 values. */
static void check_field(struct tctx *c, struct node *n)
{
	struct node *base = n->u.field.base;
	const char *name = n->u.field.name;
	char b[64];
	if (sema_is_args_field(c, n)) {
		load_dwarf_args(c);
		const struct attach *at = &c->probe->u.probe.attach->u.attach;
		if (!at->args && !is_tracepoint(c)) {
			struct diag *dg = terr(c, n->span, "%s has no DWARF arguments: %s",
					       at->text, at->args_why ? at->args_why : "none read");
			diag_hint(dg, "argN reads the N-th integer argument without DWARF");
			return;
		}
		if (!at->args) {
			/* Unreadable format or a glob: checked at attach time. */
			n->type = TYPE_U64;
			return;
		}
		for (int i = 0; i < at->nargs; i++)
			if (!strcmp(at->args[i].name, name)) {
				n->type = at->args[i].type;
				if (is_tracepoint(c))
					tp_record_pointer(c, &at->args[i], &n->type);
				return;
			}
		const char *cands[128];
		size_t k = 0;
		for (int i = 0; i < at->nargs && k < 128; i++)
			cands[k++] = at->args[i].name;
		struct diag *dg = is_tracepoint(c)
			? terr(c, n->span, "tracepoint %s:%s has no field '%s'", at->event,
			       at->filter, name)
			: terr(c, n->span, "%s has no argument '%s'", at->func, name);
		const char *best = suggest_closest(name, cands, k);
		if (best)
			diag_hint(dg, "did you mean 'args.%s'?", best);
		return;
	}
	check_expr(c, base);
	if (base->type.kind == TY_NONE || sema_record_field(c, n))
		return;
	if (base->type.kind == TY_DIM3) {
		if (n->u.field.arrow) {
			terr(c, n->span, "'->' reads a field through a pointer, and a dim3 is not one: "
			     "use .%s", name);
			return;
		}
		if (!strcmp(name, "x") || !strcmp(name, "y") || !strcmp(name, "z")) {
			n->type = TYPE_U32;
			return;
		}
		terr(c, n->span, "dim3 has no field '%s'; use .x, .y or .z", name);
		return;
	}
	if (base->type.kind == TY_TUPLE) {
		const struct type_tuple *t = base->type.tuple;
		int i = n->u.field.index;
		if (i < 0 || n->u.field.arrow)
			terr(c, n->span, "a tuple's elements are read by position: .0, .1, ...");
		else if (i >= t->n)
			terr(c, n->span, "a tuple of %d elements has no element %d", t->n, i);
		else
			n->type = t->elem[i];
		return;
	}
	terr(c, n->span, "a value of type '%s' has no fields", tname(base->type, b));
}

/* (a, b, ...): integers, pointers, strings, tuples, records and arrays;
 * the device has no room for them (a probe's values live in registers). */
static void check_tuple(struct tctx *c, struct node *n)
{
	char b[64];
	struct type_tuple *t = arena_alloc(&c->prog->arena, sizeof(*t));
	t->n = n->u.tuple.n;
	t->elem = arena_alloc(&c->prog->arena, sizeof(*t->elem) * (size_t)t->n);
	t->str_size = arena_zalloc(&c->prog->arena, sizeof(*t->str_size) * (size_t)t->n);
	bool ok = true;
	int i = 0;
	for (struct node *e = n->u.tuple.elems; e && i < t->n; e = e->next, i++) {
		check_expr(c, e);
		t->elem[i] = e->type;
		if (e->type.kind == TY_STR)
			t->str_size[i] = sema_str_size(e->type, e);
		if (e->type.kind == TY_NONE) {
			ok = false;
		} else if (e->type.kind != TY_INT && e->type.kind != TY_STR &&
			   e->type.kind != TY_TUPLE && e->type.kind != TY_RECORD &&
			   e->type.kind != TY_ARRAY && e->type.kind != TY_POINTER &&
			   /* numbers printed as text: strftime(), macaddr() ... */
			   e->type.kind != TY_TIMESTAMP && e->type.kind != TY_MACADDR &&
			   e->type.kind != TY_ERRNO && e->type.kind != TY_USERNAME) {
			if (!reject_non_scalar(c, e))
				terr(c, e->span, "a tuple cannot hold a value of type '%s'",
				     tname(e->type, b));
			ok = false;
		}
	}
	if (c->probe->u.probe.place == PLACE_DEVICE) {
		struct diag *dg = terr(c, n->span, "tuples are not available in device probes");
		diag_hint(dg, "a device probe keeps its values in registers; use several maps "
			  "or a map with several keys");
		ok = false;
	}
	if (ok)
		n->type = (struct type){ .kind = TY_TUPLE, .tuple = t };
}

/* ---- operators ---- */

static bool is_compare(int op)
{
	return op == OP_EQ || op == OP_NE || op == OP_LT || op == OP_GT ||
	       op == OP_LE || op == OP_GE;
}

/* A dim3 or a record used whole where a number is wanted. */
bool reject_non_scalar(struct tctx *c, struct node *n)
{
	char b[64];
	if (n->type.kind == TY_DIM3) {
		struct diag *dg = terr(c, n->span,
			"'%.*s' is a dim3, not a number", 40,
			n->kind == N_IDENT ? n->u.ident.name : "value");
		diag_hint(dg, "use one of its fields: .x, .y or .z");
		return true;
	}
	if (n->type.kind == TY_AGG || n->type.kind == TY_VOID || n->type.kind == TY_TUPLE ||
	    n->type.kind == TY_RECORD || n->type.kind == TY_ARRAY) {
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

static bool untyped_map(const struct node *n)
{
	return n->kind == N_MAP && n->type.kind == TY_NONE && n->u.map.info &&
	       n->u.map.info->value.kind == TY_NONE;
}

static void check_binop(struct tctx *c, struct node *n)
{
	struct node *l = n->u.binop.lhs, *r = n->u.binop.rhs;
	int op = n->u.binop.op;
	char b1[64], b2[64];
	if (op == OP_INDEX) {
		sema_index(c, n);
		return;
	}
	check_expr(c, l);
	check_expr(c, r);
	/* a map read before any store has typed it (@n = @n + 1) is a
	 * number beside one, as bpftrace has it: the store then types the
	 * map, and the next pass checks the read against it */
	if ((untyped_map(l) && r->type.kind == TY_INT) || (untyped_map(r) && l->type.kind == TY_INT)) {
		n->type = TYPE_I64;
		return;
	}
	if (l->type.kind == TY_NONE || r->type.kind == TY_NONE)
		return;
	/* arrays and buffers of one type compare byte for byte, as in
	 * bpftrace */
	if ((op == OP_EQ || op == OP_NE) && l->type.kind == r->type.kind &&
	    (l->type.kind == TY_ARRAY || l->type.kind == TY_BUF)) {
		if (l->type.kind == TY_ARRAY && !type_compatible(l->type, r->type))
			terr(c, n->span, "Type mismatch for '%s': comparing '%s' with '%s'",
			     op_str(op), tname(l->type, b1), tname(r->type, b2));
		n->type = TYPE_I64;
		return;
	}
	if (reject_non_scalar(c, l) || reject_non_scalar(c, r))
		return;
	if (sema_pointer_binop(c, n))
		return;
	struct type lt = l->type, rt = r->type;
	if (lt.kind == TY_STR || rt.kind == TY_STR) {
		if (lt.kind == TY_STR && rt.kind == TY_STR &&
		    (op == OP_EQ || op == OP_NE)) {
			n->type = TYPE_I64;
			return;
		}
		if (lt.kind == rt.kind) {
			terr(c, n->span, "operator '%s' is not defined for strings; only == and != compare them",
			     op_str(op));
		} else {
			struct diag *dg = terr(c, n->span, "Type mismatch for '%s': comparing '%s' with '%s'",
					       op_str(op), tname(lt, b1), tname(rt, b2));
			const struct node *s = lt.kind == TY_STR ? l : r;
			int i = s->kind == N_POSITIONAL ? s->u.positional.index : 0;
			if (i > 0 && i <= c->prog->npositional)
				diag_hint(dg, "$%d is '%s', which is not a number", i,
					  c->prog->positional[i - 1]);
		}
		return;
	}
	if (lt.kind == TY_STACK || rt.kind == TY_STACK || lt.kind == TY_KSYM ||
	    rt.kind == TY_KSYM || lt.kind == TY_USYM || rt.kind == TY_USYM) {
		/* printed values: symbolized when printed, no numbers */
		terr(c, n->span, "Type mismatch for '%s': comparing '%s' with '%s'", op_str(op),
		     tname(lt, b1), tname(rt, b2));
		return;
	}
	bool lk = lt.kind == TY_PTR && lt.name && !strncmp(lt.name, "struct ", 7);
	bool rk = rt.kind == TY_PTR && rt.name && !strncmp(rt.name, "struct ", 7);
	if ((lk && (rk || rt.kind == TY_INT)) || (rk && lt.kind == TY_INT)) {
		/* a kernel pointer (curtask): compared, or moved by a number */
		if (is_compare(op) || op == OP_LAND || op == OP_LOR)
			n->type = TYPE_I64;
		else if ((op == OP_ADD || op == OP_SUB) && !(lk && rk))
			n->type = lk ? lt : rt;
		else
			terr(c, n->span, "The %s operator can not be used on expressions of types "
			     "%s, %s", op_str(op), tname(lt, b1), tname(rt, b2));
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
	if (n->u.unop.op == OP_DEREF) {
		sema_deref(c, n);
		return;
	}
	check_expr(c, o);
	if (o->type.kind == TY_NONE || reject_non_scalar(c, o))
		return;
	if (o->type.kind != TY_INT && !(n->u.unop.op == OP_NOT &&
					(o->type.kind == TY_PTR || o->type.kind == TY_POINTER))) {
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
	if (n->u.cast.stars || n->u.cast.to.kind == TY_NONE) {
		sema_cast_to_type(c, n);
		return;
	}
	check_expr(c, o);
	if (o->type.kind == TY_NONE || reject_non_scalar(c, o))
		return;
	if (o->type.kind != TY_INT && o->type.kind != TY_PTR && o->type.kind != TY_POINTER) {
		terr(c, n->span, "cannot cast a value of type '%s' to %s",
		     tname(o->type, b), n->u.cast.name);
		return;
	}
	n->type = n->u.cast.to;
}

/* bpftrace takes a parameter that is not given as 0 without a word; a
 * policy run without its threshold deserves one. */
void positional_unset(struct tctx *c, const struct node *n)
{
	if (!c->final)
		return;
	struct diag *dg = diag_warning(c->diags, n->span,
		"positional parameter $%d is not given (the program got %d argument%s): it is 0, "
		"\"\" in str()", n->u.positional.index, c->prog->npositional,
		c->prog->npositional == 1 ? "" : "s");
	diag_hint(dg, "%s", c->prog->positional_how ? c->prog->positional_how
						     : "pass it after the script: gpux script.gpx ARG...");
}

static void check_positional(struct tctx *c, struct node *n)
{
	int i = n->u.positional.index;
	if (i == 0) {
		n->type = TYPE_I64;
		return;
	}
	if (i > c->prog->npositional) { /* as in bpftrace: 0, and "" in str() */
		positional_unset(c, n);
		n->type = TYPE_I64;
		return;
	}
	const char *s = c->prog->positional[i - 1];
	char *end;
	long long v = strtoll(s, &end, 0);
	n->type = *s && !*end ? TYPE_I64 : TYPE_STR;
	/* a number given is a literal, as bpftrace substitutes it: unroll($1),
	 * strncmp(a, b, $1) */
	if (n->type.kind == TY_INT && v >= 0) {
		n->kind = N_INT;
		n->u.num.value = (uint64_t)v;
	}
}

bool sema_str_literal(struct tctx *c, struct node *a)
{
	if (a->kind == N_CALL && !strcmp(a->u.call.name, "str") && a->u.call.args &&
	    a->u.call.args->kind == N_POSITIONAL)
		check_expr(c, a);
	return a->kind == N_STR;
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
		/* a pointer steps by its element, as in C */
		if (v->type.kind != TY_NONE && v->type.kind != TY_INT && v->type.kind != TY_POINTER)
			terr(c, n->span, "'%s' needs an integer variable; $%s is '%s'",
			     op_str(n->u.incdec.op), v->name, tname(v->type, b));
		n->type = v->type;
		return;
	}
	if (t->kind == N_MAP) {
		check_map_keys(c, t);
		struct map_info *mi = t->u.map.info;
		map_store(c, t, mi && mi->value.kind == TY_POINTER ? mi->value : TYPE_I64);
		n->type = t->type.kind == TY_POINTER ? t->type : TYPE_I64;
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
	case N_TUPLE:
		check_tuple(c, n);
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
	case N_SIZEOF:
		sema_sizeof(c, n);
		break;
	default:
		break;
	}
}

