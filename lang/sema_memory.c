/* Pass 2, memory: casts to pointers, '*', '->', '.', '[]' on the C
 * types of the script's definitions, pointer arithmetic and sizeof. A
 * pointer is an address in the probed process (uprobes) or the kernel
 * (tracepoints); reading through it is a probe-read that may fail and
 * then yields zeros, as in bpftrace. */
#include <string.h>

#include "cdefs.h"
#include "sema_types.h"

static const struct type *boxed(struct tctx *c, struct type t)
{
	struct type *p = arena_alloc(&c->prog->arena, sizeof(*p));
	*p = t;
	return p;
}

static struct type pointer_to(struct tctx *c, struct type t)
{
	return (struct type){ .kind = TY_POINTER, .inner = boxed(c, t) };
}

/* In a uprobe, a record the script does not define may come from the
 * DWARF of the probe's target (a cast to the program's own struct), as
 * bpftrace reads it: its definition joins the script's. */
static const struct record *dwarf_record(struct tctx *c, bool is_union, const char *tag)
{
	const struct attach *at = &c->probe->u.probe.attach->u.attach;
	if (!c->prog->dwarf_record || !at->prov || at->prov->syntax != SYN_UPROBE || !at->event)
		return NULL;
	const char *rec = arena_printf(&c->prog->arena, "%s %s", is_union ? "union" : "struct", tag);
	const char *key = arena_printf(&c->prog->arena, "%s\n%s", at->event, rec);
	for (struct dwarf_miss *m = c->dwarf_misses; m; m = m->next)
		if (!strcmp(m->key, key))
			return NULL;
	const char *defs = c->prog->dwarf_record(&c->prog->arena, at->event, c->prog->target_pid,
						 rec);
	if (!defs) {
		struct dwarf_miss *m = arena_alloc(&c->prog->arena, sizeof(*m));
		*m = (struct dwarf_miss){ key, c->dwarf_misses };
		c->dwarf_misses = m;
		return NULL;
	}
	struct diags quiet;
	diags_init(&quiet, &c->prog->arena);
	cdefs_add(c->prog, &quiet, defs);
	const struct record *r = cdefs_record(c->prog->cdefs, is_union ? "union" : "struct", tag);
	return r && r->defined && !quiet.errors ? r : NULL;
}

/* The record "struct TAG" / "union TAG": the script's, defined or only
 * named, else (in a uprobe) its target's from DWARF, else the running
 * kernel's where the program reads its types; NULL where none has it. */
static const struct record *find_record(struct tctx *c, bool is_union, const char *tag)
{
	const struct record *r =
		cdefs_record(c->prog->cdefs, is_union ? "union" : "struct", tag);
	if (!r || !r->defined) {
		const struct record *d = dwarf_record(c, is_union, tag);
		if (d)
			return d;
	}
	const struct kernel_types *k = c->prog->kernel_types;
	if (r || !k || !k->available(c->prog))
		return r;
	/* asked of a record of its own first, so that a name the kernel
	 * lacks is not left behind as one the script named */
	struct record probe = { .name = arena_printf(&c->prog->arena, "%s %s",
						     is_union ? "union" : "struct", tag),
				.is_union = is_union };
	if (!k->complete(c->prog, &probe) || !probe.defined)
		return NULL;
	struct record *named = cdefs_record_ref(c->prog, is_union, tag);
	if (!named->defined)
		*named = probe;
	return named;
}

/* A type as a cast or sizeof names it: "struct x", an integer type or
 * a typedef, then stars pointers to it. */
static bool resolve_type(struct tctx *c, const char *name, int stars, struct span sp,
			 struct type *out)
{
	const char *tag = NULL, *kw = NULL;
	if (!strncmp(name, "struct ", 7)) {
		kw = "struct";
		tag = name + 7;
	} else if (!strncmp(name, "union ", 6)) {
		kw = "union";
		tag = name + 6;
	}
	if (tag) {
		const struct record *r = find_record(c, *kw == 'u', tag);
		if (!r || (stars == 0 && !cdefs_complete(c->prog, r))) {
			struct diag *dg = terr(c, sp, "Unknown %s: '%s'", kw, name);
			const struct kernel_types *k = c->prog->kernel_types;
			const char *why = k ? k->why(c->prog) : NULL;
			if (why)
				diag_hint(dg, "the kernel's types were not read: %s", why);
			else
				diag_hint(dg, "define it before the probes: %s { ... }", name);
			return false;
		}
		*out = (struct type){ .kind = TY_RECORD, .rec = r };
	} else if (!type_from_cast_name(name, out) && !cdefs_typedef(c->prog->cdefs, name, out)) {
		terr(c, sp, "unknown type name '%s'", name);
		return false;
	}
	for (int i = 0; i < stars; i++)
		*out = pointer_to(c, *out);
	return true;
}

static const struct record *record_named(struct tctx *c, const char *rec)
{
	if (!strncmp(rec, "struct ", 7))
		return find_record(c, false, rec + 7);
	if (!strncmp(rec, "union ", 6))
		return find_record(c, true, rec + 6);
	return NULL;
}

bool sema_script_record(struct tctx *c, const char *rec)
{
	bool is_union = !strncmp(rec, "union ", 6);
	const char *tag = is_union ? rec + 6 : !strncmp(rec, "struct ", 7) ? rec + 7 : NULL;
	const struct record *r =
		tag ? cdefs_record(c->prog->cdefs, is_union ? "union" : "struct", tag) : NULL;
	return r && r->defined;
}

long sema_record_size(struct tctx *c, const char *rec)
{
	const struct record *r = record_named(c, rec);
	return cdefs_complete(c->prog, r) ? (long)r->size : -1;
}

bool sema_record_pointer(struct tctx *c, const char *rec, int stars, struct type *out)
{
	if (sema_record_size(c, rec) < 0 || stars < 1)
		return false;
	return resolve_type(c, rec, stars, (struct span){ 0 }, out);
}

/* A pointer, record or array read through from (a pointer, or a record
 * or array read so): in from's address space. What a kernel pointer reaches is the
 * kernel's; what the probe's own pointers reach, the probe's (a
 * syscall's user record holds user pointers), whatever the record's
 * declaration says. */
static struct type in_space(struct type t, struct type from)
{
	if (t.kind == TY_POINTER || t.kind == TY_RECORD || t.kind == TY_ARRAY)
		t.kernel_mem = from.kernel_mem;
	return t;
}

/* What reading a value of memory type t gives: a char array is a
 * string, as bpftrace has it (an unsigned char array is an array of
 * numbers); the rest is itself. */
static struct type value_of(struct type t)
{
	if (t.kind == TY_ARRAY && t.inner && t.inner->kind == TY_INT && t.inner->bits == 8 &&
	    t.inner->is_signed)
		return (struct type){ .kind = TY_STR, .count = t.count };
	return t;
}

static bool host_only(struct tctx *c, struct node *n, const char *what)
{
	if (c->probe->u.probe.place != PLACE_DEVICE)
		return true;
	struct diag *dg = terr(c, n->span, "%s is not available in device probes", what);
	diag_hint(dg, "device probes do not read memory through pointers; the kernel's "
		  "own loads and stores are gdev:access events (addr)");
	return false;
}

void sema_cast_to_type(struct tctx *c, struct node *n)
{
	struct node *o = n->u.cast.operand;
	char b[64], b2[64];
	struct type t;
	check_expr(c, o);
	if (!resolve_type(c, n->u.cast.name, n->u.cast.stars, n->u.cast.type_span, &t))
		return;
	if (o->type.kind == TY_NONE || (t.kind == TY_POINTER && !host_only(c, n, "a pointer cast")))
		return;
	if (t.kind == TY_RECORD) {
		struct diag *dg = terr(c, n->span, "cannot cast to '%s', only to a pointer to it",
				       n->u.cast.name);
		diag_hint(dg, "(%s *)%s", n->u.cast.name, "address");
		return;
	}
	if (o->type.kind != TY_INT && o->type.kind != TY_POINTER) {
		terr(c, n->span, "cannot cast a value of type '%s' to '%s'", tname(o->type, b),
		     tname(t, b2));
		return;
	}
	/* a kernel pointer cast to another type still points into the kernel */
	if (t.kind == TY_POINTER && o->type.kind == TY_POINTER)
		t.kernel_mem = o->type.kernel_mem;
	n->u.cast.to = t;
	n->type = t;
}

void sema_deref(struct tctx *c, struct node *n)
{
	struct node *o = n->u.unop.operand;
	char b[64];
	check_expr(c, o);
	if (o->type.kind == TY_NONE)
		return;
	if (o->type.kind == TY_INT && o->type.bits == 64) {
		/* an address as a number: bpftrace reads an integer of its
		 * width and sign there; as a cast to a pointer to one */
		struct node *cast = ast_new(&c->prog->arena, N_CAST, o->span);
		cast->u.cast.name = o->type.is_signed ? "int64" : "uint64";
		cast->u.cast.stars = 1;
		cast->u.cast.operand = o;
		cast->u.cast.to = pointer_to(c, TYPE_INT(64, o->type.is_signed));
		cast->type = cast->u.cast.to;
		n->u.unop.operand = o = cast;
	}
	if (o->type.kind != TY_POINTER) {
		terr(c, n->span, "'*' reads through a pointer; '%s' is not one", tname(o->type, b));
		return;
	}
	if (!o->type.inner || o->type.inner->kind == TY_VOID) {
		terr(c, n->span, "cannot read through a 'void *': cast it to a typed pointer first");
		return;
	}
	if (host_only(c, n, "reading memory through a pointer"))
		n->type = in_space(value_of(*o->type.inner), o->type);
}

/* a[i] of a pointer or an array field. */
void sema_index(struct tctx *c, struct node *n)
{
	struct node *a = n->u.binop.lhs, *i = n->u.binop.rhs;
	char b[64];
	check_expr(c, a);
	check_expr(c, i);
	if (a->type.kind == TY_NONE || i->type.kind == TY_NONE)
		return;
	if (a->type.kind != TY_POINTER && a->type.kind != TY_ARRAY) {
		terr(c, n->span, "The array index operator [] can only be used on arrays and "
		     "pointers, found %s.", tname(a->type, b));
		return;
	}
	if (i->type.kind != TY_INT) {
		terr(c, i->span, "an index must be an integer, not '%s'", tname(i->type, b));
		return;
	}
	if (!a->type.inner || a->type.inner->kind == TY_VOID) {
		terr(c, n->span, "cannot index a 'void *': cast it to a typed pointer first");
		return;
	}
	int64_t k;
	if (a->type.kind == TY_ARRAY && const_int(i, &k) && (k < 0 || (uint64_t)k >= a->type.count)) {
		terr(c, i->span, "the index %lld is out of bounds for array of size %u",
		     (long long)k, a->type.count);
		return;
	}
	if (host_only(c, n, "reading memory through a pointer"))
		n->type = in_space(value_of(*a->type.inner), a->type);
}

/* p->f, s.f of records. Returns false when the base is not one. */
bool sema_record_field(struct tctx *c, struct node *n)
{
	struct node *base = n->u.field.base;
	char b[64];
	struct type t = base->type;
	if (t.kind != TY_POINTER && t.kind != TY_RECORD)
		return false;
	const struct record *r = NULL;
	if (t.kind == TY_POINTER) {
		if (!t.inner || t.inner->kind != TY_RECORD) {
			terr(c, n->span, "'%s' does not point to a struct or union", tname(t, b));
			return true;
		}
		if (!n->u.field.arrow) {
			terr(c, n->span, "Can not access field '%s' on type '%s'. Try dereferencing "
			     "it first, or using '->'", n->u.field.name, tname(t, b));
			return true;
		}
		r = t.inner->rec;
	} else {
		if (n->u.field.arrow) {
			terr(c, n->span, "Can not use '->' on a '%s': it is not a pointer; use '.'",
			     tname(t, b));
			return true;
		}
		r = t.rec;
	}
	if (!cdefs_complete(c->prog, r)) {
		terr(c, n->span, "'%s' is declared but not defined", r ? r->name : "struct");
		return true;
	}
	const struct record_field *f = record_field(r, n->u.field.name);
	if (!f) {
		terr(c, n->span, "%s has no field named %s", r->name, n->u.field.name);
		return true;
	}
	if (t.kind == TY_POINTER && !host_only(c, n, "reading memory through a pointer"))
		return true;
	n->type = in_space(value_of(f->type), t);
	return true;
}

/* Pointers in + - and comparisons; false when neither side is one. */
bool sema_pointer_binop(struct tctx *c, struct node *n)
{
	struct type lt = n->u.binop.lhs->type, rt = n->u.binop.rhs->type;
	int op = n->u.binop.op;
	char b1[64], b2[64];
	if (lt.kind != TY_POINTER && rt.kind != TY_POINTER)
		return false;
	bool lp = lt.kind == TY_POINTER, rp = rt.kind == TY_POINTER;
	bool lint = lt.kind == TY_INT, rint = rt.kind == TY_INT;
	switch (op) {
	case OP_ADD:
		if ((lp && rint) || (lint && rp)) {
			n->type = lp ? lt : rt;
			return true;
		}
		break;
	case OP_SUB:
		if (lp && rint) {
			n->type = lt;
			return true;
		}
		break;
	case OP_EQ: case OP_NE: case OP_LT: case OP_GT: case OP_LE: case OP_GE:
	case OP_LAND: case OP_LOR:
		if ((lp || lint) && (rp || rint)) {
			n->type = TYPE_I64;
			return true;
		}
		break;
	default:
		break;
	}
	terr(c, n->span, "operator '%s' is not defined for '%s' and '%s'", op_str(op),
	     tname(lt, b1), tname(rt, b2));
	return true;
}

/* sizeof(type) and sizeof(expr): a constant, rewritten to one. */
static unsigned c_align(struct type t);

/* A string's size as bpftrace 0.17 gives it: a literal's length and its
 * NUL, comm's 16, a char array's length, any other string (str(), a
 * field, a variable) bpftrace's default of 64. e: the expression when
 * the value is written out (an element of a tuple literal), else NULL. */
unsigned sema_str_size(struct type t, const struct node *e)
{
	if (t.count)
		return t.count;
	unsigned n = e && !(e->kind == N_STR && e->u.str.of_str) ? ast_str_size(e) : 0;
	return n ? n : TUPLE_STR_SIZE;
}

/* A tuple's size as bpftrace's sizeof gives it: C's layout of its
 * elements (strings their own length, each element at its alignment, the
 * whole padded to the largest), not the layout gpux keeps it in. e: the
 * expression, whose elements say their strings' lengths when it is a
 * tuple literal. */
static unsigned c_size(struct type t, const struct node *e)
{
	if (t.kind == TY_STR)
		return sema_str_size(t, e);
	if (t.kind != TY_TUPLE || !t.tuple)
		return t.kind == TY_INT || t.kind == TY_RECORD || t.kind == TY_ARRAY
			       ? type_mem_size(t)
			       : 8;
	const struct node *el = e && e->kind == N_TUPLE ? e->u.tuple.elems : NULL;
	unsigned off = 0, al = c_align(t);
	for (int i = 0; i < t.tuple->n; i++, el = el ? el->next : NULL) {
		unsigned a = c_align(t.tuple->elem[i]);
		unsigned s = !el && t.tuple->str_size && t.tuple->str_size[i]
				     ? t.tuple->str_size[i]
				     : c_size(t.tuple->elem[i], el);
		off = (off + a - 1) / a * a + s;
	}
	return (off + al - 1) / al * al;
}

static unsigned c_align(struct type t)
{
	switch (t.kind) {
	case TY_INT:
		return t.bits >= 8 ? t.bits / 8 : 1;
	case TY_STR:
		return 1;
	case TY_RECORD:
		return t.rec && t.rec->align ? t.rec->align : 1;
	case TY_ARRAY:
		return t.inner ? c_align(*t.inner) : 1;
	case TY_TUPLE: {
		unsigned a = 1;
		for (int i = 0; t.tuple && i < t.tuple->n; i++)
			if (c_align(t.tuple->elem[i]) > a)
				a = c_align(t.tuple->elem[i]);
		return a;
	}
	default:
		return 8;
	}
}

void sema_sizeof(struct tctx *c, struct node *n)
{
	struct type t;
	if (n->u.size_of.expr) {
		check_expr(c, n->u.size_of.expr);
		t = n->u.size_of.expr->type;
		if (t.kind == TY_NONE)
			return;
	} else if (!resolve_type(c, n->u.size_of.tname, n->u.size_of.stars,
				 n->u.size_of.type_span, &t)) {
		return;
	}
	n->type = TYPE_U64;
	if (!c->final)
		return;
	const struct node *e = n->u.size_of.expr;
	n->kind = N_INT;
	n->u.num.value = c_size(t, e);
}
