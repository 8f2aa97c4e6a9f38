/* Reads through pointers in host probes: '*p', 'p->f', 'p[i]' and the
 * fields and elements of what they reach. A chain of them is one
 * address computation and one probe-read of the final value, as the C
 * types lay it out; '.' and '[]' on a value already read (a variable,
 * a map's value) take its bytes at the offset instead. A read that
 * fails leaves zeros, as in bpftrace. */
#include "host_priv.h"

static unsigned elem_size(struct type t)
{
	unsigned n = t.inner && t.inner->kind != TY_VOID ? type_mem_size(*t.inner) : 1;
	return n ? n : 1;
}

/* The field e (base->name or base.name) names. */
static const struct record_field *field_of(const struct node *e)
{
	const struct node *b = e->u.field.base;
	const struct record *r = b->type.kind == TY_POINTER ? b->type.inner->rec
			       : b->type.kind == TY_RECORD ? b->type.rec : NULL;
	return record_field(r, e->u.field.name);
}

/* The address e reads from, or NULL when e is a value, not memory. */
static LLVMValueRef mem_addr(struct hctx *h, struct node *e)
{
	switch (e->kind) {
	case N_UNOP:
		return e->u.unop.op == OP_DEREF ? hl_expr_int(h, e->u.unop.operand) : NULL;
	case N_FIELD: {
		struct node *b = e->u.field.base;
		const struct record_field *f = field_of(e);
		if (!f)
			return NULL;
		LLVMValueRef base = b->type.kind == TY_POINTER ? hl_expr_int(h, b) : mem_addr(h, b);
		return base ? LLVMBuildAdd(h->b, base, host_const(h, f->offset), "") : NULL;
	}
	case N_BINOP: {
		struct node *b = e->u.binop.lhs;
		if (e->u.binop.op != OP_INDEX)
			return NULL;
		LLVMValueRef base = b->type.kind == TY_POINTER ? hl_expr_int(h, b) : mem_addr(h, b);
		if (!base)
			return NULL;
		LLVMValueRef i = hl_expr_int(h, e->u.binop.rhs);
		if (!i)
			return NULL;
		LLVMValueRef off = LLVMBuildMul(h->b, i, host_const(h, elem_size(b->type)), "");
		return LLVMBuildAdd(h->b, base, off, "");
	}
	default:
		return NULL;
	}
}

/* Whether e denotes memory (then mem_addr() gives its address). */
static bool is_memory(const struct node *e)
{
	switch (e->kind) {
	case N_UNOP:
		return e->u.unop.op == OP_DEREF;
	case N_FIELD:
		return e->u.field.base->type.kind == TY_POINTER ||
		       (e->u.field.base->type.kind == TY_RECORD && is_memory(e->u.field.base));
	case N_BINOP:
		return e->u.binop.op == OP_INDEX &&
		       (e->u.binop.lhs->type.kind == TY_POINTER || is_memory(e->u.binop.lhs));
	default:
		return false;
	}
}

/* The C type of the memory e reads (its value's type may differ: a
 * char array reads as a string). */
static struct type mem_type(const struct node *e)
{
	switch (e->kind) {
	case N_UNOP:
		return *e->u.unop.operand->type.inner;
	case N_FIELD: {
		const struct record_field *f = field_of(e);
		return f ? f->type : e->type;
	}
	default:
		return *e->u.binop.lhs->type.inner;
	}
}

/* The pointer a read of memory e goes through. */
static const struct node *read_through(const struct node *e)
{
	const struct node *b = e->kind == N_UNOP ? e->u.unop.operand
			     : e->kind == N_FIELD ? e->u.field.base : e->u.binop.lhs;
	return b->type.kind == TY_POINTER || !is_memory(b) ? b : read_through(b);
}

/* A kernel type's pointer reads the kernel from any probe. Otherwise a
 * tracepoint's pointers may be the kernel's or, for system calls, the
 * caller's: the helper that reads either (x86-64 keeps the two apart)
 * serves both, as bpftrace's reads do. */
static int read_helper(struct hctx *h, const struct node *e)
{
	if (read_through(e)->type.kernel_mem)
		return BPF_H_PROBE_READ_KERNEL;
	return h->at && h->at->prov && h->at->prov->user_memory ? BPF_H_PROBE_READ_USER
								: BPF_H_PROBE_READ;
}

/* A statement's temporary of bytes (a multiple of 8) whose first n
 * bytes the caller writes next: the rest zeroed here. Pooled, so that
 * reads in different statements share the BPF stack. */
static LLVMValueRef temp_after(struct hctx *h, unsigned bytes, unsigned n, const char *name)
{
	LLVMValueRef t = host_alloca(h, bytes, name);
	unsigned from = n & ~7u;
	if (from < bytes)
		host_zero(h, host_gep(h, t, from), bytes - from, 8);
	return t;
}

/* A value of type vt (memory type mt) from the bytes at p, which hold
 * at least its size: integers extend, the rest are copied. */
static struct hval value_at(struct hctx *h, struct type vt, struct type mt, LLVMValueRef p)
{
	if (vt.kind == TY_INT) {
		LLVMTypeRef it = LLVMIntTypeInContext(h->ctx, vt.bits);
		LLVMValueRef v = LLVMBuildLoad2(h->b, it, p, "");
		LLVMSetAlignment(v, 1);
		if (vt.bits < 64)
			v = vt.is_signed ? LLVMBuildSExt(h->b, v, h->i64, "")
					 : LLVMBuildZExt(h->b, v, h->i64, "");
		return (struct hval){ v, 0 };
	}
	if (vt.kind == TY_POINTER) {
		LLVMValueRef v = LLVMBuildLoad2(h->b, h->i64, p, "");
		LLVMSetAlignment(v, 1);
		return (struct hval){ v, 0 };
	}
	/* strings get a NUL after the array; records and arrays their
	 * size rounded to 8, the layout maps and records keep */
	unsigned n = type_mem_size(mt);
	unsigned size = vt.kind == TY_STR ? n + 1 : tuple_size(vt);
	LLVMValueRef out = temp_after(h, (size + 7) & ~7u, n, "memval");
	if (n)
		LLVMBuildMemCpy(h->b, out, 1, p, 1, host_const(h, n));
	return (struct hval){ out, size };
}

/* A bit-field's bits of v, the bytes around it as an integer, extended
 * as its type says. */
static struct hval bit_field(struct hctx *h, struct node *e, struct hval v)
{
	const struct record_field *f = field_of(e);
	if (!v.v)
		return v;
	/* to the top, then back down. The bits are read as bpftrace 0.17
	 * reads them, into the declared integer without their own sign
	 * (a signed 'short b:8' holding 217 is 217); only a field as wide
	 * as its type keeps the type's sign */
	unsigned up = 64 - f->bit_shift - f->bit_width;
	bool sign = f->type.is_signed && f->bit_width == f->type.bits;
	LLVMValueRef x = LLVMBuildShl(h->b, v.v, host_const(h, up), "");
	x = sign ? LLVMBuildAShr(h->b, x, host_const(h, up + f->bit_shift), "")
		 : LLVMBuildLShr(h->b, x, host_const(h, up + f->bit_shift), "");
	return (struct hval){ x, 0 };
}

struct hval hl_memory(struct hctx *h, struct node *e)
{
	struct type mt = mem_type(e);
	const struct record_field *bf = e->kind == N_FIELD ? field_of(e) : NULL;
	if (bf && bf->bit_width) /* the bytes around the bit-field */
		mt = TYPE_INT(8 * bf->bit_bytes, bf->type.is_signed);
	unsigned n = type_mem_size(mt);
	if (is_memory(e)) {
		LLVMValueRef addr = mem_addr(h, e);
		if (!addr)
			return (struct hval){ 0 };
		if (n > 512 - 64) {
			host_err(h, e, "'%s' is %u bytes, more than a probe can read at once",
				 mt.kind == TY_RECORD && mt.rec ? mt.rec->name : "this value", n);
			return (struct hval){ 0 };
		}
		bool bytes = type_is_bytes(e->type);
		unsigned size = !bytes ? 8 : e->type.kind == TY_STR ? n + 1 : tuple_size(e->type);
		/* bytes are read where the value lives; zeros past them */
		LLVMValueRef buf = temp_after(h, (size + 7) & ~7u, n, "mem");
		LLVMValueRef args[] = { buf, LLVMConstInt(h->i32, n, false),
					LLVMBuildIntToPtr(h->b, addr, h->ptr, "") };
		host_helper(h, read_helper(h, e), h->i64, args, 3);
		if (bytes)
			return (struct hval){ buf, size };
		return bf && bf->bit_width ? bit_field(h, e, value_at(h, mt, mt, buf))
					   : value_at(h, e->type, mt, buf);
	}
	/* a field or element of a value held in bytes */
	struct node *b = e->kind == N_FIELD ? e->u.field.base : e->u.binop.lhs;
	struct hval base = hl_expr(h, b);
	if (!base.v)
		return base;
	unsigned off = 0;
	if (e->kind == N_FIELD) {
		const struct record_field *f = field_of(e);
		if (!f)
			return (struct hval){ 0 };
		off = f->offset;
	} else {
		int64_t i;
		if (!host_const_int(e->u.binop.rhs, &i) || i < 0 || (uint64_t)i >= b->type.count) {
			host_err(h, e->u.binop.rhs, "an array held in a variable or map is indexed "
				 "with a constant within its bounds");
			return (struct hval){ 0 };
		}
		off = (unsigned)i * elem_size(b->type);
	}
	LLVMValueRef at = host_gep(h, base.v, off);
	return bf && bf->bit_width ? bit_field(h, e, value_at(h, mt, mt, at))
				   : value_at(h, e->type, mt, at);
}

LLVMValueRef hl_pointer_offset(struct hctx *h, struct node *ptr, LLVMValueRef n)
{
	return LLVMBuildMul(h->b, n, host_const(h, elem_size(ptr->type)), "");
}

/* ctx itself: the iterator's context record (the event names one). */
static bool is_ctx_record(const struct node *e)
{
	return e->kind == N_IDENT && e->u.ident.kind == ID_BUILTIN && e->type.kind == TY_POINTER &&
	       e->u.ident.builtin && e->u.ident.builtin->regs_only;
}

static LLVMValueRef object_addr(struct hctx *h, struct node *e);

/* The pointer e holds, loaded directly: the context's words where the
 * kernel checks them, then the kernel's own pointers, which the
 * verifier types by BTF (a read through a helper gives a number). */
static LLVMValueRef object_ptr(struct hctx *h, struct node *e)
{
	if (e->kind == N_FIELD && e->u.field.base->type.kind == TY_POINTER &&
	    is_ctx_record(e->u.field.base)) {
		const struct record_field *f = field_of(e);
		return f && type_mem_size(f->type) == 8 ? hl_ctx_word(h, f->offset) : NULL;
	}
	LLVMValueRef a = object_addr(h, e);
	return a ? LLVMBuildLoad2(h->b, h->i64, LLVMBuildIntToPtr(h->b, a, h->ptr, ""), "") : NULL;
}

static LLVMValueRef object_addr(struct hctx *h, struct node *e)
{
	if (e->kind != N_FIELD || e->u.field.index >= 0)
		return NULL;
	const struct record_field *f = field_of(e);
	struct node *b = e->u.field.base;
	if (!f || f->bit_width)
		return NULL;
	LLVMValueRef base = b->type.kind == TY_POINTER ? object_ptr(h, b) : object_addr(h, b);
	return base ? LLVMBuildAdd(h->b, base, host_const(h, f->offset), "") : NULL;
}

LLVMValueRef hl_kernel_object(struct hctx *h, struct node *e)
{
	return object_addr(h, e);
}
