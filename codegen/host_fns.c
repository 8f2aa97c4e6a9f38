/* Values of bpftrace's library functions beyond gpux's core (buf,
 * bswap, strncmp, ntop, macaddr, reg, strftime, kptr/uptr) and tuples:
 * built where the probe runs, printed by output/ from their types. */
#include <string.h>

#include "host_priv.h"
#include "sema.h"

/* A tuple is bytes, as a string is (struct type_tuple gives the layout),
 * so variables, map values and records carry it as they carry strings:
 * ssize is its size. */
struct hval hl_tuple(struct hctx *h, struct node *e)
{
	unsigned size = tuple_size(e->type);
	LLVMValueRef buf = host_alloca_zero(h, size, "tuple");
	int i = 0;
	for (struct node *x = e->u.tuple.elems; x; x = x->next, i++) {
		struct hval v = hl_expr(h, x);
		if (!v.v)
			return (struct hval){ 0 };
		LLVMValueRef dst = host_gep(h, buf, tuple_off(e->type, i));
		if (v.ssize)
			hl_str_copy(h, dst, tuple_size(x->type), v);
		else
			LLVMBuildStore(h->b, v.v, dst);
	}
	return (struct hval){ buf, size };
}

/* $t.N: an integer is loaded, a string or tuple is its bytes in place. */
struct hval hl_tuple_elem(struct hctx *h, struct node *e)
{
	struct node *b = e->u.field.base;
	struct hval t = hl_expr(h, b);
	if (!t.v || !t.ssize)
		return (struct hval){ 0 };
	int i = e->u.field.index;
	LLVMValueRef p = host_gep(h, t.v, tuple_off(b->type, i));
	if (e->type.kind == TY_INT)
		return (struct hval){ LLVMBuildLoad2(h->b, h->i64, p, ""), 0 };
	return (struct hval){ p, tuple_size(e->type) };
}

/* buf(data, n): {u64 length, BUF_MAX bytes}, carried as bytes the way
 * strings are. A string's bytes are copied (zeros past its end); an
 * address is read from the process (a kernel type's pointer from the
 * kernel), min(n, BUF_MAX) bytes. fitted: only as many bytes as a
 * constant n (or the array) can hold, for a printf argument, whose
 * record says its size: six buf()s then fit the BPF stack. */
struct hval hl_buf(struct hctx *h, struct node *e, bool fitted)
{
	struct node *d = e->u.call.args, *n = d->next;
	int64_t c;
	bool known = n ? host_const_int(n, &c) : (c = type_mem_size(d->type), true);
	unsigned cap = known ? (c < 0 ? 0 : c > BUF_MAX ? BUF_MAX : (unsigned)c) : BUF_MAX;
	unsigned size = fitted ? 8 + ((cap + 7) & ~7u) : BUF_SIZE;
	struct hval src = hl_expr(h, d);
	/* buf(array): the whole array (sema allowed no length only there) */
	LLVMValueRef len = n ? hl_expr_int(h, n) : host_const(h, type_mem_size(d->type));
	if (!src.v || !len)
		return (struct hval){ 0 };
	LLVMValueRef max = host_const(h, BUF_MAX);
	LLVMValueRef big = LLVMBuildICmp(h->b, LLVMIntUGT, len, max, "");
	len = LLVMBuildSelect(h->b, big, max, len, "");
	LLVMValueRef out = host_alloca(h, size, "buf"); /* the statement's: zeroed here */
	host_zero(h, out, size, 8);
	LLVMBuildStore(h->b, len, out);
	LLVMValueRef data = host_gep(h, out, 8);
	if (src.ssize) {
		unsigned k = src.ssize < size - 8 ? src.ssize : size - 8;
		LLVMBuildMemCpy(h->b, data, 1, src.v, 1, host_const(h, k));
		return (struct hval){ out, size };
	}
	LLVMValueRef rsize = known ? host_const(h, cap) : len;
	LLVMValueRef args[] = { data, LLVMBuildTrunc(h->b, rsize, h->i32, ""),
				LLVMBuildIntToPtr(h->b, src.v, h->ptr, "") };
	host_helper(h, d->type.kernel_mem ? BPF_H_PROBE_READ_KERNEL : BPF_H_PROBE_READ_USER,
		    h->i64, args, 3);
	return (struct hval){ out, size };
}

/* bswap(x): llvm.bswap at x's width (a byte is itself), back to 64 bits
 * as x's type extends. */
static struct hval bswap(struct hctx *h, struct node *e)
{
	struct node *a = e->u.call.args;
	LLVMValueRef v = hl_expr_int(h, a);
	if (!v)
		return (struct hval){ 0 };
	unsigned bits = a->type.bits >= 8 && a->type.bits <= 64 ? a->type.bits : 64;
	if (bits == 8)
		return (struct hval){ v, 0 };
	LLVMTypeRef t = LLVMIntTypeInContext(h->ctx, bits);
	unsigned id = LLVMLookupIntrinsicID("llvm.bswap", 10);
	LLVMValueRef fn = LLVMGetIntrinsicDeclaration(h->mod, id, &t, 1);
	LLVMValueRef n = LLVMBuildTrunc(h->b, v, t, "");
	n = LLVMBuildCall2(h->b, LLVMIntrinsicGetType(h->ctx, id, &t, 1), fn, &n, 1, "");
	v = a->type.is_signed ? LLVMBuildSExt(h->b, n, h->i64, "") : LLVMBuildZExt(h->b, n, h->i64, "");
	return (struct hval){ v, 0 };
}

/* strncmp(a, b, n): byte by byte up to n, a string's bytes past its
 * buffer taken as NUL; 0 when they agree. */
static struct hval strncmp_call(struct hctx *h, struct node *e)
{
	struct node *sa = e->u.call.args, *sb = sa->next;
	struct hval a = hl_expr(h, sa), b = hl_expr(h, sb);
	int64_t n;
	if (!a.v || !b.v || !a.ssize || !b.ssize)
		return (struct hval){ 0 };
	if (!host_const_int(sb->next, &n) || n < 0) {
		host_err(h, sb->next, "strncmp() length must be a constant of 0 or more");
		return (struct hval){ 0 };
	}
	/* past both buffers every byte is NUL on both sides */
	unsigned most = a.ssize > b.ssize ? a.ssize : b.ssize;
	unsigned len = (unsigned)((uint64_t)n < most ? (uint64_t)n : most);
	LLVMValueRef zero8 = LLVMConstInt(h->i8, 0, false);
	LLVMBasicBlockRef ne = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "ncmp_ne");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "ncmp_done");
	LLVMValueRef res = host_alloca(h, 8, "ncmp");
	LLVMBuildStore(h->b, host_const(h, 0), res);
	for (unsigned i = 0; i < len; i++) {
		LLVMValueRef ca = i < a.ssize ? hl_byte_at(h, a.v, i) : zero8;
		LLVMValueRef cb = i < b.ssize ? hl_byte_at(h, b.v, i) : zero8;
		LLVMBasicBlockRef same = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "ncmp_same");
		LLVMBuildCondBr(h->b, LLVMBuildICmp(h->b, LLVMIntNE, ca, cb, ""), ne, same);
		LLVMPositionBuilderAtEnd(h->b, same);
		LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "ncmp_next");
		LLVMBuildCondBr(h->b, LLVMBuildICmp(h->b, LLVMIntEQ, ca, zero8, ""), done, next);
		LLVMPositionBuilderAtEnd(h->b, next);
	}
	LLVMBuildBr(h->b, done);
	LLVMPositionBuilderAtEnd(h->b, ne);
	LLVMBuildStore(h->b, host_const(h, 1), res);
	LLVMBuildBr(h->b, done);
	LLVMPositionBuilderAtEnd(h->b, done);
	return (struct hval){ LLVMBuildLoad2(h->b, h->i64, res, ""), 0 };
}

/* Byte i of buf, loaded as such: volatile, so that LLVM does not split a
 * string read at many constant offsets into as many values, which the
 * BPF backend then spills past the 512-byte stack. */
static LLVMValueRef byte_load(struct hctx *h, LLVMValueRef buf, unsigned i)
{
	LLVMValueRef v = hl_byte_at(h, buf, i);
	LLVMSetVolatile(v, 1);
	return v;
}

/* strcontains(s, "lit"): at each start i while no NUL of s came before
 * it, whether the literal's bytes all agree, OR-ed together. Without a
 * branch, so the verifier walks it once whatever s holds; what is found
 * so far is kept in memory (volatile), so the starts are done one after
 * another rather than all at once in registers that spill. */
static struct hval strcontains(struct hctx *h, struct node *e)
{
	struct node *sa = e->u.call.args, *lit = sa->next;
	struct hval s = hl_expr(h, sa);
	if (!s.v || !s.ssize)
		return (struct hval){ 0 };
	const char *needle = lit->u.str.s;
	size_t nl = lit->u.str.len;
	if (!nl)
		return (struct hval){ host_const(h, 1), 0 };
	LLVMValueRef zero8 = LLVMConstInt(h->i8, 0, false);
	LLVMValueRef acc = host_alloca(h, 16, "contains"); /* found, then alive */
	LLVMValueRef alive_at = host_gep(h, acc, 8);
	LLVMValueRef st = LLVMBuildStore(h->b, host_const(h, 0), acc);
	LLVMSetVolatile(st, 1);
	st = LLVMBuildStore(h->b, host_const(h, 1), alive_at);
	LLVMSetVolatile(st, 1);
	for (unsigned i = 0; i + nl <= s.ssize; i++) {
		LLVMValueRef diff = zero8;
		for (size_t j = 0; j < nl; j++) {
			LLVMValueRef want = LLVMConstInt(h->i8, (unsigned char)needle[j], false);
			diff = LLVMBuildOr(h->b, diff,
					   LLVMBuildXor(h->b, byte_load(h, s.v, i + (unsigned)j), want, ""),
					   "");
		}
		LLVMValueRef alive = LLVMBuildLoad2(h->b, h->i64, alive_at, "");
		LLVMSetVolatile(alive, 1);
		LLVMValueRef here = LLVMBuildAnd(h->b, alive,
			LLVMBuildZExt(h->b, LLVMBuildICmp(h->b, LLVMIntEQ, diff, zero8, ""), h->i64, ""),
			"");
		LLVMValueRef found = LLVMBuildLoad2(h->b, h->i64, acc, "");
		LLVMSetVolatile(found, 1);
		st = LLVMBuildStore(h->b, LLVMBuildOr(h->b, found, here, ""), acc);
		LLVMSetVolatile(st, 1);
		LLVMValueRef nul = LLVMBuildZExt(
			h->b, LLVMBuildICmp(h->b, LLVMIntNE, byte_load(h, s.v, i), zero8, ""), h->i64, "");
		st = LLVMBuildStore(h->b, LLVMBuildAnd(h->b, alive, nul, ""), alive_at);
		LLVMSetVolatile(st, 1);
	}
	LLVMValueRef found = LLVMBuildLoad2(h->b, h->i64, acc, "");
	LLVMSetVolatile(found, 1);
	return (struct hval){ found, 0 };
}

/* macaddr(addr): the 6 bytes at addr, in an integer's first ones; of a
 * byte array, its first 6. */
static struct hval macaddr(struct hctx *h, struct node *e)
{
	struct node *a = e->u.call.args;
	if ((a->type.kind == TY_STR && a->type.count) || type_is_bytes(a->type)) {
		struct hval b = hl_expr(h, a);
		if (!b.v)
			return (struct hval){ 0 };
		LLVMValueRef out = host_alloca_zero(h, 8, "mac");
		LLVMBuildMemCpy(h->b, out, 1, b.v, 1, host_const(h, 6));
		return (struct hval){ LLVMBuildLoad2(h->b, h->i64, out, ""), 0 };
	}
	LLVMValueRef addr = hl_expr_int(h, e->u.call.args);
	if (!addr)
		return (struct hval){ 0 };
	LLVMValueRef out = host_alloca_zero(h, 8, "mac");
	LLVMValueRef args[] = { out, LLVMConstInt(h->i32, 6, false),
				LLVMBuildIntToPtr(h->b, addr, h->ptr, "") };
	host_helper(h, BPF_H_PROBE_READ_USER, h->i64, args, 3);
	return (struct hval){ LLVMBuildLoad2(h->b, h->i64, out, ""), 0 };
}

/* ntop([af,] addr): {u64 family, the integer's bytes, zeros}: INET_SIZE. */
static struct hval ntop(struct hctx *h, struct node *e)
{
	struct node *a = e->u.call.args, *x = e->u.call.nargs == 2 ? a->next : a;
	if (type_is_bytes(x->type)) { /* an array of 4 or 16 bytes: its size says */
		unsigned n = x->type.count == 16 ? 16 : 4;
		LLVMValueRef af = e->u.call.nargs == 2 ? hl_expr_int(h, a)
						       : host_const(h, n == 16 ? 10 : 2);
		struct hval b = hl_expr(h, x);
		if (!af || !b.v)
			return (struct hval){ 0 };
		LLVMValueRef out = host_alloca_zero(h, INET_SIZE, "inet");
		LLVMBuildStore(h->b, af, out);
		LLVMBuildMemCpy(h->b, host_gep(h, out, 8), 1, b.v, 1, host_const(h, n));
		return (struct hval){ out, INET_SIZE };
	}
	LLVMValueRef af = e->u.call.nargs == 2 ? hl_expr_int(h, a) : host_const(h, 2);
	LLVMValueRef addr = hl_expr_int(h, x);
	if (!af || !addr)
		return (struct hval){ 0 };
	LLVMValueRef out = host_alloca_zero(h, INET_SIZE, "inet");
	LLVMBuildStore(h->b, af, out);
	LLVMBuildStore(h->b, addr, host_gep(h, out, 8));
	return (struct hval){ out, INET_SIZE };
}

/* pton("..."): the literal's address bytes (sema checked it). */
static struct hval pton(struct hctx *h, struct node *e)
{
	unsigned char b[16];
	unsigned n = sema_pton(e->u.call.args->u.str.s, b);
	LLVMValueRef out = host_alloca_zero(h, 16, "pton");
	for (unsigned i = 0; i < n; i++)
		LLVMBuildStore(h->b, LLVMConstInt(LLVMInt8TypeInContext(h->ctx), b[i], false),
			       host_gep(h, out, i));
	return (struct hval){ out, n };
}

/* path(P): the kernel's d_path of the struct path, given the kernel's
 * own pointer to it; empty where it fails (a path longer than the
 * string: d_path leaves a part of it). */
static struct hval path_call(struct hctx *h, struct node *e)
{
	LLVMValueRef p = hl_kernel_object(h, e->u.call.args);
	if (!p) {
		host_err(h, e->u.call.args, "path() takes a struct path reached from ctx through "
			 "the kernel's pointers (ctx->file->f_path)");
		return (struct hval){ 0 };
	}
	LLVMValueRef buf = host_alloca_zero(h, HOST_STR_MAX, "path");
	LLVMValueRef args[] = { LLVMBuildIntToPtr(h->b, p, h->ptr, ""), buf,
				host_const(h, HOST_STR_MAX) };
	LLVMValueRef rc = host_helper(h, BPF_H_D_PATH, h->i64, args, 3);
	LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "no_path");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "path_done");
	LLVMBuildCondBr(h->b, LLVMBuildICmp(h->b, LLVMIntSLT, rc, host_const(h, 0), ""), bad, done);
	LLVMPositionBuilderAtEnd(h->b, bad);
	host_zero(h, buf, HOST_STR_MAX, 8);
	LLVMBuildBr(h->b, done);
	LLVMPositionBuilderAtEnd(h->b, done);
	return (struct hval){ buf, HOST_STR_MAX };
}

bool hl_lib_call(struct hctx *h, struct node *e, struct hval *r)
{
	const char *fn = e->u.call.name;
	struct node *a = e->u.call.args;
	if (!strcmp(fn, "bswap"))
		*r = bswap(h, e);
	else if (!strcmp(fn, "buf"))
		*r = hl_buf(h, e, false);
	else if (!strcmp(fn, "strncmp"))
		*r = strncmp_call(h, e);
	else if (!strcmp(fn, "macaddr"))
		*r = macaddr(h, e);
	else if (!strcmp(fn, "strerror") || !strcmp(fn, "cgroup_path")) /* printing writes it */
		*r = (struct hval){ hl_expr_int(h, a), 0 };
	else if (!strcmp(fn, "strcontains"))
		*r = strcontains(h, e);
	else if (!strcmp(fn, "path"))
		*r = path_call(h, e);
	else if (!strcmp(fn, "ntop"))
		*r = ntop(h, e);
	else if (!strcmp(fn, "pton"))
		*r = pton(h, e);
	else if (!strcmp(fn, "kptr") || !strcmp(fn, "uptr")) /* the value itself */
		*r = hl_expr(h, a);
	else if (!strcmp(fn, "reg")) /* sema checked the name and the probe */
		*r = (struct hval){ hl_reg(h, (unsigned)sema_reg_offset(a->u.str.s)), 0 };
	else if (!strcmp(fn, "strftime")) /* the time; its format is in the type */
		*r = (struct hval){ hl_expr_int(h, a->next), 0 };
	else
		return false;
	return true;
}
