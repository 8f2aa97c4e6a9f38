/* Expressions of host and driver probes. Integers are i64 (narrower
 * types arrive extended per their signedness); strings are stack
 * buffers of a size known at compile time, compared byte by byte with
 * a bound, as the verifier wants. */
#include <stdlib.h>
#include <string.h>

#include "host_priv.h"

struct hvar *hl_var_find(struct hctx *h, const char *name)
{
	return hl_index_get(&h->var_ix, name);
}

LLVMValueRef hl_to_bool(struct hctx *h, LLVMValueRef v)
{
	return LLVMBuildICmp(h->b, LLVMIntNE, v, host_const(h, 0), "");
}

static LLVMValueRef from_bool(struct hctx *h, LLVMValueRef c)
{
	return LLVMBuildZExt(h->b, c, h->i64, "");
}

LLVMValueRef hl_str_literal(struct hctx *h, const char *s, size_t len, unsigned size)
{
	unsigned alloc = (size + 7) & ~7u;
	LLVMValueRef buf = host_alloca(h, alloc, "str");
	/* u64 stores of the bytes: no .rodata map needed */
	for (unsigned w = 0; w < alloc; w += 8) {
		uint64_t word = 0;
		for (unsigned i = 0; i < 8; i++)
			if (w + i < len && w + i < size - 1)
				word |= (uint64_t)(unsigned char)s[w + i] << (8 * i);
		LLVMBuildStore(h->b, host_const(h, word), host_gep(h, buf, w));
	}
	return buf;
}

void hl_str_copy(struct hctx *h, LLVMValueRef dst, unsigned dsize, struct hval s)
{
	unsigned n = s.ssize < dsize ? s.ssize : dsize;
	LLVMBuildMemCpy(h->b, dst, 1, s.v, 1, host_const(h, n));
	if (dsize > n)
		host_zero(h, host_gep(h, dst, n), dsize - n, 1);
	else if (s.ssize > dsize)
		LLVMBuildStore(h->b, LLVMConstInt(h->i8, 0, false),
			       host_gep(h, dst, dsize - 1));
}

LLVMValueRef hl_byte_at(struct hctx *h, LLVMValueRef buf, unsigned i)
{
	return LLVMBuildLoad2(h->b, h->i8, host_gep(h, buf, i), "");
}

/* a == b up to the first NUL, reading at most min(sizes) (+1) bytes. A
 * chain of early exits, one per byte: the verifier walks it in linear
 * time, where and/or of flags would become joins it explores in
 * combination. A literal side is compared against constants. */
static LLVMValueRef str_eq(struct hctx *h, struct hval a, struct hval b,
			   const struct node *lit)
{
	LLVMValueRef zero8 = LLVMConstInt(h->i8, 0, false);
	unsigned n = lit ? (unsigned)lit->u.str.len + 1
			 : a.ssize < b.ssize ? a.ssize : b.ssize;
	if (lit && n > a.ssize)
		return LLVMConstInt(h->i1, 0, false); /* a holds < ssize chars */
	LLVMBasicBlockRef eq = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "str_eq");
	LLVMBasicBlockRef ne = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "str_ne");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "str_cmp");
	for (unsigned i = 0; i < n; i++) {
		LLVMValueRef ca = hl_byte_at(h, a.v, i);
		LLVMValueRef cb = lit ? LLVMConstInt(h->i8, i < n - 1 ? (unsigned char)lit->u.str.s[i] : 0, false)
				      : hl_byte_at(h, b.v, i);
		LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "str_next");
		LLVMBuildCondBr(h->b, LLVMBuildICmp(h->b, LLVMIntNE, ca, cb, ""), ne, next);
		LLVMPositionBuilderAtEnd(h->b, next);
		if (lit)
			continue;
		next = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "str_next");
		LLVMBuildCondBr(h->b, LLVMBuildICmp(h->b, LLVMIntEQ, ca, zero8, ""), eq, next);
		LLVMPositionBuilderAtEnd(h->b, next);
	}
	/* all n bytes equal and no NUL yet: equal if the longer one ends here */
	if (!lit && a.ssize != b.ssize) {
		LLVMValueRef longer = a.ssize > b.ssize ? a.v : b.v;
		LLVMBuildCondBr(h->b, LLVMBuildICmp(h->b, LLVMIntEQ, hl_byte_at(h, longer, n), zero8, ""),
				eq, ne);
	} else {
		LLVMBuildBr(h->b, eq);
	}
	LLVMPositionBuilderAtEnd(h->b, eq);
	LLVMBuildBr(h->b, done);
	LLVMPositionBuilderAtEnd(h->b, ne);
	LLVMBuildBr(h->b, done);
	LLVMPositionBuilderAtEnd(h->b, done);
	LLVMValueRef phi = LLVMBuildPhi(h->b, h->i1, "");
	LLVMValueRef vals[] = { LLVMConstInt(h->i1, 1, false), LLVMConstInt(h->i1, 0, false) };
	LLVMBasicBlockRef bbs[] = { eq, ne };
	LLVMAddIncoming(phi, vals, bbs, 2);
	return phi;
}

static struct hval builtin(struct hctx *h, struct node *e)
{
	const char *name = e->u.ident.name;
	struct hval r = { 0 };
	if (!strcmp(name, "nsecs")) {
		r.v = host_helper(h, BPF_H_KTIME_GET_NS, h->i64, NULL, 0);
	} else if (!strcmp(name, "elapsed")) {
		r.v = LLVMBuildSub(h->b, host_helper(h, BPF_H_KTIME_GET_NS, h->i64, NULL, 0),
				   host_const(h, h->opts->start_ns), "elapsed");
	} else if (!strcmp(name, "pid") || !strcmp(name, "tid")) {
		LLVMValueRef v = host_helper(h, BPF_H_GET_CURRENT_PID_TGID, h->i64, NULL, 0);
		r.v = name[0] == 'p' ? LLVMBuildLShr(h->b, v, host_const(h, 32), "")
				     : LLVMBuildAnd(h->b, v, host_const(h, 0xffffffff), "");
	} else if (!strcmp(name, "cpid")) {
		if (h->opts->cpid < 0)
			host_err(h, e, "cpid needs a command: run the program with -c CMD or "
				 "-- CMD ARGS");
		r.v = host_const(h, (uint64_t)(h->opts->cpid > 0 ? h->opts->cpid : 0));
	} else if (!strcmp(name, "uid") || !strcmp(name, "gid") || !strcmp(name, "username")) {
		/* username: the uid, named when printed */
		LLVMValueRef v = host_helper(h, BPF_H_GET_CURRENT_UID_GID, h->i64, NULL, 0);
		r.v = name[0] != 'g' ? LLVMBuildAnd(h->b, v, host_const(h, 0xffffffff), "")
				     : LLVMBuildLShr(h->b, v, host_const(h, 32), "");
	} else if (!strcmp(name, "rand") || !strcmp(name, "numaid")) {
		r.v = host_helper(h, name[0] == 'r' ? BPF_H_GET_PRANDOM_U32 : BPF_H_GET_NUMA_NODE_ID,
				  h->i64, NULL, 0);
		r.v = LLVMBuildAnd(h->b, r.v, host_const(h, 0xffffffff), "");
	} else if (!strcmp(name, "gpu")) {
		r.v = host_helper(h, GPUX_H_GPU, h->i64, NULL, 0);
	} else if (!strcmp(name, "ctx")) { /* the registers: the program's context */
		r.v = LLVMBuildPtrToInt(h->b, h->ctxarg, h->i64, "ctx");
	} else if (!strcmp(name, "jiffies")) {
		r.v = host_helper(h, BPF_H_JIFFIES64, h->i64, NULL, 0);
	} else if (!strcmp(name, "cgroup")) {
		r.v = host_helper(h, BPF_H_GET_CURRENT_CGROUP_ID, h->i64, NULL, 0);
	} else if (!strcmp(name, "cpu")) {
		r.v = host_helper(h, BPF_H_GET_SMP_PROCESSOR_ID, h->i64, NULL, 0);
		r.v = LLVMBuildAnd(h->b, r.v, host_const(h, 0xffffffff), "");
	} else if (!strcmp(name, "comm")) {
		LLVMValueRef buf = host_alloca(h, 16, "comm");
		LLVMValueRef args[] = { buf, LLVMConstInt(h->i32, 16, false) };
		host_helper(h, BPF_H_GET_CURRENT_COMM, h->i64, args, 2);
		r = (struct hval){ buf, 16 };
	} else if (!strcmp(name, "probe")) {
		const char *s = hl_probe_text(h, h->at);
		if (hl_probe_by_cookie(h))
			return hl_sym_string(h, true);
		r.ssize = (unsigned)strlen(s) + 1;
		r.v = hl_str_literal(h, s, strlen(s), r.ssize);
	} else if (!hl_builtin_stack(h, e, &r)) {
		host_err(h, e, "builtin '%s' is not supported in host probes yet", name);
	}
	return r;
}

static LLVMValueRef map_read(struct hctx *h, struct node *m, unsigned *ssize)
{
	struct hmap *hm = hl_map_of(h, m);
	if (!hm)
		return NULL;
	struct host_map *p = hm->pub;
	if (p->value.kind == TY_AGG && p->value.agg != AGG_COUNT && p->value.agg != AGG_SUM &&
	    !(p->mirror && (p->value.agg == AGG_MIN || p->value.agg == AGG_MAX))) {
		host_err(h, m, "reading a %s() map in a probe is not supported",
			 agg_name(p->value.agg));
		return NULL;
	}
	LLVMValueRef key = hl_map_key(h, hm, m, NULL);
	if (!key)
		return NULL;
	LLVMValueRef v = hl_map_lookup(h, hm, key);
	if (p->value_str) {
		LLVMValueRef nn = LLVMBuildICmp(h->b, LLVMIntNE, v, LLVMConstNull(h->ptr), "");
		LLVMBasicBlockRef found = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "found");
		LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "read");
		LLVMValueRef buf = host_alloca(h, p->value_str, "mstr");
		host_zero(h, buf, p->value_str, 8);
		LLVMBuildCondBr(h->b, nn, found, done);
		LLVMPositionBuilderAtEnd(h->b, found);
		LLVMBuildMemCpy(h->b, buf, 8, v, 8, host_const(h, p->value_str));
		LLVMBuildBr(h->b, done);
		LLVMPositionBuilderAtEnd(h->b, done);
		*ssize = p->value_str;
		return buf;
	}
	return hl_load_or_zero(h, v);
}

LLVMValueRef hl_load_or_zero(struct hctx *h, LLVMValueRef v)
{
	return hl_load_or_zero_at(h, v, 0);
}

LLVMValueRef hl_load_or_zero_at(struct hctx *h, LLVMValueRef v, unsigned off)
{
	LLVMValueRef nn = LLVMBuildICmp(h->b, LLVMIntNE, v, LLVMConstNull(h->ptr), "");
	LLVMBasicBlockRef from = LLVMGetInsertBlock(h->b);
	LLVMBasicBlockRef found = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "found");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "read");
	LLVMBuildCondBr(h->b, nn, found, done);
	LLVMPositionBuilderAtEnd(h->b, found);
	LLVMValueRef val = LLVMBuildLoad2(h->b, h->i64, host_gep(h, v, off), "");
	LLVMBuildBr(h->b, done);
	LLVMPositionBuilderAtEnd(h->b, done);
	LLVMValueRef phi = LLVMBuildPhi(h->b, h->i64, "");
	LLVMValueRef vals[] = { host_const(h, 0), val };
	LLVMBasicBlockRef bbs[] = { from, found };
	LLVMAddIncoming(phi, vals, bbs, 2);
	return phi;
}

/* pointers (curtask) compare as addresses, unsigned */
static bool is_u64(struct type t)
{
	return (t.kind == TY_INT && !t.is_signed && t.bits == 64) || t.kind == TY_PTR;
}

/* |v| and its sign mask (0 or -1), as unsigned arithmetic. */
static LLVMValueRef magnitude(struct hctx *h, LLVMValueRef v, LLVMValueRef *sign)
{
	*sign = LLVMBuildAShr(h->b, v, host_const(h, 63), "");
	return LLVMBuildSub(h->b, LLVMBuildXor(h->b, v, *sign, ""), *sign, "");
}

LLVMValueRef hl_divmod(struct hctx *h, bool mod, LLVMValueRef l, LLVMValueRef r, bool sgn)
{
	/* The BPF backend cannot select sdiv/srem (no signed division
	 * before cpu=v4): signed operands divide as magnitudes and get
	 * their sign back, truncating as C does; the device lowering
	 * (dev_expr.c) computes the same. A zero divisor gives what the
	 * BPF instructions give (x / 0 = 0, x % 0 = x), and is kept out
	 * of the udiv, where LLVM would take it for undefined. */
	LLVMValueRef zero = host_const(h, 0), sl = NULL, sr = NULL;
	LLVMValueRef a = sgn ? magnitude(h, l, &sl) : l;
	LLVMValueRef b = sgn ? magnitude(h, r, &sr) : r;
	LLVMValueRef z = LLVMBuildICmp(h->b, LLVMIntEQ, r, zero, "");
	LLVMValueRef d = LLVMBuildSelect(h->b, z, host_const(h, 1), b, "");
	LLVMValueRef q = mod ? LLVMBuildURem(h->b, a, d, "") : LLVMBuildUDiv(h->b, a, d, "");
	q = LLVMBuildSelect(h->b, z, mod ? a : zero, q, "");
	if (!sgn)
		return q;
	/* the quotient is negative when the signs differ, the remainder
	 * takes the dividend's */
	LLVMValueRef s = mod ? sl : LLVMBuildXor(h->b, sl, sr, "");
	return LLVMBuildSub(h->b, LLVMBuildXor(h->b, q, s, ""), s, "");
}

static LLVMValueRef logical(struct hctx *h, struct node *e)
{
	LLVMValueRef l = hl_expr_int(h, e->u.binop.lhs);
	if (!l)
		return NULL;
	bool and = e->u.binop.op == OP_LAND;
	LLVMBasicBlockRef from = LLVMGetInsertBlock(h->b);
	LLVMBasicBlockRef rhs = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "rhs");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "logic");
	LLVMValueRef lb = hl_to_bool(h, l);
	LLVMBuildCondBr(h->b, lb, and ? rhs : done, and ? done : rhs);
	LLVMPositionBuilderAtEnd(h->b, rhs);
	LLVMValueRef r = hl_expr_int(h, e->u.binop.rhs);
	if (!r)
		return NULL;
	LLVMValueRef rb = from_bool(h, hl_to_bool(h, r));
	LLVMBasicBlockRef rend = LLVMGetInsertBlock(h->b);
	LLVMBuildBr(h->b, done);
	LLVMPositionBuilderAtEnd(h->b, done);
	LLVMValueRef phi = LLVMBuildPhi(h->b, h->i64, "");
	LLVMValueRef vals[] = { host_const(h, and ? 0 : 1), rb };
	LLVMBasicBlockRef bbs[] = { from, rend };
	LLVMAddIncoming(phi, vals, bbs, 2);
	return phi;
}

/* a == b of two arrays or buffers: every byte of both (their buffers
 * are zeroed past the value, in words of 8). */
static LLVMValueRef bytes_eq(struct hctx *h, struct node *ln, struct node *rn, bool ne)
{
	struct hval a = hl_expr(h, ln), b = hl_expr(h, rn);
	if (!a.v || !b.v)
		return NULL;
	unsigned n = (a.ssize < b.ssize ? a.ssize : b.ssize) / 8;
	LLVMValueRef diff = host_const(h, a.ssize == b.ssize ? 0 : 1);
	for (unsigned i = 0; i < n; i++) {
		LLVMValueRef x = LLVMBuildLoad2(h->b, h->i64, host_gep(h, a.v, 8 * i), "");
		LLVMValueRef y = LLVMBuildLoad2(h->b, h->i64, host_gep(h, b.v, 8 * i), "");
		LLVMSetAlignment(x, 1);
		LLVMSetAlignment(y, 1);
		diff = LLVMBuildOr(h->b, diff, LLVMBuildXor(h->b, x, y, ""), "");
	}
	return from_bool(h, LLVMBuildICmp(h->b, ne ? LLVMIntNE : LLVMIntEQ, diff,
					  host_const(h, 0), ""));
}

static LLVMValueRef binop(struct hctx *h, struct node *e)
{
	int op = e->u.binop.op;
	struct node *ln = e->u.binop.lhs, *rn = e->u.binop.rhs;
	if (op == OP_LAND || op == OP_LOR)
		return logical(h, e);
	if ((op == OP_EQ || op == OP_NE) && ln->type.kind == rn->type.kind &&
	    (ln->type.kind == TY_ARRAY || ln->type.kind == TY_BUF))
		return bytes_eq(h, ln, rn, op == OP_NE);
	if (ln->type.kind == TY_STR || rn->type.kind == TY_STR) {
		if (op != OP_EQ && op != OP_NE) {
			host_err(h, e, "strings can only be compared with == and !=");
			return NULL;
		}
		struct node *lit = rn->kind == N_STR ? rn : ln->kind == N_STR ? ln : NULL;
		struct hval a = hl_expr(h, lit == ln ? rn : ln), b = { 0 };
		if (!a.v || (!lit && !(b = hl_expr(h, rn)).v))
			return NULL;
		LLVMValueRef eq = str_eq(h, a, b, lit);
		if (op == OP_NE)
			eq = LLVMBuildNot(h->b, eq, "");
		return from_bool(h, eq);
	}
	LLVMValueRef l = hl_expr_int(h, ln), r = hl_expr_int(h, rn);
	if (!l || !r)
		return NULL;
	bool lp = ln->type.kind == TY_POINTER, rp = rn->type.kind == TY_POINTER;
	if ((op == OP_ADD || op == OP_SUB) && lp != rp) {
		/* pointer arithmetic counts elements */
		if (lp)
			r = hl_pointer_offset(h, ln, r);
		else
			l = hl_pointer_offset(h, rn, l);
	}
	bool uns = is_u64(ln->type) || is_u64(rn->type) || lp || rp;
	switch (op) {
	case OP_ADD: return LLVMBuildAdd(h->b, l, r, "");
	case OP_SUB: return LLVMBuildSub(h->b, l, r, "");
	case OP_MUL: return LLVMBuildMul(h->b, l, r, "");
	case OP_DIV:
	case OP_MOD:
		return hl_divmod(h, op == OP_MOD, l, r, !uns);
	case OP_BAND: return LLVMBuildAnd(h->b, l, r, "");
	case OP_BOR: return LLVMBuildOr(h->b, l, r, "");
	case OP_BXOR: return LLVMBuildXor(h->b, l, r, "");
	case OP_SHL: return LLVMBuildShl(h->b, l, LLVMBuildAnd(h->b, r, host_const(h, 63), ""), "");
	case OP_SHR: {
		LLVMValueRef s = LLVMBuildAnd(h->b, r, host_const(h, 63), "");
		return ln->type.is_signed ? LLVMBuildAShr(h->b, l, s, "")
					  : LLVMBuildLShr(h->b, l, s, "");
	}
	default:
		break;
	}
	LLVMIntPredicate p;
	switch (op) {
	case OP_EQ: p = LLVMIntEQ; break;
	case OP_NE: p = LLVMIntNE; break;
	case OP_LT: p = uns ? LLVMIntULT : LLVMIntSLT; break;
	case OP_GT: p = uns ? LLVMIntUGT : LLVMIntSGT; break;
	case OP_LE: p = uns ? LLVMIntULE : LLVMIntSLE; break;
	case OP_GE: p = uns ? LLVMIntUGE : LLVMIntSGE; break;
	default:
		host_err(h, e, "operator '%s' is not supported in host probes", op_str(op));
		return NULL;
	}
	return from_bool(h, LLVMBuildICmp(h->b, p, l, r, ""));
}

static struct hval ternary(struct hctx *h, struct node *e)
{
	struct hval r = { 0 };
	LLVMValueRef c = hl_expr_int(h, e->u.ternary.cond);
	if (!c)
		return r;
	bool str = e->type.kind == TY_STR;
	unsigned size = str ? hl_str_size(h, e) : 0;
	LLVMValueRef buf = str ? host_alloca(h, size, "tstr") : NULL;
	LLVMBasicBlockRef bt = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "then");
	LLVMBasicBlockRef bf = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "else");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "cond");
	LLVMBuildCondBr(h->b, hl_to_bool(h, c), bt, bf);
	LLVMValueRef vals[2];
	LLVMBasicBlockRef ends[2];
	struct node *arms[2] = { e->u.ternary.then, e->u.ternary.els };
	for (int i = 0; i < 2; i++) {
		LLVMPositionBuilderAtEnd(h->b, i ? bf : bt);
		struct hval v = hl_expr(h, arms[i]);
		if (!v.v)
			return r;
		if (str)
			hl_str_copy(h, buf, size, v);
		vals[i] = v.v;
		ends[i] = LLVMGetInsertBlock(h->b);
		LLVMBuildBr(h->b, done);
	}
	LLVMPositionBuilderAtEnd(h->b, done);
	if (str)
		return (struct hval){ buf, size };
	r.v = LLVMBuildPhi(h->b, h->i64, "");
	LLVMAddIncoming(r.v, vals, ends, 2);
	return r;
}

static struct hval call_value(struct hctx *h, struct node *e)
{
	struct hval r = { 0 };
	const char *fn = e->u.call.name;
	if (!strcmp(fn, "gpu_free"))
		return (struct hval){ host_helper(h, GPUX_H_GPU_FREE, h->i64, NULL, 0), 0 };
	if (!strcmp(fn, "alloc_base") || !strcmp(fn, "alloc_size")) {
		LLVMValueRef p = hl_expr_int(h, e->u.call.args);
		h->obj->tracks_allocs = true;
		if (p)
			r.v = host_helper(h, fn[6] == 'b' ? GPUX_H_ALLOC_BASE : GPUX_H_ALLOC_SIZE,
					  h->i64, &p, 1);
		return r;
	}
	struct hval lib;
	if (hl_lib_call(h, e, &lib) || hl_stack_call(h, e, &lib))
		return lib;
	if (strcmp(fn, "str")) {
		host_err(h, e, "%s() has no value", e->u.call.name);
		return r;
	}
	unsigned size = HOST_STR_MAX;
	int64_t len;
	LLVMValueRef rsize = NULL; /* a length known only when the probe runs */
	if (e->u.call.nargs == 2) {
		struct node *ln = e->u.call.args->next;
		if (host_const_int(ln, &len)) {
			if (len <= 0) {
				host_err(h, ln, "str() length must be positive");
				return r;
			}
			/* as bpftrace: that many characters, then the NUL, at
			 * most the string size */
			size = len < HOST_STR_MAX ? (unsigned)len + 1 : HOST_STR_MAX;
		} else if (e->u.call.args->type.kind == TY_STR) {
			host_err(h, ln, "str() of a string takes a constant length");
			return r;
		} else {
			LLVMValueRef n = hl_expr_int(h, ln);
			if (!n)
				return r;
			/* n + 1 bytes, the NUL's included, within 1..HOST_STR_MAX
			 * (unsigned: a negative n reads the most) */
			n = LLVMBuildAdd(h->b, n, host_const(h, 1), "");
			LLVMValueRef big = LLVMBuildICmp(h->b, LLVMIntUGT, n, host_const(h, HOST_STR_MAX), "");
			LLVMValueRef none = LLVMBuildICmp(h->b, LLVMIntEQ, n, host_const(h, 0), "");
			n = LLVMBuildSelect(h->b, big, host_const(h, HOST_STR_MAX), n, "");
			rsize = LLVMBuildSelect(h->b, none, host_const(h, HOST_STR_MAX), n, "");
		}
	}
	if (e->u.call.args->type.kind == TY_STR) { /* a tracepoint's string, cut to size */
		struct hval s = hl_expr(h, e->u.call.args);
		if (!s.v || s.ssize <= size)
			return s;
		LLVMValueRef cut = host_alloca(h, size, "strcut");
		hl_str_copy(h, cut, size, s);
		return (struct hval){ cut, size };
	}
	LLVMValueRef addr = hl_expr_int(h, e->u.call.args);
	if (!addr)
		return r;
	LLVMValueRef buf = host_alloca(h, size, "ustr");
	host_zero(h, buf, size, 8);
	LLVMValueRef args[] = { buf, rsize ? LLVMBuildTrunc(h->b, rsize, h->i32, "")
					  : LLVMConstInt(h->i32, size, false),
				LLVMBuildIntToPtr(h->b, addr, h->ptr, "") };
	/* a kernel type's char pointer is the kernel's, whatever the probe */
	host_helper(h, e->u.call.args->type.kernel_mem ? BPF_H_PROBE_READ_KERNEL_STR
						       : BPF_H_PROBE_READ_USER_STR,
		    h->i64, args, 3);
	return (struct hval){ buf, size };
}

static LLVMValueRef positional(struct hctx *h, struct node *e, unsigned *ssize)
{
	int i = e->u.positional.index;
	if (i == 0)
		return host_const(h, (uint64_t)h->prog->npositional);
	const char *s = i <= h->prog->npositional ? h->prog->positional[i - 1] : "";
	if (e->type.kind == TY_STR) {
		*ssize = (unsigned)strlen(s) + 1;
		return hl_str_literal(h, s, strlen(s), *ssize);
	}
	return host_const(h, (uint64_t)strtoll(s, NULL, 0));
}

static struct hval expr(struct hctx *h, struct node *e);

/* -k: calls, increments and memory reads are where the helpers they
 * call are said to be called */
struct hval hl_expr(struct hctx *h, struct node *e)
{
	bool site = e->kind == N_CALL || e->kind == N_INCDEC ||
		    (e->kind == N_UNOP && e->u.unop.op == OP_DEREF) ||
		    (e->kind == N_BINOP && e->u.binop.op == OP_INDEX) ||
		    (e->kind == N_FIELD && (e->u.field.base->type.kind == TY_POINTER ||
					    e->u.field.base->type.kind == TY_RECORD));
	if (!site)
		return expr(h, e);
	struct span was;
	bool had;
	hl_site_begin(h, e, &was, &had);
	struct hval r = expr(h, e);
	hl_site_end(h, was, had);
	return r;
}

static struct hval expr(struct hctx *h, struct node *e)
{
	struct hval r = { 0 };
	host_loc(h, e);
	switch (e->kind) {
	case N_INT:
		r.v = host_const(h, e->u.num.value);
		break;
	case N_STR:
		r.ssize = (unsigned)e->u.str.len + 1;
		r.v = hl_str_literal(h, e->u.str.s, e->u.str.len, r.ssize);
		break;
	case N_VAR: {
		struct hvar *v = hl_var_find(h, e->u.var.name);
		if (!v) {
			host_err(h, e, "$%s is used before it is assigned", e->u.var.name);
			break;
		}
		r.ssize = v->ssize;
		r.v = v->ssize ? v->slot : LLVMBuildLoad2(h->b, h->i64, v->slot, "");
		break;
	}
	case N_POSITIONAL:
		r.v = positional(h, e, &r.ssize);
		break;
	case N_MAP:
		r.v = map_read(h, e, &r.ssize);
		break;
	case N_IDENT:
		if (e->u.ident.kind == ID_BUILTIN)
			return builtin(h, e);
		if (e->u.ident.kind == ID_DECISION)
			r.v = host_const(h, (uint64_t)e->u.ident.decision);
		else if (e->u.ident.kind == ID_HINT)
			r.v = host_const(h, e->u.ident.hint);
		else
			r.v = hl_ctx_field(h, e, &r.ssize);
		break;
	case N_FIELD:
		if (e->u.field.base->type.kind == TY_TUPLE)
			return hl_tuple_elem(h, e);
		if (e->u.field.base->type.kind == TY_POINTER ||
		    e->u.field.base->type.kind == TY_RECORD)
			return hl_memory(h, e);
		r.v = hl_ctx_field(h, e, &r.ssize);
		break;
	case N_TUPLE:
		return hl_tuple(h, e);
	case N_BINOP:
		if (e->u.binop.op == OP_INDEX) {
			bool err;
			if ((r.v = hl_tp_index(h, e, &err)) || err)
				break;
			return hl_memory(h, e);
		}
		r.v = binop(h, e);
		break;
	case N_UNOP: {
		if (e->u.unop.op == OP_DEREF)
			return hl_memory(h, e);
		LLVMValueRef v = hl_expr_int(h, e->u.unop.operand);
		if (!v)
			break;
		switch (e->u.unop.op) {
		case OP_NOT: r.v = from_bool(h, LLVMBuildNot(h->b, hl_to_bool(h, v), "")); break;
		case OP_BNOT: r.v = LLVMBuildNot(h->b, v, ""); break;
		case OP_NEG: r.v = LLVMBuildNeg(h->b, v, ""); break;
		default: r.v = v; break;
		}
		break;
	}
	case N_TERNARY:
		return ternary(h, e);
	case N_CAST: {
		LLVMValueRef v = hl_expr_int(h, e->u.cast.operand);
		if (!v)
			break;
		struct type t = e->u.cast.to;
		if (t.kind != TY_INT || t.bits >= 64) {
			r.v = v;
			break;
		}
		LLVMValueRef n = LLVMBuildTrunc(h->b, v, LLVMIntTypeInContext(h->ctx, t.bits), "");
		r.v = t.is_signed ? LLVMBuildSExt(h->b, n, h->i64, "")
				  : LLVMBuildZExt(h->b, n, h->i64, "");
		break;
	}
	case N_CALL:
		return call_value(h, e);
	case N_INCDEC:
		r.v = hl_stmt_incdec(h, e);
		break;
	default:
		host_err(h, e, "this expression is not supported in host probes");
		break;
	}
	return r;
}

LLVMValueRef hl_expr_int(struct hctx *h, struct node *e)
{
	struct hval v = hl_expr(h, e);
	if (v.v && v.ssize) {
		host_err(h, e, "a string is not a number here");
		return NULL;
	}
	return v.v;
}
