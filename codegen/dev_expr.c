/* Device expressions: every value is a 64-bit register. Values live in
 * r6..r8 by nesting level (callee-saved, so builtins and lookups inside
 * an operand do not clobber the other operand); deeper nesting spills
 * to the stack. Lane-varying values never steer more than a one-move
 * if-conversion triangle, the shape the SIMT verifier accepts. */
#include <string.h>
#include <stdlib.h>

#include "dev_priv.h"
#include "sema.h"

int dl_reg_of(int lvl)
{
	return 6 + (lvl < DR_NLEVELS ? lvl : DR_NLEVELS - 1);
}

struct dvar *dl_var_slot(struct lw *L, const char *name)
{
	for (int k = 0; k < L->nvars; k++)
		if (!strcmp(L->vars[k].name, name))
			return &L->vars[k];
	return NULL;
}

bool dl_is_kernel_ident(const struct node *n)
{
	return n->kind == N_IDENT && n->u.ident.kind == ID_BUILTIN &&
	       !strcmp(n->u.ident.name, "kernel");
}

bool dl_has_side_effect(const struct node *n)
{
	if (!n)
		return false;
	switch (n->kind) {
	case N_INCDEC: case N_CALL:
		return true;
	case N_MAP:
		for (const struct node *k = n->u.map.keys; k; k = k->next)
			if (dl_has_side_effect(k))
				return true;
		return false;
	case N_FIELD:
		return dl_has_side_effect(n->u.field.base);
	case N_BINOP:
		return dl_has_side_effect(n->u.binop.lhs) || dl_has_side_effect(n->u.binop.rhs);
	case N_UNOP:
		return dl_has_side_effect(n->u.unop.operand);
	case N_CAST:
		return dl_has_side_effect(n->u.cast.operand);
	case N_TERNARY:
		return dl_has_side_effect(n->u.ternary.cond) ||
		       dl_has_side_effect(n->u.ternary.then) ||
		       dl_has_side_effect(n->u.ternary.els);
	default:
		return false;
	}
}

static bool is_u64(struct type t)
{
	return t.kind == TY_INT && !t.is_signed && t.bits == 64;
}

/* Known not to be negative as a signed 64-bit value. */
static bool small_nonneg(const struct node *n)
{
	int64_t v;
	if (const_int(n, &v))
		return v >= 0;
	return n->type.kind == TY_INT && !n->type.is_signed && n->type.bits < 64;
}

/* Signed semantics for / % < > <= >= (the types of the front end: a
 * u64 operand makes the operation unsigned). Non-negative operands take
 * the unsigned instruction, which agrees and is cheaper. */
static bool signed_op(const struct node *l, const struct node *r)
{
	return !is_u64(l->type) && !is_u64(r->type) &&
	       !(small_nonneg(l) && small_nonneg(r));
}

static bool is_compare(int op)
{
	return op == OP_EQ || op == OP_NE || op == OP_LT || op == OP_GT ||
	       op == OP_LE || op == OP_GE;
}

static int jmp_op(int op, bool sgn, bool when)
{
	if (!when) {
		switch (op) {
		case OP_EQ: op = OP_NE; break;
		case OP_NE: op = OP_EQ; break;
		case OP_LT: op = OP_GE; break;
		case OP_GE: op = OP_LT; break;
		case OP_GT: op = OP_LE; break;
		case OP_LE: op = OP_GT; break;
		}
	}
	switch (op) {
	case OP_EQ: return BPF_JEQ;
	case OP_NE: return BPF_JNE;
	case OP_LT: return sgn ? BPF_JSLT : BPF_JLT;
	case OP_GT: return sgn ? BPF_JSGT : BPF_JGT;
	case OP_LE: return sgn ? BPF_JSLE : BPF_JLE;
	default: return sgn ? BPF_JSGE : BPF_JGE;
	}
}

/* The right operand: an immediate if it is a small constant, else a
 * register. Both operands are live at once, so with no level left the
 * left one waits on the stack and the right one comes back in r1. */
struct operand {
	bool is_imm;
	int32_t imm;
	int reg;
};

typedef int (*eval_fn)(struct lw *L, struct node *n, int lvl);

static int eval_pair(struct lw *L, struct node *a, struct node *b, int lvl,
		     eval_fn fn, bool allow_imm, int *ra, struct operand *rb)
{
	int64_t v;
	if ((*ra = fn(L, a, lvl)) < 0)
		return -1;
	if (allow_imm && b->kind == N_INT && const_int(b, &v) && dl_fits_imm(v)) {
		*rb = (struct operand){ .is_imm = true, .imm = (int32_t)v };
		return 0;
	}
	if (lvl + 1 < DR_NLEVELS) {
		int r = fn(L, b, lvl + 1);
		*rb = (struct operand){ .reg = r };
		return r < 0 ? -1 : 0;
	}
	int saved = L->sp, t = dl_tmp_alloc(L, 8);
	if (t < 0)
		return -1;
	dl_emit_stx(L, 8, BPF_REG_FP, -t, *ra);
	if (fn(L, b, lvl) < 0)
		return -1;
	dl_emit_alu_x(L, BPF_MOV, 1, *ra);
	dl_emit_ldx(L, 8, *ra, BPF_REG_FP, -t);
	L->sp = saved;
	*rb = (struct operand){ .reg = 1 };
	return 0;
}

static void alu_op(struct lw *L, int op, int dst, struct operand b)
{
	if (b.is_imm)
		dl_emit_alu_k(L, op, dst, b.imm);
	else
		dl_emit_alu_x(L, op, dst, b.reg);
}

/* target = (a jop b) as 0/1: a triangle over one register move. */
static void setcc(struct lw *L, int jop, int a, struct operand b, int target)
{
	int l = dl_new_label(L);
	dl_emit_mov_k(L, target, 1);
	if (b.is_imm)
		dl_emit_jmp_k(L, jop, a, b.imm, l);
	else
		dl_emit_jmp_x(L, jop, a, b.reg, l);
	dl_emit_mov_k(L, target, 0);
	dl_place_label(L, l);
}

/* Signed / and %, which eBPF lacks before cpu=v4 (and the JIT refuses):
 * divide the magnitudes, then restore the sign, without branches. */
static void signed_divmod(struct lw *L, bool mod, int a, struct operand b)
{
	if (b.is_imm && b.imm > 0) {
		/* A positive constant divisor: only the dividend's sign. */
		dl_emit_alu_x(L, BPF_MOV, 2, a);
		dl_emit_alu_k(L, BPF_ARSH, 2, 63);
		dl_emit_alu_x(L, BPF_XOR, a, 2);
		dl_emit_alu_x(L, BPF_SUB, a, 2);
		dl_emit_alu_k(L, mod ? BPF_MOD : BPF_DIV, a, b.imm);
		dl_emit_alu_x(L, BPF_XOR, a, 2);
		dl_emit_alu_x(L, BPF_SUB, a, 2);
		return;
	}
	if (b.is_imm) {
		dl_emit_mov_k(L, 1, b.imm);
		b = (struct operand){ .reg = 1 };
	}
	dl_emit_alu_x(L, BPF_MOV, 2, a);
	dl_emit_alu_k(L, BPF_ARSH, 2, 63);
	dl_emit_alu_x(L, BPF_MOV, 3, b.reg);
	dl_emit_alu_k(L, BPF_ARSH, 3, 63);
	dl_emit_alu_x(L, BPF_XOR, a, 2);
	dl_emit_alu_x(L, BPF_SUB, a, 2);
	dl_emit_alu_x(L, BPF_MOV, 4, b.reg);
	dl_emit_alu_x(L, BPF_XOR, 4, 3);
	dl_emit_alu_x(L, BPF_SUB, 4, 3);
	dl_emit_alu_x(L, mod ? BPF_MOD : BPF_DIV, a, 4);
	if (!mod)
		dl_emit_alu_x(L, BPF_XOR, 2, 3);
	dl_emit_alu_x(L, BPF_XOR, a, 2);
	dl_emit_alu_x(L, BPF_SUB, a, 2);
}

static int eval_bool_fn(struct lw *L, struct node *n, int lvl)
{
	return dl_eval_bool(L, n, lvl, dl_reg_of(lvl)) < 0 ? -1 : dl_reg_of(lvl);
}

static int check_scalar(struct lw *L, struct node *n)
{
	if (n->type.kind == TY_STR)
		return dl_unsupported(L, n, "a string value");
	if (n->type.kind != TY_INT && n->type.kind != TY_NONE)
		return dl_unsupported(L, n, "this kind of value");
	return 0;
}

static int eval_binop(struct lw *L, struct node *n, int lvl)
{
	struct node *l = n->u.binop.lhs, *r = n->u.binop.rhs;
	int op = n->u.binop.op, ra;
	struct operand rb;
	if (l->type.kind == TY_STR || r->type.kind == TY_STR)
		return dl_unsupported(L, n, "string comparison");
	if (op == OP_LAND || op == OP_LOR) {
		int R = dl_reg_of(lvl);
		if (n->unif == UNIF_UNIFORM) {
			/* Short-circuit, as bpftrace does. */
			int f = dl_new_label(L), end = dl_new_label(L);
			if (dl_cond_jump(L, n, false, f, lvl) < 0)
				return -1;
			dl_emit_mov_k(L, R, 1);
			dl_emit_ja(L, end);
			dl_place_label(L, f);
			dl_emit_mov_k(L, R, 0);
			dl_place_label(L, end);
			return R;
		}
		/* A varying condition cannot branch: both sides are computed. */
		if (dl_has_side_effect(r))
			return dl_unsupported(L, r, "a side effect in the right operand of a lane-varying '%s'",
					   op_str(op));
		if (eval_pair(L, l, r, lvl, eval_bool_fn, false, &ra, &rb) < 0)
			return -1;
		alu_op(L, op == OP_LAND ? BPF_AND : BPF_OR, ra, rb);
		return ra;
	}
	if (check_scalar(L, l) < 0 || check_scalar(L, r) < 0)
		return -1;
	bool sgn = signed_op(l, r);
	if (eval_pair(L, l, r, lvl, dl_eval, true, &ra, &rb) < 0)
		return -1;
	if (is_compare(op)) {
		setcc(L, jmp_op(op, sgn, true), ra, rb, 0);
		dl_emit_alu_x(L, BPF_MOV, ra, 0);
		return ra;
	}
	switch (op) {
	case OP_ADD: alu_op(L, BPF_ADD, ra, rb); break;
	case OP_SUB: alu_op(L, BPF_SUB, ra, rb); break;
	case OP_MUL: alu_op(L, BPF_MUL, ra, rb); break;
	case OP_BAND: alu_op(L, BPF_AND, ra, rb); break;
	case OP_BOR: alu_op(L, BPF_OR, ra, rb); break;
	case OP_BXOR: alu_op(L, BPF_XOR, ra, rb); break;
	case OP_SHL: alu_op(L, BPF_LSH, ra, rb); break;
	case OP_SHR:
		alu_op(L, n->type.is_signed && !small_nonneg(l) ? BPF_ARSH : BPF_RSH, ra, rb);
		break;
	case OP_DIV: case OP_MOD:
		if (sgn)
			signed_divmod(L, op == OP_MOD, ra, rb);
		else
			alu_op(L, op == OP_MOD ? BPF_MOD : BPF_DIV, ra, rb);
		break;
	default:
		return dl_unsupported(L, n, "operator '%s'", op_str(op));
	}
	return ra;
}

/* Values that are already 0 or 1. */
static bool is_bool(const struct node *n)
{
	if (n->kind == N_UNOP)
		return n->u.unop.op == OP_NOT;
	return n->kind == N_BINOP && (is_compare(n->u.binop.op) ||
				      n->u.binop.op == OP_LAND || n->u.binop.op == OP_LOR);
}

int dl_eval_bool(struct lw *L, struct node *n, int lvl, int target)
{
	struct span saved = L->cur;
	L->cur = n->span;
	int rc = 0, ra;
	struct operand rb;
	if (n->kind == N_BINOP && is_compare(n->u.binop.op) &&
	    n->u.binop.lhs->type.kind == TY_INT && n->u.binop.rhs->type.kind == TY_INT) {
		struct node *l = n->u.binop.lhs, *r = n->u.binop.rhs;
		rc = eval_pair(L, l, r, lvl, dl_eval, true, &ra, &rb);
		if (rc == 0)
			setcc(L, jmp_op(n->u.binop.op, signed_op(l, r), true), ra, rb,
			      target == ra || (!rb.is_imm && target == rb.reg) ? 0 : target);
		if (rc == 0 && (target == ra || (!rb.is_imm && target == rb.reg)))
			dl_emit_alu_x(L, BPF_MOV, target, 0);
	} else if ((ra = dl_eval(L, n, lvl)) < 0) {
		rc = -1;
	} else if (is_bool(n)) {
		if (ra != target)
			dl_emit_alu_x(L, BPF_MOV, target, ra);
	} else {
		setcc(L, BPF_JNE, ra, (struct operand){ .is_imm = true }, 0);
		dl_emit_alu_x(L, BPF_MOV, target, 0);
	}
	L->cur = saved;
	return rc;
}

int dl_cond_jump(struct lw *L, struct node *n, bool when, int label, int lvl)
{
	struct span saved = L->cur;
	L->cur = n->span;
	int rc = 0, ra;
	struct operand rb;
	int op = n->kind == N_BINOP ? n->u.binop.op : 0;
	if (n->kind == N_UNOP && n->u.unop.op == OP_NOT) {
		rc = dl_cond_jump(L, n->u.unop.operand, !when, label, lvl);
	} else if (op == OP_LAND || op == OP_LOR) {
		/* && jumps on false at the first false side; || on true. */
		bool first = op == OP_LOR;
		if (when == first) {
			rc = dl_cond_jump(L, n->u.binop.lhs, when, label, lvl);
			if (rc == 0)
				rc = dl_cond_jump(L, n->u.binop.rhs, when, label, lvl);
		} else {
			int skip = dl_new_label(L);
			rc = dl_cond_jump(L, n->u.binop.lhs, !when, skip, lvl);
			if (rc == 0)
				rc = dl_cond_jump(L, n->u.binop.rhs, when, label, lvl);
			dl_place_label(L, skip);
		}
	} else if (is_compare(op)) {
		struct node *l = n->u.binop.lhs, *r = n->u.binop.rhs;
		if (l->type.kind == TY_STR || r->type.kind == TY_STR) {
			rc = dl_unsupported(L, n, "string comparison");
		} else if ((rc = eval_pair(L, l, r, lvl, dl_eval, true, &ra, &rb)) == 0) {
			int jop = jmp_op(op, signed_op(l, r), when);
			if (rb.is_imm)
				dl_emit_jmp_k(L, jop, ra, rb.imm, label);
			else
				dl_emit_jmp_x(L, jop, ra, rb.reg, label);
		}
	} else if ((ra = dl_eval(L, n, lvl)) < 0) {
		rc = -1;
	} else {
		dl_emit_jmp_k(L, when ? BPF_JNE : BPF_JEQ, ra, 0, label);
	}
	L->cur = saved;
	return rc;
}

static int eval_ternary(struct lw *L, struct node *n, int lvl)
{
	struct node *c = n->u.ternary.cond, *a = n->u.ternary.then, *b = n->u.ternary.els;
	int R = dl_reg_of(lvl);
	if (check_scalar(L, a) < 0 || check_scalar(L, b) < 0)
		return -1;
	if (c->unif == UNIF_UNIFORM) {
		int e = dl_new_label(L), end = dl_new_label(L);
		if (dl_cond_jump(L, c, false, e, lvl) < 0 || dl_eval(L, a, lvl) < 0)
			return -1;
		dl_emit_ja(L, end);
		dl_place_label(L, e);
		if (dl_eval(L, b, lvl) < 0)
			return -1;
		dl_place_label(L, end);
		return R;
	}
	/* Lane-varying: compute both arms, then select with one move. */
	if (dl_has_side_effect(a) || dl_has_side_effect(b))
		return dl_unsupported(L, n, "a side effect in the arms of a lane-varying ?:");
	int saved = L->sp, tc = dl_tmp_alloc(L, 8), tt = dl_tmp_alloc(L, 8);
	if (tc < 0 || tt < 0 || dl_eval_bool(L, c, lvl, R) < 0)
		return -1;
	dl_emit_stx(L, 8, BPF_REG_FP, -tc, R);
	if (dl_eval(L, a, lvl) < 0)
		return -1;
	dl_emit_stx(L, 8, BPF_REG_FP, -tt, R);
	if (dl_eval(L, b, lvl) < 0)
		return -1;
	dl_emit_ldx(L, 8, 1, BPF_REG_FP, -tc);
	dl_emit_ldx(L, 8, 2, BPF_REG_FP, -tt);
	int l = dl_new_label(L);
	dl_emit_jmp_k(L, BPF_JEQ, 1, 0, l);
	dl_emit_alu_x(L, BPF_MOV, R, 2);
	dl_place_label(L, l);
	L->sp = saved;
	return R;
}

static int eval_cast(struct lw *L, struct node *n, int lvl)
{
	struct node *o = n->u.cast.operand;
	struct type to = n->u.cast.to, from = o->type;
	int R;
	if (check_scalar(L, o) < 0 || (R = dl_eval(L, o, lvl)) < 0)
		return -1;
	/* Already in range: a narrower value of the same signedness, or an
	 * unsigned one widened to a signed type. */
	if (to.bits == 64 || (from.bits < to.bits && (from.is_signed == to.is_signed ||
						       !from.is_signed)) ||
	    (from.bits == to.bits && from.is_signed == to.is_signed))
		return R;
	if (!to.is_signed && to.bits == 32) {
		dl_emit(L, (struct bpf_insn){ .code = BPF_ALU | BPF_MOV | BPF_X, .dst = R, .src = R });
	} else if (!to.is_signed) {
		dl_emit_alu_k(L, BPF_AND, R, (int32_t)((1u << to.bits) - 1));
	} else {
		dl_emit_alu_k(L, BPF_LSH, R, 64 - to.bits);
		dl_emit_alu_k(L, BPF_ARSH, R, 64 - to.bits);
	}
	return R;
}

static int builtin_id(const char *name)
{
	for (int id = 0; id < DB_COUNT; id++)
		if (!strcmp(dev_builtin_info(id)->name, name))
			return id;
	return -1;
}

static int eval_builtin(struct lw *L, struct node *n, const char *name, int lvl)
{
	int id = builtin_id(name);
	if (id < 0)
		return dl_unsupported(L, n, "builtin '%s'", name);
	dl_emit_mov_k(L, 1, id);
	dl_emit_call(L, DH_BUILTIN);
	dl_emit_alu_x(L, BPF_MOV, dl_reg_of(lvl), 0);
	return dl_reg_of(lvl);
}

static int eval_ident(struct lw *L, struct node *n, int lvl)
{
	int R = dl_reg_of(lvl), nf;
	if (n->u.ident.kind == ID_BUILTIN)
		return eval_builtin(L, n, n->u.ident.name, lvl);
	if (n->u.ident.kind != ID_FIELD)
		return dl_unsupported(L, n, "'%s'", n->u.ident.name);
	const struct dev_ctx_field *f = dev_ctx_fields(&nf);
	for (int k = 0; k < nf; k++)
		if (!strcmp(f[k].name, n->u.ident.name)) {
			dl_emit_ldx(L, f[k].size, R, DR_CTX, f[k].off);
			return R;
		}
	return dl_unsupported(L, n, "field '%s'", n->u.ident.name);
}

static int eval_incdec(struct lw *L, struct node *n, int lvl)
{
	struct node *t = n->u.incdec.target;
	int R = dl_reg_of(lvl), d = n->u.incdec.op == OP_INC ? 1 : -1;
	if (t->kind != N_VAR)
		return dl_unsupported(L, n, "the value of a map's '%s'", op_str(n->u.incdec.op));
	struct dvar *v = dl_var_slot(L, t->u.var.name);
	dl_emit_ldx(L, 8, R, BPF_REG_FP, -v->off);
	if (n->u.incdec.prefix) {
		dl_emit_alu_k(L, BPF_ADD, R, d);
		dl_emit_stx(L, 8, BPF_REG_FP, -v->off, R);
	} else {
		dl_emit_alu_x(L, BPF_MOV, 0, R);
		dl_emit_alu_k(L, BPF_ADD, 0, d);
		dl_emit_stx(L, 8, BPF_REG_FP, -v->off, 0);
	}
	return R;
}

static int eval_node(struct lw *L, struct node *n, int lvl)
{
	int R = dl_reg_of(lvl);
	switch (n->kind) {
	case N_INT:
		dl_emit_mov_k(L, R, (int64_t)n->u.num.value);
		return R;
	case N_POSITIONAL: {
		int i = n->u.positional.index;
		if (i == 0) {
			dl_emit_mov_k(L, R, L->prog->npositional);
			return R;
		}
		if (n->type.kind != TY_INT)
			return dl_unsupported(L, n, "a string positional parameter");
		/* one that is not given is 0, as in bpftrace */
		dl_emit_mov_k(L, R, i > L->prog->npositional ? 0
			      : strtoll(L->prog->positional[i - 1], NULL, 0));
		return R;
	}
	case N_VAR: {
		struct dvar *v = dl_var_slot(L, n->u.var.name);
		if (n->type.kind == TY_STR)
			return dl_unsupported(L, n, "a string variable");
		dl_emit_ldx(L, 8, R, BPF_REG_FP, -v->off);
		return R;
	}
	case N_IDENT:
		return eval_ident(L, n, lvl);
	case N_FIELD: {
		struct node *b = n->u.field.base;
		char name[64];
		if (b->kind != N_IDENT || b->u.ident.kind != ID_BUILTIN)
			return dl_unsupported(L, n, "this field");
		snprintf(name, sizeof(name), "%s.%s", b->u.ident.name, n->u.field.name);
		return eval_builtin(L, n, name, lvl);
	}
	case N_MAP:
		return dl_map_read(L, n, lvl);
	case N_BINOP:
		return eval_binop(L, n, lvl);
	case N_UNOP:
		switch (n->u.unop.op) {
		case OP_NOT:
			if (dl_eval(L, n->u.unop.operand, lvl) < 0)
				return -1;
			setcc(L, BPF_JEQ, R, (struct operand){ .is_imm = true }, 0);
			dl_emit_alu_x(L, BPF_MOV, R, 0);
			return R;
		case OP_NEG:
			if (dl_eval(L, n->u.unop.operand, lvl) < 0)
				return -1;
			dl_emit(L, (struct bpf_insn){ .code = BPF_ALU64 | BPF_NEG, .dst = R });
			return R;
		case OP_BNOT:
			if (dl_eval(L, n->u.unop.operand, lvl) < 0)
				return -1;
			dl_emit_alu_k(L, BPF_XOR, R, -1);
			return R;
		default:
			return dl_eval(L, n->u.unop.operand, lvl);
		}
	case N_TERNARY:
		return eval_ternary(L, n, lvl);
	case N_CAST:
		return eval_cast(L, n, lvl);
	case N_INCDEC:
		return eval_incdec(L, n, lvl);
	case N_STR:
		return dl_unsupported(L, n, "a string value");
	default:
		return dl_unsupported(L, n, "this expression");
	}
}

int dl_eval(struct lw *L, struct node *n, int lvl)
{
	struct span saved = L->cur;
	L->cur = n->span;
	int r = eval_node(L, n, lvl);
	L->cur = saved;
	return r;
}
