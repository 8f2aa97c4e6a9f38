/* Pass 3, device probes only: is each value the same in every lane of a
 * warp? The catalog seeds builtins and fields; values flow through
 * operators, variables and map reads. Control flow must stay uniform,
 * except around side-effect-free if-conversion diamonds (register moves
 * only), which device lowering turns into selects and the SIMT verifier
 * checks again on the bytecode. */
#include <stdio.h>
#include <string.h>

#include "sema.h"

struct uvar {
	struct uvar *next;
	const char *name;
	enum unif unif;
};

struct uctx {
	struct program *prog;
	struct diags *diags;
	struct node *probe;
	struct uvar *vars;
	int branch_depth;  /* inside if/loop bodies: updates are joins */
	bool ctl_varying;  /* inside a lane-varying if-conversion region */
};

static enum unif join(enum unif a, enum unif b)
{
	return a == UNIF_VARYING || b == UNIF_VARYING ? UNIF_VARYING : UNIF_UNIFORM;
}

static struct uvar *uvar(struct uctx *c, const char *name)
{
	for (struct uvar *v = c->vars; v; v = v->next)
		if (!strcmp(v->name, name))
			return v;
	struct uvar *v = arena_zalloc(&c->prog->arena, sizeof(*v));
	v->name = name;
	v->next = c->vars;
	c->vars = v;
	return v;
}

static enum unif expr(struct uctx *c, struct node *n);

static enum unif list(struct uctx *c, struct node *n)
{
	enum unif u = UNIF_UNIFORM;
	for (; n; n = n->next)
		u = join(u, expr(c, n));
	return u;
}

static enum unif expr(struct uctx *c, struct node *n)
{
	enum unif u = UNIF_UNIFORM;
	if (!n)
		return u;
	switch (n->kind) {
	case N_VAR:
		u = uvar(c, n->u.var.name)->unif;
		break;
	case N_MAP:
		/* A map value read with a uniform key is one value. */
		u = list(c, n->u.map.keys);
		break;
	case N_IDENT:
		if (n->u.ident.kind == ID_FIELD)
			u = n->u.ident.field->unif;
		else if (n->u.ident.kind == ID_BUILTIN)
			u = n->u.ident.builtin->unif;
		break;
	case N_FIELD:
		u = expr(c, n->u.field.base);
		break;
	case N_BINOP:
		u = join(expr(c, n->u.binop.lhs), expr(c, n->u.binop.rhs));
		break;
	case N_UNOP:
		u = expr(c, n->u.unop.operand);
		break;
	case N_TERNARY:
		u = join(expr(c, n->u.ternary.cond),
			 join(expr(c, n->u.ternary.then), expr(c, n->u.ternary.els)));
		break;
	case N_CAST:
		u = expr(c, n->u.cast.operand);
		break;
	case N_CALL:
		/* Helpers gather the lanes; their results are collective. */
		list(c, n->u.call.args);
		break;
	case N_INCDEC:
		u = expr(c, n->u.incdec.target);
		break;
	default:
		break;
	}
	n->unif = u;
	return u;
}

/* The first lane-varying leaf of an expression, for the message. */
static const struct node *varying_leaf(const struct node *n)
{
	if (!n || n->unif != UNIF_VARYING)
		return NULL;
	switch (n->kind) {
	case N_IDENT: case N_VAR:
		return n;
	case N_FIELD:
		return n->u.field.base->kind == N_IDENT ? n : varying_leaf(n->u.field.base);
	case N_MAP:
		for (const struct node *k = n->u.map.keys; k; k = k->next)
			if (varying_leaf(k))
				return varying_leaf(k);
		return n;
	case N_BINOP: {
		const struct node *l = varying_leaf(n->u.binop.lhs);
		return l ? l : varying_leaf(n->u.binop.rhs);
	}
	case N_UNOP:
		return varying_leaf(n->u.unop.operand);
	case N_CAST:
		return varying_leaf(n->u.cast.operand);
	case N_INCDEC:
		return varying_leaf(n->u.incdec.target);
	case N_TERNARY: {
		const struct node *l = varying_leaf(n->u.ternary.cond);
		if (!l)
			l = varying_leaf(n->u.ternary.then);
		return l ? l : varying_leaf(n->u.ternary.els);
	}
	default:
		return n;
	}
}

static void leaf_name(const struct node *n, char *buf, size_t len)
{
	switch (n->kind) {
	case N_IDENT:
		snprintf(buf, len, "%s", n->u.ident.name);
		break;
	case N_VAR:
		snprintf(buf, len, "$%s", n->u.var.name);
		break;
	case N_FIELD:
		snprintf(buf, len, "%s.%s", n->u.field.base->u.ident.name, n->u.field.name);
		break;
	case N_MAP:
		snprintf(buf, len, "@%s", n->u.map.name);
		break;
	default:
		snprintf(buf, len, "expression");
	}
}

/* Register moves only: no map access, no call, no ++/--, no control
 * transfer. Such a region can be if-converted under a varying mask. */
static bool pure_expr(const struct node *n)
{
	if (!n)
		return true;
	switch (n->kind) {
	case N_MAP: case N_CALL: case N_INCDEC:
		return false;
	case N_FIELD:
		return pure_expr(n->u.field.base);
	case N_BINOP:
		return pure_expr(n->u.binop.lhs) && pure_expr(n->u.binop.rhs);
	case N_UNOP:
		return pure_expr(n->u.unop.operand);
	case N_CAST:
		return pure_expr(n->u.cast.operand);
	case N_TERNARY:
		return pure_expr(n->u.ternary.cond) && pure_expr(n->u.ternary.then) &&
		       pure_expr(n->u.ternary.els);
	default:
		return true;
	}
}

static bool pure_block(const struct node *b);

static bool pure_stmt(const struct node *s)
{
	switch (s->kind) {
	case N_ASSIGN:
		return s->u.assign.target->kind == N_VAR && pure_expr(s->u.assign.value);
	case N_IF:
		return pure_expr(s->u.if_.cond) && pure_block(s->u.if_.then) &&
		       (!s->u.if_.els || (s->u.if_.els->kind == N_IF ? pure_stmt(s->u.if_.els)
								      : pure_block(s->u.if_.els)));
	default:
		return false;
	}
}

static bool pure_block(const struct node *b)
{
	for (const struct node *s = b->u.block.stmts; s; s = s->next)
		if (!pure_stmt(s))
			return false;
	return true;
}

static void attach_list_text(const struct node *probe, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (const struct node *a = probe->u.probe.attach; a && off < len; a = a->next)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					off ? "," : "", a->u.attach.text);
}

/* A predicate runs before the block: it cannot see $variables. */
static bool mentions_var(const struct node *n)
{
	if (!n)
		return false;
	switch (n->kind) {
	case N_VAR:
		return true;
	case N_MAP: case N_CALL:
		for (const struct node *k = n->kind == N_MAP ? n->u.map.keys
							      : n->u.call.args;
		     k; k = k->next)
			if (mentions_var(k))
				return true;
		return false;
	case N_FIELD:
		return mentions_var(n->u.field.base);
	case N_BINOP:
		return mentions_var(n->u.binop.lhs) || mentions_var(n->u.binop.rhs);
	case N_UNOP:
		return mentions_var(n->u.unop.operand);
	case N_CAST:
		return mentions_var(n->u.cast.operand);
	case N_INCDEC:
		return mentions_var(n->u.incdec.target);
	case N_TERNARY:
		return mentions_var(n->u.ternary.cond) ||
		       mentions_var(n->u.ternary.then) ||
		       mentions_var(n->u.ternary.els);
	default:
		return false;
	}
}

static void report_varying_branch(struct uctx *c, struct node *cond)
{
	const struct node *leaf = varying_leaf(cond);
	char name[128], probe[256];
	/* Loop bodies are walked twice: say it once. */
	if (diags_has_error_at(c->diags, leaf->span))
		return;
	leaf_name(leaf, name, sizeof(name));
	struct diag *dg = diag_error(c->diags, leaf->span,
				     "branch depends on lane-varying value '%s'", name);
	size_t clen = 0, plen = 0;
	const char *ctext = source_span_text(&c->prog->src, cond->span, &clen);
	const struct node *pred = c->probe->u.probe.pred;
	const char *ptext = pred ? source_span_text(&c->prog->src, pred->span, &plen) : NULL;
	attach_list_text(c->probe, probe, sizeof(probe));
	if (ctext && mentions_var(cond)) {
		diag_hint(dg, "a predicate /.../ selects lanes instead of branching, but it cannot read $variables: write the condition there on the probe's own values");
	} else if (!ctext) {
		diag_hint(dg, "move the condition into the probe's predicate /.../, which selects lanes instead of branching");
	} else if (!pred) {
		diag_hint(dg, "move the condition into the predicate: %s /%.*s/ { ... }",
			  probe, (int)clen, ctext);
	} else if (ptext) {
		diag_hint(dg, "combine it with the predicate: %s /(%.*s) && (%.*s)/ { ... }",
			  probe, (int)plen, ptext, (int)clen, ctext);
	}
	diag_hint(dg, "a lane-varying if may only hold assignments to $variables");
}

static void block(struct uctx *c, struct node *b);

static void stmt(struct uctx *c, struct node *s)
{
	switch (s->kind) {
	case N_EXPR_STMT:
		expr(c, s->u.expr_stmt.expr);
		break;
	case N_ASSIGN: {
		enum unif u = expr(c, s->u.assign.value);
		struct node *t = s->u.assign.target;
		if (t->kind == N_VAR) {
			struct uvar *v = uvar(c, t->u.var.name);
			u = join(u, c->ctl_varying ? UNIF_VARYING : UNIF_UNIFORM);
			if (s->u.assign.op != OP_ASSIGN)
				u = join(u, v->unif);
			v->unif = c->branch_depth ? join(v->unif, u) : u;
			t->unif = v->unif;
		} else {
			expr(c, t);
		}
		break;
	}
	case N_IF: {
		enum unif u = expr(c, s->u.if_.cond);
		bool saved = c->ctl_varying;
		if (u == UNIF_VARYING && !c->ctl_varying) {
			bool pure = pure_block(s->u.if_.then) &&
				    (!s->u.if_.els || (s->u.if_.els->kind == N_IF
							       ? pure_stmt(s->u.if_.els)
							       : pure_block(s->u.if_.els)));
			if (!pure) {
				report_varying_branch(c, s->u.if_.cond);
				return;
			}
			c->ctl_varying = true;
		}
		c->branch_depth++;
		block(c, s->u.if_.then);
		if (s->u.if_.els) {
			if (s->u.if_.els->kind == N_IF)
				stmt(c, s->u.if_.els);
			else
				block(c, s->u.if_.els);
		}
		c->branch_depth--;
		c->ctl_varying = saved;
		break;
	}
	case N_UNROLL: case N_FOR: case N_WHILE: {
		struct node *body = s->kind == N_FOR ? s->u.for_.body
				    : s->kind == N_WHILE ? s->u.while_.body : s->u.unroll.body;
		if (s->kind == N_WHILE)
			expr(c, s->u.while_.cond);
		c->branch_depth++;
		/* Twice, so values carried around the back edge are seen. */
		block(c, body);
		block(c, body);
		c->branch_depth--;
		break;
	}
	case N_RETURN:
		expr(c, s->u.ret.value);
		break;
	case N_BLOCK:
		block(c, s);
		break;
	default:
		break;
	}
}

static void block(struct uctx *c, struct node *b)
{
	for (struct node *s = b->u.block.stmts; s; s = s->next)
		stmt(c, s);
}

int sema_uniform(struct program *prog, struct diags *diags)
{
	int before = diags->errors;
	struct uctx c = { .prog = prog, .diags = diags };
	for (struct node *p = prog->probes; p; p = p->next) {
		if (!place_is_device(p->u.probe.place))
			continue;
		c.probe = p;
		c.vars = NULL;
		/* A varying predicate narrows the lanes; it never branches. */
		expr(&c, p->u.probe.pred);
		block(&c, p->u.probe.body);
	}
	return diags->errors == before ? 0 : -1;
}
