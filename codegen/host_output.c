/* Calls used as statements: output records (printf, exit, print, clear,
 * zero, time) written to the ring buffer for the host to act on, map
 * deletes, and policy actions (kfuncs). */
#include <string.h>

#include "host_priv.h"
#include "sema.h"

/* An object table of n elements of size bytes with room for one more:
 * the same one, or a copy twice its size once n reaches 16, 32, ... (a
 * copy per 16 was quadratic in printf() calls). */
static void *room_for_one(struct arena *a, void *v, int n, size_t size)
{
	if (n != 0 && (n < 16 || (n & (n - 1))))
		return v;
	size_t cap = n ? 2 * (size_t)n : 16;
	void *nv = arena_zalloc(a, size * cap);
	if (n)
		memcpy(nv, v, size * (size_t)n);
	return nv;
}

static struct host_fmt *new_fmt(struct hctx *h)
{
	struct host_obj *o = h->obj;
	o->fmts = room_for_one(&o->arena, o->fmts, o->nfmts, sizeof(*o->fmts));
	return &o->fmts[o->nfmts++];
}

/* An iterator's seq file (what reading it returns), ctx->meta->seq,
 * loaded directly: its helpers take only the kernel's own pointer. */
static LLVMValueRef seq_file(struct hctx *h)
{
	LLVMValueRef meta = LLVMBuildIntToPtr(h->b, hl_ctx_word(h, 0), h->ptr, "meta");
	return LLVMBuildLoad2(h->b, h->i64, meta, "seq");
}

/* A pinned iterator runs when its file is read, gpux gone by then:
 * only its printf() writes there, as text (seq_printf below). */
static bool pinned(const struct hctx *h)
{
	return h->at && h->at->prov->attach == ATTACH_ITER && h->at->filter;
}

/* An iterator's records go to its seq file: the kernel runs the
 * program only as fast as they are read. Each is its length, then its
 * bytes (attach/kattach_iter.c reads them). */
static void emit_seq(struct hctx *h, LLVMValueRef rec, unsigned size)
{
	LLVMValueRef seq = seq_file(h);
	LLVMValueRef len = host_alloca(h, 8, "reclen");
	LLVMBuildStore(h->b, host_const(h, size), len);
	LLVMValueRef largs[] = { seq, len, host_const(h, 8) };
	host_helper(h, BPF_H_SEQ_WRITE, h->i64, largs, 3);
	LLVMValueRef rargs[] = { seq, rec, host_const(h, size) };
	host_helper(h, BPF_H_SEQ_WRITE, h->i64, rargs, 3);
}

static void emit(struct hctx *h, LLVMValueRef rec, unsigned size)
{
	if (pinned(h))
		return; /* no one reads records there (sema refused what writes them) */
	if (h->at && h->at->prov->attach == ATTACH_ITER) {
		emit_seq(h, rec, size);
		return;
	}
	LLVMValueRef args[] = { h->events, rec, host_const(h, size), host_const(h, 0) };
	host_helper(h, BPF_H_RINGBUF_OUTPUT, h->i64, args, 4);
}

/* The kernel's bpf_seq_printf takes at most 12 arguments. */
#define SEQ_ARGS 12

/* One conversion of printf's format (s[i] is its '%', as printf()
 * reads it) in the kernel's words into out at *o: flags and width as
 * written, no precision nor '#'; every integer 64 bits (ll); %p as
 * bpftrace prints it, 0x and hex. The index past it, or 0 where the
 * kernel has no such conversion. */
static size_t seq_conversion(const char *s, size_t len, size_t i, char *out, size_t *o,
			     char *conv)
{
	struct printf_spec sp = sema_printf_spec(s + i + 1, len - i - 1);
	if (!sp.len || sp.alt || sp.precision || !strchr("diuxXcsp", sp.conv))
		return 0;
	*conv = sp.conv;
	if (*conv == 'p') {
		memcpy(out + *o, "0x", 2);
		*o += 2;
	}
	out[(*o)++] = '%';
	memcpy(out + *o, s + i + 1, sp.flags_width);
	*o += sp.flags_width;
	if (strchr("diuxXp", *conv)) {
		memcpy(out + *o, "ll", 2);
		*o += 2;
	}
	out[(*o)++] = *conv == 'p' ? 'x' : *conv;
	return i + 1 + sp.len;
}

/* A pinned iterator's printf(): the text, formatted by the kernel's
 * bpf_seq_printf into the file its readers read. Each argument is 8
 * bytes of the helper's array: an integer's value, a string's address
 * (the kernel copies it). */
static void seq_printf(struct hctx *h, struct node *call)
{
	struct node *fmt = call->u.call.args, *a = fmt->next;
	const char *s = fmt->u.str.s;
	size_t len = fmt->u.str.len, o = 0;
	char *out = arena_alloc(&h->obj->arena, 3 * len + 8);
	LLVMValueRef vals[SEQ_ARGS];
	int n = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '%') {
			out[o++] = s[i];
			continue;
		}
		if (i + 1 < len && s[i + 1] == '%') {
			out[o++] = '%';
			out[o++] = '%';
			i++;
			continue;
		}
		char conv = 0;
		size_t next = seq_conversion(s, len, i, out, &o, &conv);
		if (!next) {
			host_err(h, fmt, "a pinned iterator's printf() is the kernel's seq_printf: "
				 "'%.*s...' has no conversion there (it takes flags, a width and "
				 "d, i, u, x, X, c, s or p)", (int)(len - i < 6 ? len - i : 6), s + i);
			return;
		}
		i = next - 1;
		if (!a)
			return; /* sema said so */
		if (n == SEQ_ARGS) {
			host_err(h, a, "a pinned iterator's printf() takes at most %d arguments "
				 "(the kernel's seq_printf)", SEQ_ARGS);
			return;
		}
		bool text = conv == 's';
		if (text ? a->type.kind != TY_STR
			 : a->type.kind != TY_INT && a->type.kind != TY_POINTER &&
				   a->type.kind != TY_PTR) {
			host_err(h, a, "a pinned iterator's printf() prints %s with the kernel's "
				 "seq_printf: gpux, which formats other values, is not there when "
				 "the file is read", text ? "strings" : "integers and addresses");
			return;
		}
		struct hval v = hl_expr(h, a);
		if (!v.v)
			return;
		vals[n++] = v.ssize ? LLVMBuildPtrToInt(h->b, v.v, h->i64, "") : v.v;
		a = a->next;
	}
	out[o] = '\0';
	LLVMValueRef data = LLVMConstNull(h->ptr);
	if (n) {
		data = host_alloca(h, 8 * (unsigned)n, "seqargs");
		for (int k = 0; k < n; k++)
			LLVMBuildStore(h->b, vals[k], host_gep(h, data, 8 * (unsigned)k));
	}
	LLVMValueRef args[] = { seq_file(h), hl_str_literal(h, out, o, (unsigned)o + 1),
				host_const(h, o + 1), data, host_const(h, 8 * (unsigned)n) };
	host_helper(h, BPF_H_SEQ_PRINTF, h->i64, args, 5);
}

static LLVMValueRef header(struct hctx *h, unsigned size, enum host_rec_kind kind,
			   unsigned id)
{
	LLVMValueRef rec = host_alloca(h, size, "rec");
	uint64_t hdr = (uint64_t)kind | (uint64_t)id << 32; /* little endian */
	LLVMBuildStore(h->b, host_const(h, hdr), rec);
	return rec;
}

/* -k reports failed map updates and deletes, -kk memory reads too, by
 * the names bpftrace's warnings give them. */
static const char *checked_helper(int id, int level)
{
	switch (id) {
	case BPF_H_MAP_UPDATE: return "map_update_elem";
	case BPF_H_MAP_DELETE: return "map_delete_elem";
	case BPF_H_PROBE_READ: return level > 1 ? "probe_read" : NULL;
	case BPF_H_PROBE_READ_USER: return level > 1 ? "probe_read_user" : NULL;
	case BPF_H_PROBE_READ_KERNEL: return level > 1 ? "probe_read_kernel" : NULL;
	case BPF_H_PROBE_READ_USER_STR: return level > 1 ? "probe_read_user_str" : NULL;
	case BPF_H_PROBE_READ_KERNEL_STR: return level > 1 ? "probe_read_kernel_str" : NULL;
	default: return NULL;
	}
}

void hl_site_begin(struct hctx *h, const struct node *e, struct span *was, bool *had)
{
	*was = h->site;
	*had = h->has_site;
	if (!h->opts->helper_check)
		return;
	h->has_site = true;
	/* as bpftrace's: an aggregation's call, else an assignment's '=';
	 * a dereference's '*' */
	h->site = e->kind != N_ASSIGN ? e->span
		  : e->u.assign.value->type.kind == TY_AGG ? e->u.assign.value->span
							  : e->u.assign.op_span;
	if (e->kind == N_UNOP && e->u.unop.op == OP_DEREF) {
		h->site.last_line = h->site.first_line;
		h->site.last_column = h->site.first_column + 1;
	}
}

void hl_site_end(struct hctx *h, struct span was, bool had)
{
	h->site = was;
	h->has_site = had;
}

/* The record saying that site's call failed, when failed (i1) holds:
 * value is what it returned (0 for a lookup's NULL). */
static void failed_record(struct hctx *h, const char *name, LLVMValueRef failed,
			  LLVMValueRef value)
{
	struct host_obj *o = h->obj;
	o->sites = room_for_one(&o->arena, o->sites, o->nsites, sizeof(*o->sites));
	o->sites[o->nsites] = (struct host_site){ name, h->site };
	unsigned site = (unsigned)o->nsites++;
	LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "helper_failed");
	LLVMBasicBlockRef on = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "helper_ok");
	LLVMBuildCondBr(h->b, failed, bad, on);
	LLVMPositionBuilderAtEnd(h->b, bad);
	bool had = h->has_site;
	h->has_site = false; /* the record's own output is not checked */
	LLVMValueRef rec = header(h, 16, HOST_REC_HELPER_ERR, site);
	LLVMBuildStore(h->b, value, host_gep(h, rec, 8));
	emit(h, rec, 16);
	h->has_site = had;
	LLVMBuildBr(h->b, on);
	LLVMPositionBuilderAtEnd(h->b, on);
}

void hl_helper_checked(struct hctx *h, int id, LLVMValueRef ret)
{
	const char *name = checked_helper(id, h->opts->helper_check);
	if (name)
		failed_record(h, name, LLVMBuildICmp(h->b, LLVMIntSLT, ret, host_const(h, 0), ""),
			      ret);
}

void hl_lookup_checked(struct hctx *h, LLVMValueRef p)
{
	if (h->has_site && h->opts->helper_check > 1)
		failed_record(h, "map_lookup_elem", LLVMBuildIsNull(h->b, p, ""), host_const(h, 0));
}

/* printf(fmt, args...): {hdr, args}; also print(value) with a made-up
 * format. Each argument takes 8 bytes, a string its size rounded up.
 * The record's format, or NULL after an error. */
static struct host_fmt *rec_printf(struct hctx *h, const char *fmt, struct node *args,
				   int nargs)
{
	struct hval vals[64];
	struct host_fmt_arg *fa = arena_zalloc(&h->obj->arena, sizeof(*fa) * (size_t)(nargs + 1));
	unsigned off = 8;
	int i = 0;
	for (struct node *a = args; a && i < 64; a = a->next, i++) {
		struct type t = a->type;
		/* a buf() here is as big as its length: the record says so */
		bool buf = a->kind == N_CALL && t.kind == TY_BUF && !strcmp(a->u.call.name, "buf");
		vals[i] = buf ? hl_buf(h, a, true) : hl_expr(h, a);
		if (!vals[i].v)
			return NULL;
		unsigned sz = vals[i].ssize ? (vals[i].ssize + 7) & ~7u : 8;
		fa[i] = (struct host_fmt_arg){ t, off, sz };
		off += sz;
	}
	if (off > 480) {
		host_err(h, args, "printf() arguments take %u bytes; BPF stack allows 480", off);
		return NULL;
	}
	struct host_fmt *f = new_fmt(h);
	*f = (struct host_fmt){ .fmt = fmt, .args = fa, .nargs = nargs, .size = off,
				.kind = HOST_FMT_PRINTF };
	LLVMValueRef rec = header(h, off, HOST_REC_PRINTF, (unsigned)(f - h->obj->fmts));
	for (int k = 0; k < i; k++) {
		LLVMValueRef dst = host_gep(h, rec, fa[k].offset);
		if (vals[k].ssize)
			hl_str_copy(h, dst, fa[k].size, vals[k]);
		else
			LLVMBuildStore(h->b, vals[k].v, dst);
	}
	emit(h, rec, off);
	return f;
}

/* join(argv[, delim]): the strings of a NULL-ended array of pointers in
 * the traced process, up to HOST_JOIN_MAX, into the per-CPU record of
 * HOST_JOIN_MAP and out through the ring buffer; gpux joins them. */
static void join(struct hctx *h, struct node *call)
{
	struct node *a = call->u.call.args;
	LLVMValueRef arr = hl_expr_int(h, a);
	if (!arr)
		return;
	struct host_fmt *f = new_fmt(h);
	*f = (struct host_fmt){ .fmt = a->next ? a->next->u.str.s : " ", .size = 0 };
	LLVMValueRef key = host_alloca_zero(h, 4, "jkey");
	LLVMValueRef largs[] = { h->join, key };
	LLVMValueRef rec = host_helper(h, BPF_H_MAP_LOOKUP, h->ptr, largs, 2);
	LLVMBasicBlockRef fill = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "join_fill");
	LLVMBasicBlockRef send = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "join_send");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "join_done");
	LLVMBuildCondBr(h->b, LLVMBuildIsNull(h->b, rec, ""), done, fill);
	LLVMPositionBuilderAtEnd(h->b, fill);
	uint64_t hdr = (uint64_t)HOST_REC_JOIN | (uint64_t)(f - h->obj->fmts) << 32;
	LLVMBuildStore(h->b, host_const(h, hdr), rec);
	LLVMValueRef ptr = host_alloca(h, 8, "jptr");
	for (unsigned i = 0; i < HOST_JOIN_MAX; i++) {
		LLVMBuildStore(h->b, host_const(h, i), host_gep(h, rec, 8));
		host_zero(h, ptr, 8, 8);
		LLVMValueRef at = LLVMBuildAdd(h->b, arr, host_const(h, 8 * (uint64_t)i), "");
		LLVMValueRef rargs[] = { ptr, LLVMConstInt(h->i32, 8, false),
					 LLVMBuildIntToPtr(h->b, at, h->ptr, "") };
		host_helper(h, BPF_H_PROBE_READ_USER, h->i64, rargs, 3);
		LLVMValueRef p = LLVMBuildLoad2(h->b, h->i64, ptr, "");
		LLVMBasicBlockRef more = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "join_str");
		LLVMBuildCondBr(h->b, LLVMBuildICmp(h->b, LLVMIntEQ, p, host_const(h, 0), ""),
				send, more);
		LLVMPositionBuilderAtEnd(h->b, more);
		LLVMValueRef sargs[] = { host_gep(h, rec, 16 + i * HOST_JOIN_STR),
					 LLVMConstInt(h->i32, HOST_JOIN_STR, false),
					 LLVMBuildIntToPtr(h->b, p, h->ptr, "") };
		host_helper(h, BPF_H_PROBE_READ_USER_STR, h->i64, sargs, 3);
	}
	LLVMBuildStore(h->b, host_const(h, HOST_JOIN_MAX), host_gep(h, rec, 8));
	LLVMBuildBr(h->b, send);
	LLVMPositionBuilderAtEnd(h->b, send);
	emit(h, rec, HOST_JOIN_BYTES);
	LLVMBuildBr(h->b, done);
	LLVMPositionBuilderAtEnd(h->b, done);
}

static void rec_map(struct hctx *h, struct node *call, enum host_rec_kind kind)
{
	struct node *m = call->u.call.args;
	struct hmap *hm = hl_map_of(h, m);
	if (!hm)
		return;
	LLVMValueRef rec = header(h, 24, kind, (unsigned)hm->index);
	int64_t v[2] = { 0, 0 };
	int i = 0;
	for (struct node *a = m->next; a && i < 2; a = a->next, i++)
		host_const_int(a, &v[i]);
	LLVMBuildStore(h->b, host_const(h, (uint64_t)v[0]), host_gep(h, rec, 8));
	LLVMBuildStore(h->b, host_const(h, (uint64_t)v[1]), host_gep(h, rec, 16));
	emit(h, rec, 24);
}

static void delete_elem(struct hctx *h, struct node *call)
{
	struct node *m = call->u.call.args;
	struct hmap *hm = hl_map_of(h, m);
	if (!hm)
		return;
	if (hm->pub->bucket) {
		host_err(h, m, "delete() of one %s() key is not supported in host probes; use clear()",
			 agg_name(hm->pub->value.agg));
		return;
	}
	LLVMValueRef key = hl_map_key(h, hm, m, NULL);
	if (key)
		hl_map_delete(h, hm, key);
}

/* prefetch/evict/advise in cuda: probes: a call the runtime's VM serves
 * (abi/cuda_actions.h); its status is the runtime's to count. */
static void mem_action(struct hctx *h, struct node *call, const struct action *act)
{
	static const int ids[] = { [ACT_PREFETCH] = GPUX_H_PREFETCH,
				   [ACT_EVICT] = GPUX_H_EVICT, [ACT_ADVISE] = GPUX_H_ADVISE };
	LLVMValueRef args[3];
	int n = 0;
	h->obj->tracks_allocs = true;
	for (struct node *a = call->u.call.args; a && n < 3; a = a->next)
		if (!(args[n++] = hl_expr_int(h, a)))
			return;
	host_helper(h, ids[act->id], h->i64, args, n);
}

/* debugf(fmt, ...): bpf_trace_printk with the format on the stack and
 * each argument a word, a string by its address (sema: at most 3). */
static void debugf(struct hctx *h, struct node *call)
{
	struct node *fmt = call->u.call.args;
	unsigned size = (unsigned)fmt->u.str.len + 1;
	LLVMValueRef args[5] = { hl_str_literal(h, fmt->u.str.s, fmt->u.str.len, size),
				 LLVMConstInt(h->i32, size, false) };
	int n = 2;
	for (struct node *a = fmt->next; a && n < 5; a = a->next, n++) {
		struct hval v = hl_expr(h, a);
		if (!v.v)
			return;
		args[n] = v.ssize ? LLVMBuildPtrToInt(h->b, v.v, h->i64, "") : v.v;
	}
	host_helper(h, BPF_H_TRACE_PRINTK, h->i64, args, n);
}

void hl_call_stmt(struct hctx *h, struct node *call)
{
	const char *name = call->u.call.name;
	struct node *a = call->u.call.args;
	if (catalog_action(name)) {
		const struct action *act = call->u.call.fn;
		if (act->id == ACT_PREFETCH || act->id == ACT_EVICT || act->id == ACT_ADVISE)
			mem_action(h, call, act);
		else
			hl_kfunc_call(h, call);
	} else if (!strcmp(name, "debugf")) {
		debugf(h, call);
	} else if (!strcmp(name, "printf") && pinned(h)) {
		seq_printf(h, call);
	} else if (!strcmp(name, "printf") || !strcmp(name, "cat") || !strcmp(name, "system")) {
		struct host_fmt *f = rec_printf(h, a->u.str.s, a->next, call->u.call.nargs - 1);
		if (f && name[0] != 'p')
			f->kind = name[0] == 'c' ? HOST_FMT_CAT : HOST_FMT_SYSTEM;
	} else if (!strcmp(name, "print")) {
		if (a->kind == N_MAP && !a->u.map.nkeys) {
			rec_map(h, call, HOST_REC_PRINT);
		} else {
			bool u = (a->type.kind == TY_INT && !a->type.is_signed) ||
				 a->type.kind == TY_POINTER;
			struct host_fmt *f = rec_printf(h, a->type.kind == TY_STR ||
							type_is_bytes(a->type) ||
							type_prints_as_text(a->type) ||
							a->type.kind == TY_INET ||
							a->type.kind == TY_STACK ||
							a->type.kind == TY_KSYM ||
							a->type.kind == TY_USYM ? "%s\n"
							: u ? "%llu\n" : "%lld\n", a, 1);
			if (f)
				f->kind = HOST_FMT_VALUE;
		}
	} else if (!strcmp(name, "clear")) {
		rec_map(h, call, HOST_REC_CLEAR);
	} else if (!strcmp(name, "zero")) {
		rec_map(h, call, HOST_REC_ZERO);
	} else if (!strcmp(name, "delete")) {
		delete_elem(h, call);
	} else if (!strcmp(name, "exit")) {
		LLVMValueRef st = a ? hl_expr_int(h, a) : host_const(h, 0);
		if (!st)
			return;
		LLVMValueRef rec = header(h, 16, HOST_REC_EXIT, 0);
		LLVMBuildStore(h->b, st, host_gep(h, rec, 8));
		emit(h, rec, 16);
		/* as in bpftrace, the rest of the probe does not run */
		hl_leave(h, host_const(h, 0));
		LLVMPositionBuilderAtEnd(h->b, LLVMAppendBasicBlockInContext(h->ctx, h->fn,
									     "after_exit"));
	} else if (!strcmp(name, "join")) {
		join(h, call);
	} else if (!strcmp(name, "signal")) {
		/* bpf_send_signal(sig): sema checked the name or number */
		LLVMValueRef sig = a->kind == N_STR
					   ? host_const(h, (uint64_t)sema_signal_number(a->u.str.s))
					   : hl_expr_int(h, a);
		if (sig)
			host_helper(h, BPF_H_SEND_SIGNAL, h->i64, &sig, 1);
	} else if (!strcmp(name, "unwatch")) {
		LLVMValueRef addr = hl_expr_int(h, a);
		if (addr) {
			LLVMValueRef rec = header(h, 16, HOST_REC_UNWATCH, 0);
			LLVMBuildStore(h->b, addr, host_gep(h, rec, 8));
			emit(h, rec, 16);
		}
	} else if (!strcmp(name, "time")) {
		struct host_fmt *f = new_fmt(h);
		*f = (struct host_fmt){ .fmt = a ? a->u.str.s : "%H:%M:%S\n", .size = 8 };
		LLVMValueRef rec = header(h, 8, HOST_REC_TIME, (unsigned)(f - h->obj->fmts));
		emit(h, rec, 8);
	} else {
		hl_expr(h, call);
	}
}
