/* Device statements. Control flow on warp-uniform values becomes
 * branches; a lane-varying if (sema allows only $var assignments there)
 * is flattened: each assignment computes its value on every lane and
 * commits it through a one-move select guarded by a 0/1 stack slot, so
 * no branch ever skips more than that move and nested ifs need no
 * nested diamonds. */
#include <string.h>

#include "dev_priv.h"
#include "sema.h"

static int assign_var(struct lw *L, struct node *s)
{
	struct node *t = s->u.assign.target, *v = s->u.assign.value;
	struct dvar *var = dl_var_slot(L, t->u.var.name);
	if (v->type.kind == TY_STR || t->type.kind == TY_STR)
		return dl_unsupported(L, s, "a string variable");
	if (v->type.kind != TY_INT)
		return dl_unsupported(L, v, "this kind of value in a variable");
	if (s->u.assign.op != OP_ASSIGN)
		v = dl_synth_binop(L, t, s->u.assign.op, v);
	int r = dl_eval(L, v, 0);
	if (r < 0)
		return -1;
	if (!L->guard) {
		dl_emit_stx(L, 8, BPF_REG_FP, -var->off, r);
		return 0;
	}
	/* $v = guard ? value : $v, with a triangle over one move. */
	int keep = dl_new_label(L), old = dl_reg_of(1);
	dl_emit_ldx(L, 8, old, BPF_REG_FP, -var->off);
	dl_emit_ldx(L, 8, 1, BPF_REG_FP, -L->guard);
	dl_emit_jmp_k(L, BPF_JEQ, 1, 0, keep);
	dl_emit_alu_x(L, BPF_MOV, old, r);
	dl_place_label(L, keep);
	dl_emit_stx(L, 8, BPF_REG_FP, -var->off, old);
	return 0;
}

static int lower_guarded_if(struct lw *L, struct node *s)
{
	int outer = L->guard, g, ge = 0, c = dl_reg_of(0), nc = dl_reg_of(1);
	struct node *els = s->u.if_.els;
	if ((g = dl_tmp_alloc(L, 8)) < 0 || (els && (ge = dl_tmp_alloc(L, 8)) < 0))
		return -1;
	if (dl_eval_bool(L, s->u.if_.cond, 0, c) < 0)
		return -1;
	struct span saved = L->cur;
	L->cur = s->u.if_.cond->span;
	if (els) {
		dl_emit_alu_x(L, BPF_MOV, nc, c);
		dl_emit_alu_k(L, BPF_XOR, nc, 1);
	}
	if (outer) {
		dl_emit_ldx(L, 8, 1, BPF_REG_FP, -outer);
		dl_emit_alu_x(L, BPF_AND, c, 1);
		if (els)
			dl_emit_alu_x(L, BPF_AND, nc, 1);
	}
	dl_emit_stx(L, 8, BPF_REG_FP, -g, c);
	if (els)
		dl_emit_stx(L, 8, BPF_REG_FP, -ge, nc);
	L->cur = saved;
	L->guard = g;
	int rc = dl_lower_block(L, s->u.if_.then);
	if (rc == 0 && els) {
		L->guard = ge;
		rc = els->kind == N_IF ? dl_lower_stmt(L, els) : dl_lower_block(L, els);
	}
	L->guard = outer;
	return rc;
}

static int lower_if(struct lw *L, struct node *s)
{
	if (L->guard || s->u.if_.cond->unif == UNIF_VARYING)
		return lower_guarded_if(L, s);
	int e = dl_new_label(L), end = dl_new_label(L);
	struct node *els = s->u.if_.els;
	if (dl_cond_jump(L, s->u.if_.cond, false, e, 0) < 0 ||
	    dl_lower_block(L, s->u.if_.then) < 0)
		return -1;
	if (els) {
		struct span saved = L->cur;
		L->cur = els->span;
		dl_emit_ja(L, end);
		L->cur = saved;
	}
	dl_place_label(L, e);
	if (els && (els->kind == N_IF ? dl_lower_stmt(L, els) : dl_lower_block(L, els)) < 0)
		return -1;
	dl_place_label(L, end);
	return 0;
}

/* A counted loop: the verifier unrolls it abstractly (the counter is a
 * constant in its stack slot on every path). */
static int lower_for(struct lw *L, struct node *s)
{
	int64_t lo, hi;
	struct dvar *v = dl_var_slot(L, s->u.for_.var->u.var.name);
	int r = dl_reg_of(0), top = dl_new_label(L), end = dl_new_label(L);
	if (!const_int(s->u.for_.lo, &lo) || !const_int(s->u.for_.hi, &hi))
		return dl_unsupported(L, s, "a for loop without constant bounds");
	dl_emit_mov_k(L, r, lo);
	dl_emit_stx(L, 8, BPF_REG_FP, -v->off, r);
	dl_place_label(L, top);
	dl_emit_ldx(L, 8, r, BPF_REG_FP, -v->off);
	if (dl_fits_imm(hi)) {
		dl_emit_jmp_k(L, BPF_JSGE, r, (int32_t)hi, end);
	} else {
		dl_emit_mov_k(L, dl_reg_of(1), hi);
		dl_emit_jmp_x(L, BPF_JSGE, r, dl_reg_of(1), end);
	}
	if (dl_lower_block(L, s->u.for_.body) < 0)
		return -1;
	dl_emit_ldx(L, 8, r, BPF_REG_FP, -v->off);
	dl_emit_alu_k(L, BPF_ADD, r, 1);
	dl_emit_stx(L, 8, BPF_REG_FP, -v->off, r);
	dl_emit_ja(L, top);
	dl_place_label(L, end);
	return 0;
}

static int lower_call_stmt(struct lw *L, struct node *call)
{
	const char *name = call->u.call.name;
	if (!strcmp(name, "printf"))
		return dl_lower_printf(L, call);
	if (!strcmp(name, "delete"))
		return dl_lower_delete(L, call);
	if (!strcmp(name, "exit")) {
		if (call->u.call.nargs)
			return dl_unsupported(L, call, "exit() with a status");
		/* Tracing stops on the host; as in bpftrace, the rest of the
		 * probe does not run. */
		dl_emit_call(L, DH_EXIT);
		dl_emit_ja(L, L->exit_label);
		return 0;
	}
	if (!strcmp(name, "prefetch") && call->u.call.nargs == 1) {
		/* gdev:'s prefetch(addr): every lane passes its own address,
		 * the JIT has the lowest active lane prefetch its one. */
		int r = dl_eval(L, call->u.call.args, 0);
		if (r < 0)
			return -1;
		dl_emit_alu_x(L, BPF_MOV, 1, r);
		dl_emit_call(L, DH_PREFETCH);
		return 0;
	}
	return dl_unsupported(L, call, "%s()", name);
}

static int lower_expr_stmt(struct lw *L, struct node *e)
{
	if (e->kind == N_CALL)
		return lower_call_stmt(L, e);
	if (e->kind == N_INCDEC && e->u.incdec.target->kind == N_MAP)
		return dl_lower_map_incdec(L, e->u.incdec.target,
					e->u.incdec.op == OP_INC ? 1 : -1, NULL);
	if (e->kind == N_INCDEC) {
		/* The value is unused: $x++ is $x += 1. */
		struct dvar *v = dl_var_slot(L, e->u.incdec.target->u.var.name);
		int r = dl_reg_of(0);
		dl_emit_ldx(L, 8, r, BPF_REG_FP, -v->off);
		dl_emit_alu_k(L, BPF_ADD, r, e->u.incdec.op == OP_INC ? 1 : -1);
		dl_emit_stx(L, 8, BPF_REG_FP, -v->off, r);
		return 0;
	}
	return dl_eval(L, e, 0) < 0 ? -1 : 0;
}

static int stmt_node(struct lw *L, struct node *s)
{
	if (L->guard && s->kind != N_ASSIGN && s->kind != N_IF)
		return dl_unsupported(L, s, "this statement inside a lane-varying if");
	switch (s->kind) {
	case N_EXPR_STMT:
		return lower_expr_stmt(L, s->u.expr_stmt.expr);
	case N_ASSIGN:
		if (s->u.assign.target->kind == N_VAR)
			return assign_var(L, s);
		if (L->guard)
			return dl_unsupported(L, s, "a map update inside a lane-varying if");
		return dl_lower_map_assign(L, s);
	case N_IF:
		return lower_if(L, s);
	case N_UNROLL: {
		int64_t n;
		if (!const_int(s->u.unroll.count, &n))
			return dl_unsupported(L, s, "unroll without a constant count");
		for (int64_t k = 0; k < n; k++)
			if (dl_lower_block(L, s->u.unroll.body) < 0)
				return -1;
		return 0;
	}
	case N_FOR:
		return lower_for(L, s);
	case N_RETURN:
		if (s->u.ret.value)
			return dl_unsupported(L, s, "return with a value");
		dl_emit_ja(L, L->exit_label);
		return 0;
	case N_BLOCK:
		return dl_lower_block(L, s);
	default:
		return dl_unsupported(L, s, "this statement");
	}
}

int dl_lower_stmt(struct lw *L, struct node *s)
{
	struct span saved = L->cur;
	int sp = L->sp;
	L->cur = s->span;
	int rc = stmt_node(L, s);
	L->cur = saved;
	L->sp = sp; /* temporaries die with the statement */
	return rc;
}

/* The maps a dead statement names still exist (a count() without keys
 * prints 0, as in bpftrace): declared, with no code. */
static void declare_maps(struct node *n, void *arg)
{
	if (n->kind == N_MAP && n->u.map.info)
		(void)dl_map_index(arg, n);
	ast_visit_children(n, declare_maps, arg);
}

static bool ends_probe(const struct node *s)
{
	return s->kind == N_RETURN ||
	       (s->kind == N_EXPR_STMT && s->u.expr_stmt.expr->kind == N_CALL &&
		!strcmp(s->u.expr_stmt.expr->u.call.name, "exit"));
}

int dl_lower_block(struct lw *L, struct node *b)
{
	int rc = 0;
	for (struct node *s = b->u.block.stmts; s; s = s->next) {
		if (dl_lower_stmt(L, s) < 0)
			rc = -1;
		/* What follows a return or exit() is dead, and the verifier
		 * rejects unreachable code. */
		if (ends_probe(s)) {
			for (struct node *d = s->next; d; d = d->next)
				declare_maps(d, L);
			break;
		}
	}
	return rc;
}
