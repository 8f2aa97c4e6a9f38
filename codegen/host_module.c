/* The host lowering's driver: one LLVM context and module per compile,
 * the BPF target, the passes (host_passes.c) and the object in memory.
 * Every LLVM object made here is disposed here, whatever happened. */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "host_priv.h"

struct diag *host_err(struct hctx *h, const struct node *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	h->errors++;
	if (n && diags_has_error_at(h->diags, n->span))
		return NULL;
	return n ? diag_error(h->diags, n->span, "%s", msg)
		 : diag_error_nospan(h->diags, "%s", msg);
}

/* Debug locations make the BPF backend's line info: -d bpf and the
 * kernel verifier's log both show the source line. */
void host_loc(struct hctx *h, const struct node *n)
{
	if (!h->sp || !n)
		return;
	LLVMMetadataRef loc = LLVMDIBuilderCreateDebugLocation(
		h->ctx, (unsigned)n->span.first_line,
		(unsigned)n->span.first_column, h->sp, NULL);
	LLVMSetCurrentDebugLocation2(h->b, loc);
}

/* Stack slots live in the entry block so the backend lays them out once;
 * 8-byte alignment lets the backend use u64 stores on them. */
static LLVMValueRef entry_alloca(struct hctx *h, unsigned bytes, const char *name)
{
	LLVMBuilderRef eb = LLVMCreateBuilderInContext(h->ctx);
	LLVMValueRef first = LLVMGetFirstInstruction(h->entry);
	if (first)
		LLVMPositionBuilderBefore(eb, first);
	else
		LLVMPositionBuilderAtEnd(eb, h->entry);
	LLVMTypeRef t = LLVMArrayType(h->i8, bytes ? bytes : 1);
	LLVMValueRef a = LLVMBuildAlloca(eb, t, name);
	LLVMSetAlignment(a, 8);
	LLVMDisposeBuilder(eb);
	return a;
}

/* Temporaries (keys, values, strings, records) come from a pool that
 * every statement starts afresh: what one statement used is dead in the
 * next, and without this the 512-byte BPF stack runs out quickly. */
LLVMValueRef host_alloca(struct hctx *h, unsigned bytes, const char *name)
{
	struct hslot *best = NULL;
	for (struct hslot *s = h->slots; s; s = s->next)
		if (!s->busy && s->size >= bytes && (!best || s->size < best->size))
			best = s;
	if (!best) {
		best = arena_zalloc(&h->obj->arena, sizeof(*best));
		best->a = entry_alloca(h, bytes, name);
		best->size = bytes;
		best->next = h->slots;
		h->slots = best;
	}
	best->busy = true;
	return best->a;
}

void host_temps_free(struct hctx *h)
{
	for (struct hslot *s = h->slots; s; s = s->next)
		s->busy = false;
}

/* A memset of 1, 2, 4 or 8 bytes is the one store InstCombine would
 * turn it into; written as that store from the start, since rewriting
 * one in a huge probe revisits the pooled slot's thousands of uses each
 * time (quadratic: 20 s of InstCombine at 50,000 statements). */
static void zero_with(struct hctx *h, LLVMBuilderRef b, LLVMValueRef p, unsigned bytes,
		      unsigned align)
{
	if (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8) {
		LLVMTypeRef t = LLVMIntTypeInContext(h->ctx, bytes * 8);
		LLVMSetAlignment(LLVMBuildStore(b, LLVMConstInt(t, 0, false), p), align);
		return;
	}
	LLVMBuildMemSet(b, p, LLVMConstInt(h->i8, 0, false), host_const(h, bytes), align);
}

void host_zero(struct hctx *h, LLVMValueRef p, unsigned bytes, unsigned align)
{
	zero_with(h, h->b, p, bytes, align);
}

/* A variable's slot, not pooled, zeroed on entry: the verifier refuses reads of stack bytes
 * no path has written, which a variable set in one branch would be. */
LLVMValueRef host_alloca_zero(struct hctx *h, unsigned bytes, const char *name)
{
	LLVMValueRef a = entry_alloca(h, bytes, name);
	LLVMBuilderRef eb = LLVMCreateBuilderInContext(h->ctx);
	LLVMValueRef next = LLVMGetNextInstruction(a);
	if (next)
		LLVMPositionBuilderBefore(eb, next);
	else
		LLVMPositionBuilderAtEnd(eb, h->entry);
	zero_with(h, eb, a, bytes, 8);
	LLVMDisposeBuilder(eb);
	return a;
}

LLVMValueRef host_const(struct hctx *h, uint64_t v)
{
	return LLVMConstInt(h->i64, v, false);
}

/* A helper call is a call through the helper's id cast to a pointer,
 * which the BPF backend turns into `call ID`. */
LLVMValueRef host_helper(struct hctx *h, int id, LLVMTypeRef ret,
			 LLVMValueRef *args, int n)
{
	LLVMTypeRef params[5];
	for (int i = 0; i < n; i++)
		params[i] = LLVMTypeOf(args[i]);
	LLVMTypeRef ft = LLVMFunctionType(ret, params, (unsigned)n, false);
	LLVMValueRef callee = LLVMConstIntToPtr(host_const(h, (uint64_t)id), h->ptr);
	LLVMValueRef call = LLVMBuildCall2(h->b, ft, callee, args, (unsigned)n, "");
	if (h->has_site && h->opts->helper_check && ret == h->i64)
		hl_helper_checked(h, id, call);
	return call;
}

LLVMValueRef host_gep_at(struct hctx *h, LLVMBuilderRef b, LLVMValueRef base, unsigned off)
{
	if (!off)
		return base;
	LLVMValueRef idx = host_const(h, off);
	return LLVMBuildGEP2(b, h->i8, base, &idx, 1, "");
}

LLVMValueRef host_gep(struct hctx *h, LLVMValueRef base, unsigned off)
{
	return host_gep_at(h, h->b, base, off);
}

bool host_const_int(const struct node *n, int64_t *out)
{
	int64_t a, b;
	switch (n->kind) {
	case N_INT:
		*out = (int64_t)n->u.num.value;
		return true;
	case N_UNOP:
		if (!host_const_int(n->u.unop.operand, &a))
			return false;
		if (n->u.unop.op == OP_NEG)
			*out = (int64_t)(0 - (uint64_t)a);
		else if (n->u.unop.op == OP_PLUS)
			*out = a;
		else
			return false;
		return true;
	case N_BINOP:
		if (!host_const_int(n->u.binop.lhs, &a) ||
		    !host_const_int(n->u.binop.rhs, &b))
			return false;
		/* wrapping, as the program's i64 arithmetic does */
		switch (n->u.binop.op) {
		case OP_ADD: *out = (int64_t)((uint64_t)a + (uint64_t)b); return true;
		case OP_SUB: *out = (int64_t)((uint64_t)a - (uint64_t)b); return true;
		case OP_MUL: *out = (int64_t)((uint64_t)a * (uint64_t)b); return true;
		case OP_DIV:
			if (!b || (a == INT64_MIN && b == -1))
				return false; /* traps in C */
			*out = a / b;
			return true;
		case OP_SHL: *out = (int64_t)((uint64_t)a << (b & 63)); return true;
		default: return false;
		}
	default:
		return false;
	}
}

static LLVMTargetMachineRef target_machine(struct hctx *h)
{
	static bool inited;
	if (!inited) {
		LLVMInitializeBPFTargetInfo();
		LLVMInitializeBPFTarget();
		LLVMInitializeBPFTargetMC();
		LLVMInitializeBPFAsmPrinter();
		inited = true;
	}
	LLVMTargetRef t;
	char *err = NULL;
	if (LLVMGetTargetFromTriple("bpfel", &t, &err)) {
		host_err(h, NULL, "LLVM has no BPF target: %s", err ? err : "?");
		LLVMDisposeMessage(err);
		return NULL;
	}
	/* v2: no JMP32 or atomics, so the userspace VM needs less. */
	return LLVMCreateTargetMachine(t, "bpfel", "v2", "", LLVMCodeGenLevelDefault,
				       LLVMRelocDefault, LLVMCodeModelDefault);
}

static bool has_host_probes(const struct program *prog)
{
	for (const struct node *p = prog->probes; p; p = p->next)
		if (p->u.probe.place & (PLACE_HOST | PLACE_DRIVER))
			return true;
	return false;
}

/* The BPF backend reports what it cannot compile (more than 512 bytes
 * of stack, a call it cannot make) as LLVM diagnostics, which without a
 * handler are printed and exit() the process: kept here, to be reported
 * at the probe they come from. */
static void backend_diag(LLVMDiagnosticInfoRef di, void *arg)
{
	struct hctx *h = arg;
	if (LLVMGetDiagInfoSeverity(di) != LLVMDSError)
		return;
	h->backend_failed = true;
	char *d = LLVMGetDiagInfoDescription(di);
	if (d && !h->backend_err)
		h->backend_err = strdup(d);
	LLVMDisposeMessage(d);
}

/* "FILE:L:C: in function NAME TYPE: MESSAGE": the probe of function
 * NAME, and MESSAGE. */
static void backend_report(struct hctx *h)
{
	const char *d = h->backend_err ? h->backend_err : "";
	const struct host_prog *p = NULL;
	const char *fn = strstr(d, "in function ");
	if (fn) {
		fn += strlen("in function ");
		size_t n = strcspn(fn, " :");
		for (int i = 0; i < h->obj->nprogs && !p; i++)
			if (strlen(h->obj->progs[i].func) == n &&
			    !strncmp(h->obj->progs[i].func, fn, n))
				p = &h->obj->progs[i];
		const char *m = strstr(fn, "): ");
		d = m ? m + 3 : d;
	}
	int len = (int)strlen(d);
	while (len > 0 && (d[len - 1] == '\n' || d[len - 1] == ' '))
		len--;
	h->errors++;
	if (strstr(d, "BPF stack limit")) {
		const char *what = "this probe needs more than the 512 bytes of the BPF stack";
		struct diag *dg = p ? diag_error(h->diags, p->span, "%s", what)
				    : diag_error_nospan(h->diags, "%s", what);
		diag_hint(dg, "hold fewer strings at once (in $variables, map keys, printf "
			  "arguments), or split the probe");
	} else if (p) {
		diag_error(h->diags, p->span, "the BPF backend cannot compile this probe: %.*s",
			   len, d);
	} else {
		diag_error_nospan(h->diags, "the BPF backend cannot compile the program: %.*s",
				  len, d);
	}
}

static int finish(struct hctx *h, LLVMTargetMachineRef tm)
{
	char *err = NULL;
	LLVMDIBuilderFinalize(h->di);
	h->di_done = true;
	if (LLVMVerifyModule(h->mod, LLVMReturnStatusAction, &err)) {
		host_err(h, NULL, "internal error: invalid LLVM module: %s", err);
		LLVMDisposeMessage(err);
		return -1;
	}
	LLVMDisposeMessage(err);
	err = NULL;
	if (h->opts->optimize && hl_optimize(h, tm))
		return -1;
	if (h->opts->keep_ir) {
		char *s = LLVMPrintModuleToString(h->mod);
		h->obj->ir = strdup(s);
		LLVMDisposeMessage(s);
	}
	LLVMMemoryBufferRef buf;
	if (LLVMTargetMachineEmitToMemoryBuffer(tm, h->mod, LLVMObjectFile, &err, &buf)) {
		host_err(h, NULL, "BPF backend failed: %s", err ? err : "?");
		LLVMDisposeMessage(err);
		return -1;
	}
	if (h->backend_failed) {
		LLVMDisposeMemoryBuffer(buf);
		backend_report(h);
		return -1;
	}
	size_t n = LLVMGetBufferSize(buf);
	h->obj->elf = malloc(n);
	if (h->obj->elf) {
		memcpy(h->obj->elf, LLVMGetBufferStart(buf), n);
		h->obj->size = n;
	}
	LLVMDisposeMemoryBuffer(buf);
	if (!h->obj->elf)
		return -1;
	if (hl_btf_maps_write(h)) {
		host_err(h, NULL, "internal error: cannot add the maps' BTF to the object");
		return -1;
	}
	return 0;
}

static void module_init(struct hctx *h)
{
	h->ctx = LLVMContextCreate();
	LLVMContextSetDiagnosticHandler(h->ctx, backend_diag, h);
	h->mod = LLVMModuleCreateWithNameInContext(h->prog->src.name, h->ctx);
	LLVMSetTarget(h->mod, "bpfel");
	LLVMSetDataLayout(h->mod, "e-m:e-p:64:64-i64:64-i128:128-n32:64-S128");
	h->b = LLVMCreateBuilderInContext(h->ctx);
	h->i1 = LLVMInt1TypeInContext(h->ctx);
	h->i8 = LLVMInt8TypeInContext(h->ctx);
	h->i32 = LLVMInt32TypeInContext(h->ctx);
	h->i64 = LLVMInt64TypeInContext(h->ctx);
	h->ptr = LLVMPointerTypeInContext(h->ctx, 0);
	hl_btf_init(h);
}

static void module_free(struct hctx *h)
{
	/* unfinalized, the builder's temporary metadata would leak */
	if (h->di && !h->di_done)
		LLVMDIBuilderFinalize(h->di);
	if (h->di)
		LLVMDisposeDIBuilder(h->di);
	if (h->b)
		LLVMDisposeBuilder(h->b);
	if (h->mod)
		LLVMDisposeModule(h->mod);
	if (h->ctx)
		LLVMContextDispose(h->ctx);
	free(h->backend_err);
}

int host_compile(struct program *prog, const struct host_opts *opts,
		 struct host_obj *obj, struct diags *diags)
{
	static const struct host_opts defaults = { .optimize = true };
	memset(obj, 0, sizeof(*obj));
	arena_init(&obj->arena);
	if (!has_host_probes(prog))
		return 0;
	struct hctx h = { .prog = prog, .opts = opts ? opts : &defaults,
			  .diags = diags, .obj = obj, .big = hl_big_program(prog) };
	LLVMTargetMachineRef tm = target_machine(&h);
	if (!tm)
		return -1;
	module_init(&h);
	hl_probe_str_size(&h);
	int rc = hl_maps_layout(&h);
	if (!rc)
		hl_map_uses(prog, obj);
	if (!rc)
		rc = hl_probes_lower(&h);
	if (!rc && !h.errors)
		rc = finish(&h, tm);
	module_free(&h);
	LLVMDisposeTargetMachine(tm);
	return rc || h.errors ? -1 : 0;
}

void host_print_ir(const struct host_obj *obj, FILE *out)
{
	if (obj->ir)
		fputs(obj->ir, out);
}
