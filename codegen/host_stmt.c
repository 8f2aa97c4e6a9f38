/* Statements of host and driver probes: control flow, variables, map
 * writes, aggregations (bpftrace's value layouts, llvm_host.h), and the
 * output records sent through the ring buffer. */
#include <stdint.h>
#include <string.h>

#include "host_priv.h"

static void stmt(struct hctx *h, struct node *s);

void hl_stmt_list(struct hctx *h, struct node *list)
{
	for (struct node *s = list; s; s = s->next)
		stmt(h, s);
}

static LLVMBasicBlockRef new_block(struct hctx *h, const char *name)
{
	return LLVMAppendBasicBlockInContext(h->ctx, h->fn, name);
}

static void br_to(struct hctx *h, LLVMBasicBlockRef bb)
{
	if (hl_block_open(h))
		LLVMBuildBr(h->b, bb);
}

static LLVMValueRef load64(struct hctx *h, LLVMValueRef p, unsigned off)
{
	return LLVMBuildLoad2(h->b, h->i64, host_gep(h, p, off), "");
}

static void store64(struct hctx *h, LLVMValueRef v, LLVMValueRef p, unsigned off)
{
	LLVMBuildStore(h->b, v, host_gep(h, p, off));
}

/* ---- aggregations ---- */

static LLVMValueRef hist_bucket(struct hctx *h, LLVMValueRef x)
{
	/* bpftrace: 0 for negatives, 1 for 0, 2 + log2(x) above */
	LLVMValueRef n = x, r = host_const(h, 0);
	for (unsigned s = 32; s; s >>= 1) {
		LLVMValueRef big = LLVMBuildICmp(h->b, LLVMIntUGE, n, host_const(h, 1ull << s), "");
		n = LLVMBuildSelect(h->b, big, LLVMBuildLShr(h->b, n, host_const(h, s), ""), n, "");
		r = LLVMBuildSelect(h->b, big, LLVMBuildAdd(h->b, r, host_const(h, s), ""), r, "");
	}
	LLVMValueRef neg = LLVMBuildICmp(h->b, LLVMIntSLT, x, host_const(h, 0), "");
	LLVMValueRef zero = LLVMBuildICmp(h->b, LLVMIntEQ, x, host_const(h, 0), "");
	r = LLVMBuildAdd(h->b, r, host_const(h, 2), "");
	r = LLVMBuildSelect(h->b, zero, host_const(h, 1), r, "");
	return LLVMBuildSelect(h->b, neg, host_const(h, 0), r, "");
}

static LLVMValueRef lhist_bucket(struct hctx *h, const struct host_map *p, LLVMValueRef x)
{
	int64_t lo = p->lhist[0], hi = p->lhist[1], step = p->lhist[2];
	int64_t nb = (hi - lo) / step;
	LLVMValueRef below = LLVMBuildICmp(h->b, LLVMIntSLT, x, host_const(h, (uint64_t)lo), "");
	LLVMValueRef above = LLVMBuildICmp(h->b, LLVMIntSGE, x, host_const(h, (uint64_t)hi), "");
	LLVMValueRef off = LLVMBuildSub(h->b, x, host_const(h, (uint64_t)lo), "");
	LLVMValueRef in = LLVMBuildAdd(h->b, LLVMBuildUDiv(h->b, off, host_const(h, (uint64_t)step), ""),
				       host_const(h, 1), "");
	in = LLVMBuildSelect(h->b, above, host_const(h, (uint64_t)nb + 1), in, "");
	return LLVMBuildSelect(h->b, below, host_const(h, 0), in, "");
}

static void agg_update(struct hctx *h, struct node *m, struct node *call)
{
	struct hmap *hm = hl_map_of(h, m);
	if (!hm)
		return;
	struct host_map *p = hm->pub;
	enum agg_kind agg = call->type.agg;
	if (p->value.kind != TY_AGG || p->value.agg != agg) {
		host_err(h, call, "@%s mixes aggregations; host probes need one kind per map",
			 p->name);
		return;
	}
	LLVMValueRef x = host_const(h, 1), bucket = NULL;
	if (agg != AGG_COUNT && !(x = hl_expr_int(h, call->u.call.args)))
		return;
	if (agg == AGG_HIST)
		bucket = hist_bucket(h, x);
	else if (agg == AGG_LHIST)
		bucket = lhist_bucket(h, p, x);
	LLVMValueRef key = hl_map_key(h, hm, m, bucket);
	if (!key)
		return;
	host_loc(h, call);
	LLVMValueRef v = hl_map_lookup(h, hm, key);
	LLVMBasicBlockRef found = new_block(h, "agg_found");
	LLVMBasicBlockRef missing = new_block(h, "agg_new");
	LLVMBasicBlockRef done = new_block(h, "agg_done");
	LLVMBuildCondBr(h->b, LLVMBuildICmp(h->b, LLVMIntNE, v, LLVMConstNull(h->ptr), ""),
			found, missing);
	bool two = p->value_size == 16;
	LLVMValueRef one = host_const(h, 1);
	LLVMValueRef inc = agg == AGG_SUM || agg == AGG_AVG || agg == AGG_STATS ? x : one;
	/* present: update this CPU's value in place (per-CPU, so no race) */
	LLVMPositionBuilderAtEnd(h->b, found);
	if (agg == AGG_MIN || agg == AGG_MAX) {
		bool uns = call->u.call.args->type.kind == TY_INT &&
			   !call->u.call.args->type.is_signed &&
			   call->u.call.args->type.bits == 64;
		LLVMIntPredicate pr = agg == AGG_MIN ? (uns ? LLVMIntULT : LLVMIntSLT)
						      : (uns ? LLVMIntUGT : LLVMIntSGT);
		LLVMValueRef old = load64(h, v, 0);
		LLVMValueRef unset = LLVMBuildICmp(h->b, LLVMIntEQ, load64(h, v, 8), host_const(h, 0), "");
		LLVMValueRef take = LLVMBuildOr(h->b, unset, LLVMBuildICmp(h->b, pr, x, old, ""), "");
		store64(h, LLVMBuildSelect(h->b, take, x, old, ""), v, 0);
		store64(h, one, v, 8);
	} else {
		store64(h, LLVMBuildAdd(h->b, load64(h, v, 0), inc, ""), v, 0);
		if (two)
			store64(h, LLVMBuildAdd(h->b, load64(h, v, 8), one, ""), v, 8);
	}
	LLVMBuildBr(h->b, done);
	/* absent: insert the first value */
	LLVMPositionBuilderAtEnd(h->b, missing);
	LLVMValueRef init = host_alloca(h, p->value_size, "agg_init");
	store64(h, agg == AGG_MIN || agg == AGG_MAX ? x : inc, init, 0);
	if (two)
		store64(h, one, init, 8);
	hl_map_update(h, hm, key, init, 0);
	LLVMBuildBr(h->b, done);
	LLVMPositionBuilderAtEnd(h->b, done);
}

/* ---- plain map and variable writes ---- */

/* x op= v computes as x op v would: unsigned when either side is a u64
 * (the front end's rule for binary operators). */
static bool update_signed(const struct node *t, const struct node *v)
{
	return !(t->type.kind == TY_INT && !t->type.is_signed && t->type.bits == 64) &&
	       !(v && v->type.kind == TY_INT && !v->type.is_signed && v->type.bits == 64);
}

static LLVMValueRef apply(struct hctx *h, int op, LLVMValueRef a, LLVMValueRef b, bool sgn)
{
	switch (op) {
	case OP_ADD: case OP_INC: return LLVMBuildAdd(h->b, a, b, "");
	case OP_SUB: case OP_DEC: return LLVMBuildSub(h->b, a, b, "");
	case OP_MUL: return LLVMBuildMul(h->b, a, b, "");
	case OP_DIV: return hl_divmod(h, false, a, b, sgn);
	case OP_MOD: return hl_divmod(h, true, a, b, sgn);
	case OP_BAND: return LLVMBuildAnd(h->b, a, b, "");
	case OP_BOR: return LLVMBuildOr(h->b, a, b, "");
	case OP_BXOR: return LLVMBuildXor(h->b, a, b, "");
	case OP_SHL: return LLVMBuildShl(h->b, a, LLVMBuildAnd(h->b, b, host_const(h, 63), ""), "");
	case OP_SHR: {
		LLVMValueRef s = LLVMBuildAnd(h->b, b, host_const(h, 63), "");
		return sgn ? LLVMBuildAShr(h->b, a, s, "") : LLVMBuildLShr(h->b, a, s, "");
	}
	default: return NULL;
	}
}

/* m op= rhs (rhs NULL: plain store of val). Returns {old, new} through
 * the pointers; the element is created when absent (old = 0). */
static bool map_write(struct hctx *h, struct node *m, int op, struct hval val, bool sgn,
		      LLVMValueRef *old_out, LLVMValueRef *new_out)
{
	struct hmap *hm = hl_map_of(h, m);
	if (!hm)
		return false;
	struct host_map *p = hm->pub;
	if (p->value.kind == TY_AGG) {
		host_err(h, m, "@%s holds an aggregation; it cannot be assigned here", p->name);
		return false;
	}
	LLVMValueRef key = hl_map_key(h, hm, m, NULL);
	if (!key)
		return false;
	/* bytes as big as the value are stored from where they are */
	if (op == OP_ASSIGN && val.ssize && val.ssize == p->value_size) {
		hl_map_update(h, hm, key, val.v, 0);
		return true;
	}
	LLVMValueRef buf = host_alloca(h, p->value_size, "mval");
	host_zero(h, buf, p->value_size, 8);
	if (op == OP_ASSIGN) {
		if (val.ssize)
			hl_str_copy(h, buf, p->value_size, val);
		else
			store64(h, val.v, buf, 0);
	} else {
		LLVMValueRef old = hl_load_or_zero(h, hl_map_lookup(h, hm, key));
		LLVMValueRef nv = apply(h, op, old, val.v, sgn);
		store64(h, nv, buf, 0);
		if (old_out)
			*old_out = old;
		if (new_out)
			*new_out = nv;
	}
	hl_map_update(h, hm, key, buf, 0);
	return true;
}

static void find_str_assign(struct node *n, void *arg)
{
	struct hctx *h = arg;
	struct node *t = n->kind == N_ASSIGN ? n->u.assign.target : NULL;
	if (t && t->kind == N_VAR && n->u.assign.value->type.kind == TY_STR) {
		uintptr_t s = hl_str_size(h, n->u.assign.value);
		if (s >= (uintptr_t)hl_index_get(&h->str_ix, t->u.var.name))
			hl_index_put(&h->str_ix, &h->obj->arena, t->u.var.name,
				     (void *)(s + 1));
	}
	ast_visit_children(n, find_str_assign, h);
}

/* A string variable holds the longest string the probe assigns to it
 * ($x = "a"; $x = "bb" must not cut "bb"): one walk of the probe finds
 * that for all its variables. */
static unsigned var_str_size(struct hctx *h, const char *name, unsigned first)
{
	if (h->str_probe != h->probe) {
		h->str_ix = (struct hindex){ .str = true };
		h->str_probe = h->probe;
		find_str_assign(h->probe, h);
	}
	uintptr_t s = (uintptr_t)hl_index_get(&h->str_ix, name);
	unsigned most = s ? (unsigned)(s - 1) : 0;
	return most > first ? most : first;
}

static struct hvar *var_slot(struct hctx *h, struct node *t, unsigned ssize)
{
	struct hvar *v = hl_var_find(h, t->u.var.name);
	if (v)
		return v;
	v = arena_zalloc(&h->obj->arena, sizeof(*v));
	v->name = t->u.var.name;
	v->ssize = ssize ? var_str_size(h, t->u.var.name, ssize) : 0;
	v->slot = host_alloca_zero(h, v->ssize ? (v->ssize + 7) & ~7u : 8, t->u.var.name);
	v->next = h->vars;
	h->vars = v;
	hl_index_put(&h->var_ix, &h->obj->arena, v->name, v);
	return v;
}

void hl_stmt_assign(struct hctx *h, struct node *s)
{
	struct node *t = s->u.assign.target, *val = s->u.assign.value;
	int op = s->u.assign.op;
	if (t->kind == N_MAP && val->kind == N_CALL && val->type.kind == TY_AGG) {
		agg_update(h, t, val);
		return;
	}
	struct hval v = hl_expr(h, val);
	if (!v.v)
		return;
	host_loc(h, s);
	/* p += n moves p by n elements */
	if ((op == OP_ADD || op == OP_SUB) && t->type.kind == TY_POINTER && !v.ssize)
		v.v = hl_pointer_offset(h, t, v.v);
	if (t->kind == N_MAP) {
		map_write(h, t, op, v, update_signed(t, val), NULL, NULL);
		return;
	}
	struct hvar *var = var_slot(h, t, v.ssize);
	if (!var->ssize != !v.ssize) {
		host_err(h, s, "$%s changes between string and integer", var->name);
		return;
	}
	if (v.ssize) {
		hl_str_copy(h, var->slot, var->ssize, v);
		return;
	}
	if (op != OP_ASSIGN)
		v.v = apply(h, op, LLVMBuildLoad2(h->b, h->i64, var->slot, ""), v.v,
			    update_signed(t, val));
	LLVMBuildStore(h->b, v.v, var->slot);
}

LLVMValueRef hl_stmt_incdec(struct hctx *h, struct node *e)
{
	struct node *t = e->u.incdec.target;
	/* a pointer steps by one element */
	struct hval one = { t->type.kind == TY_POINTER ? hl_pointer_offset(h, t, host_const(h, 1))
						      : host_const(h, 1), 0 };
	LLVMValueRef old, nv;
	if (t->kind == N_MAP) {
		if (!map_write(h, t, e->u.incdec.op, one, true, &old, &nv))
			return NULL;
	} else {
		struct hvar *var = hl_var_find(h, t->u.var.name);
		if (!var || var->ssize) {
			host_err(h, t, "$%s is not an integer variable here", t->u.var.name);
			return NULL;
		}
		old = LLVMBuildLoad2(h->b, h->i64, var->slot, "");
		nv = apply(h, e->u.incdec.op, old, one.v, true);
		LLVMBuildStore(h->b, nv, var->slot);
	}
	return e->u.incdec.prefix ? nv : old;
}

/* ---- control flow ---- */

static void stmt_if(struct hctx *h, struct node *s)
{
	LLVMValueRef c = hl_expr_int(h, s->u.if_.cond);
	if (!c)
		return;
	LLVMBasicBlockRef bt = new_block(h, "if_then");
	LLVMBasicBlockRef bf = s->u.if_.els ? new_block(h, "if_else") : NULL;
	LLVMBasicBlockRef done = new_block(h, "if_end");
	LLVMBuildCondBr(h->b, hl_to_bool(h, c), bt, bf ? bf : done);
	LLVMPositionBuilderAtEnd(h->b, bt);
	stmt(h, s->u.if_.then);
	br_to(h, done);
	if (bf) {
		LLVMPositionBuilderAtEnd(h->b, bf);
		stmt(h, s->u.if_.els);
		br_to(h, done);
	}
	LLVMPositionBuilderAtEnd(h->b, done);
}

/* for ($i : lo..hi) and while: real loops, bounded by the constant
 * bounds sema required (the kernel's verifier checks the bound). */
static void stmt_loop(struct hctx *h, struct node *s)
{
	LLVMBasicBlockRef head = new_block(h, "loop");
	LLVMBasicBlockRef body = new_block(h, "loop_body");
	LLVMBasicBlockRef done = new_block(h, "loop_end");
	struct hvar *iv = NULL;
	LLVMValueRef hi = NULL;
	if (s->kind == N_FOR) {
		LLVMValueRef lo = hl_expr_int(h, s->u.for_.lo);
		hi = hl_expr_int(h, s->u.for_.hi);
		if (!lo || !hi)
			return;
		iv = var_slot(h, s->u.for_.var, 0);
		LLVMBuildStore(h->b, lo, iv->slot);
	}
	LLVMBuildBr(h->b, head);
	LLVMPositionBuilderAtEnd(h->b, head);
	LLVMValueRef c;
	if (iv)
		c = LLVMBuildICmp(h->b, LLVMIntSLT, LLVMBuildLoad2(h->b, h->i64, iv->slot, ""), hi, "");
	else if ((c = hl_expr_int(h, s->u.while_.cond)))
		c = hl_to_bool(h, c);
	if (!c)
		return;
	LLVMBuildCondBr(h->b, c, body, done);
	LLVMPositionBuilderAtEnd(h->b, body);
	stmt(h, iv ? s->u.for_.body : s->u.while_.body);
	if (iv && hl_block_open(h))
		LLVMBuildStore(h->b, LLVMBuildAdd(h->b, LLVMBuildLoad2(h->b, h->i64, iv->slot, ""),
						  host_const(h, 1), ""), iv->slot);
	br_to(h, head);
	LLVMPositionBuilderAtEnd(h->b, done);
}

static void stmt_return(struct hctx *h, struct node *s)
{
	LLVMValueRef v = host_const(h, 0);
	if (s->u.ret.value && !(v = hl_expr_int(h, s->u.ret.value)))
		return;
	host_loc(h, s);
	hl_leave(h, v);
	/* later statements land in a block nothing reaches */
	LLVMPositionBuilderAtEnd(h->b, new_block(h, "after_return"));
}

/* The BPF backend's instruction scheduler takes time quadratic in the
 * length of a basic block, and statements without branches make long
 * ones (1,000 printf() calls took 0.3 s, 4,000: 9 s). A big probe's
 * such runs are cut every SPLIT_STMTS statements into blocks LLVM keeps
 * apart (it merges a block into its one predecessor): a branch on a
 * volatile load of a zero to the next block, or around a volatile store
 * of that zero, so the next block has two. Either way does the same;
 * the kernel's verifier knows the zero and follows one. */
#define SPLIT_STMTS 32

static void split_block(struct hctx *h)
{
	LLVMBasicBlockRef bb = LLVMGetInsertBlock(h->b);
	if (bb != h->split_bb) {
		h->split_bb = bb;
		h->split_n = 0;
	}
	if (++h->split_n <= SPLIT_STMTS || !hl_block_open(h))
		return;
	if (!h->split_flag)
		h->split_flag = host_alloca_zero(h, 8, "split");
	LLVMValueRef z = LLVMBuildLoad2(h->b, h->i64, h->split_flag, "");
	LLVMSetVolatile(z, true);
	LLVMBasicBlockRef pad = new_block(h, "split_pad");
	LLVMBasicBlockRef next = new_block(h, "split");
	LLVMBuildCondBr(h->b, LLVMBuildICmp(h->b, LLVMIntEQ, z, host_const(h, 0), ""),
			next, pad);
	LLVMPositionBuilderAtEnd(h->b, pad);
	LLVMSetVolatile(LLVMBuildStore(h->b, host_const(h, 0), h->split_flag), true);
	LLVMBuildBr(h->b, next);
	LLVMPositionBuilderAtEnd(h->b, next);
	h->split_bb = next;
	h->split_n = 1;
}

static void stmt(struct hctx *h, struct node *s)
{
	host_loc(h, s);
	if (h->split_on)
		split_block(h);
	host_temps_free(h);
	struct span was;
	bool had;
	switch (s->kind) {
	case N_EXPR_STMT:
		if (s->u.expr_stmt.expr->kind == N_CALL) {
			hl_site_begin(h, s->u.expr_stmt.expr, &was, &had);
			hl_call_stmt(h, s->u.expr_stmt.expr);
			hl_site_end(h, was, had);
		} else {
			hl_expr(h, s->u.expr_stmt.expr);
		}
		break;
	case N_ASSIGN:
		hl_site_begin(h, s, &was, &had);
		hl_stmt_assign(h, s);
		hl_site_end(h, was, had);
		break;
	case N_IF: stmt_if(h, s); break;
	case N_UNROLL: {
		int64_t n;
		if (!host_const_int(s->u.unroll.count, &n) || n < 0 || n > 100) {
			host_err(h, s->u.unroll.count, "unroll() count must be a constant 0..100");
			break;
		}
		for (int64_t i = 0; i < n; i++)
			stmt(h, s->u.unroll.body);
		break;
	}
	case N_FOR:
	case N_WHILE: stmt_loop(h, s); break;
	case N_RETURN: stmt_return(h, s); break;
	case N_BLOCK: hl_stmt_list(h, s->u.block.stmts); break;
	default:
		host_err(h, s, "this statement is not supported in host probes");
		break;
	}
}
