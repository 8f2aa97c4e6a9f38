/* One BPF program per host probe attach point (per event for driver
 * hooks): its section, its context, the predicate and the body; and the
 * struct_ops variables that tie driver hook programs to the ABI. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_events.h"
#include "host_path.h"
#include "host_priv.h"
#include "provider.h"

_Static_assert(HOST_STR_MAX == GPUX_CEV_STR, "cuda: strings are inline char[HOST_STR_MAX]");

const unsigned hl_pt_regs_arg[6] = HOST_PT_REGS_ARGS;
#define PT_REGS_AX 80
#define PT_REGS_SP 152

struct sops_used {
	const struct host_sops_abi *abi;
	LLVMValueRef fns[32];
	int nmembers;
};

bool hl_block_open(struct hctx *h)
{
	LLVMBasicBlockRef bb = LLVMGetInsertBlock(h->b);
	return !LLVMGetBasicBlockTerminator(bb);
}

static int tp_attach(struct hctx *h, const struct node *an)
{
	const struct attach *at = &an->u.attach;
	h->tp = NULL;
	if (!at->prov || at->prov->syntax != SYN_TRACEPOINT)
		return 0;
	if (strpbrk(at->event, "*?[") || strpbrk(at->filter, "*?[")) {
		host_err(h, an, "a tracepoint glob reached codegen unexpanded");
		return -1;
	}
	size_t n;
	int rc = tracepoint_layout(&h->obj->arena, at->event, at->filter, &h->tp, &n);
	if (rc) {
		struct diag *dg = host_err(h, an, "cannot read the format of tracepoint %s:%s: %s",
					   at->event, at->filter, strerror(-rc));
		if (rc == -ENODEV)
			diag_hint(dg, "mount tracefs: mount -t tracefs nodev /sys/kernel/tracing");
		return -1;
	}
	return 0;
}

int hl_probe_tp(struct hctx *h, struct node *probe)
{
	return tp_attach(h, probe->u.probe.attach);
}

/* ---- context fields ---- */

/* A word of the context, from the load at the top of entry that reads
 * it (volatile: never moved into a branch, never rebuilt from a shared
 * ctx + off). */
static LLVMValueRef ctx_load(struct hctx *h, unsigned off, unsigned size)
{
	for (int i = 0; i < h->nctx_loads; i++)
		if (h->ctx_loads[i].off == off && h->ctx_loads[i].size == size)
			return h->ctx_loads[i].v;
	LLVMTypeRef t = LLVMIntTypeInContext(h->ctx, size * 8);
	LLVMBuilderRef eb = LLVMCreateBuilderInContext(h->ctx);
	/* after the earlier ones, so the loads keep the order of first use */
	LLVMValueRef at = h->nctx_loads ? LLVMGetNextInstruction(h->ctx_loads[h->nctx_loads - 1].v)
					: LLVMGetFirstInstruction(h->entry);
	if (at)
		LLVMPositionBuilderBefore(eb, at);
	else
		LLVMPositionBuilderAtEnd(eb, h->entry);
	LLVMValueRef v = LLVMBuildLoad2(eb, t, host_gep_at(h, eb, h->ctxarg, off), "");
	LLVMSetVolatile(v, 1);
	LLVMDisposeBuilder(eb);
	if (h->nctx_loads < (int)(sizeof(h->ctx_loads) / sizeof(h->ctx_loads[0])))
		h->ctx_loads[h->nctx_loads++] = (struct hctx_ctx_load){ off, size, v };
	return v;
}

const char *hl_iter_pin(struct hctx *h, const struct attach *at)
{
	if (!at->filter)
		return NULL;
	return at->filter[0] == '/' ? at->filter
				    : arena_printf(&h->obj->arena, "/sys/fs/bpf/%s", at->filter);
}

LLVMValueRef hl_ctx_word(struct hctx *h, unsigned off)
{
	return ctx_load(h, off, 8);
}

static LLVMValueRef load_at(struct hctx *h, LLVMValueRef base, unsigned off,
			    unsigned size, bool is_signed)
{
	LLVMTypeRef t = LLVMIntTypeInContext(h->ctx, size * 8);
	LLVMValueRef v = base == h->ctxarg ? ctx_load(h, off, size)
					   : LLVMBuildLoad2(h->b, t, host_gep(h, base, off), "");
	if (size == 8)
		return v;
	return is_signed ? LLVMBuildSExt(h->b, v, h->i64, "")
			 : LLVMBuildZExt(h->b, v, h->i64, "");
}

/* The tracepoint's field of that name, or NULL. */
static struct tp_field *tp_find(struct hctx *h, const char *name)
{
	struct tp_field *f = h->tp;
	while (f && f->f.name && strcmp(f->f.name, name))
		f++;
	return f && f->f.name ? f : NULL;
}

static LLVMValueRef tp_field(struct hctx *h, const struct node *n,
			     const char *name, unsigned *ssize)
{
	struct tp_field *f = tp_find(h, name);
	if (!f) {
		host_err(h, n, "tracepoint field '%s' not found at compile time", name);
		return NULL;
	}
	if (f->f.type.kind == TY_STR) {
		unsigned size = f->dynamic ? HOST_STR_MAX : f->size;
		LLVMValueRef buf = host_alloca(h, size, "tpstr");
		LLVMValueRef src = host_gep(h, h->ctxarg, f->offset);
		int id = BPF_H_PROBE_READ_KERNEL;
		if (f->dynamic) {
			/* __data_loc: u32 (len << 16 | offset) */
			LLVMValueRef loc = load_at(h, h->ctxarg, f->offset, 4, false);
			LLVMValueRef off = LLVMBuildAnd(h->b, loc, host_const(h, 0xffff), "");
			if (f->rel)
				off = LLVMBuildAdd(h->b, off, host_const(h, f->offset + 4), "");
			src = LLVMBuildGEP2(h->b, h->i8, h->ctxarg, &off, 1, "");
			id = BPF_H_PROBE_READ_KERNEL_STR;
			host_zero(h, buf, size, 8);
		}
		LLVMValueRef args[] = { buf, LLVMConstInt(h->i32, size, false), src };
		host_helper(h, id, h->i64, args, 3);
		*ssize = size;
		return buf;
	}
	if (f->array || (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)) {
		host_err(h, n, "tracepoint field '%s' (%s) cannot be read yet", name, f->f.doc);
		return NULL;
	}
	return load_at(h, h->ctxarg, f->offset, f->size, f->f.type.is_signed);
}

#define TP_INDEX_MAX 64 /* elements a variable index chooses among */

LLVMValueRef hl_tp_index(struct hctx *h, struct node *e, bool *err)
{
	const struct node *a = e->u.binop.lhs;
	*err = false;
	if (!h->tp || a->kind != N_FIELD || a->type.kind != TY_ARRAY || !a->type.inner ||
	    a->u.field.base->type.kind == TY_POINTER || a->u.field.base->type.kind == TY_RECORD)
		return NULL;
	struct tp_field *f = tp_find(h, a->u.field.name);
	if (!f)
		return NULL;
	struct type el = *a->type.inner;
	unsigned es = el.bits / 8, n = a->type.count;
	struct node *ix = e->u.binop.rhs;
	/* the record is the context, which the verifier lets be read only
	 * at constant offsets: a variable index picks among the elements */
	if (ix->kind == N_INT)
		return ix->u.num.value < n ? load_at(h, h->ctxarg, f->offset + (unsigned)ix->u.num.value * es,
						     es, el.is_signed)
					  : host_const(h, 0);
	if (n > TP_INDEX_MAX) {
		host_err(h, e, "tracepoint field '%s' has %u elements: a variable index chooses "
			 "among at most %d", f->f.name, n, TP_INDEX_MAX);
		*err = true;
		return NULL;
	}
	LLVMValueRef i = hl_expr_int(h, ix);
	if (!i) {
		*err = true;
		return NULL;
	}
	LLVMValueRef v = host_const(h, 0);
	for (unsigned k = 0; k < n; k++) {
		LLVMValueRef is = LLVMBuildICmp(h->b, LLVMIntEQ, i, host_const(h, k), "");
		v = LLVMBuildSelect(h->b, is, load_at(h, h->ctxarg, f->offset + k * es, es, el.is_signed),
				    v, "");
	}
	return v;
}

/* gpux/cuda/ context: fields in catalog order, 8-aligned (abi/cuda_events.h). */
static LLVMValueRef cuda_field(struct hctx *h, const struct node *n,
			       const char *name, int dim, unsigned *ssize)
{
	unsigned off = 0;
	const struct field *f = h->at->events[0]->fields;
	for (; f->name && strcmp(f->name, name); f++)
		off += f->type.kind == TY_STR ? HOST_STR_MAX
		       : f->type.kind == TY_DIM3 ? 16 : 8;
	if (!f->name) {
		host_err(h, n, "no field '%s' in this CUDA event", name);
		return NULL;
	}
	if (f->type.kind == TY_STR) {
		LLVMValueRef buf = host_alloca(h, HOST_STR_MAX, "cstr");
		LLVMBuildMemCpy(h->b, buf, 8, host_gep(h, h->ctxarg, off), 8,
				host_const(h, HOST_STR_MAX));
		*ssize = HOST_STR_MAX;
		return buf;
	}
	if (f->type.kind == TY_DIM3) {
		if (dim < 0) {
			host_err(h, n, "'%s' is a dim3; use .x, .y or .z", name);
			return NULL;
		}
		return load_at(h, h->ctxarg, off + 4 * (unsigned)dim, 4, false);
	}
	return load_at(h, h->ctxarg, off, 8, false);
}

LLVMValueRef hl_cuda_kernel_id(struct hctx *h)
{
	unsigned off = 0;
	for (const struct field *f = h->at->events[0]->fields; f->name; f++)
		off += f->type.kind == TY_STR ? HOST_STR_MAX : f->type.kind == TY_DIM3 ? 16 : 8;
	return load_at(h, h->ctxarg, off, 8, false);
}

static LLVMValueRef driver_field(struct hctx *h, const struct node *n,
				 const char *name)
{
	for (int i = 0; i < h->hook->nfields; i++) {
		const struct host_sops_field *f = &h->hook->fields[i];
		if (strcmp(f->name, name))
			continue;
		if (f->arg == HOST_SOPS_CAPTURED)
			return hl_capture_read(h, n, name);
		LLVMValueRef v = load_at(h, h->ctxarg, 8 * (unsigned)f->arg, 8, false);
		for (int k = 0; k < f->nloads; k++) {
			LLVMValueRef p = LLVMBuildIntToPtr(h->b, v, h->ptr, "");
			v = load_at(h, p, f->off[k], k == f->nloads - 1 ? f->size : 8, false);
		}
		if (f->add)
			v = LLVMBuildAdd(h->b, v, LLVMConstInt(h->i64, (unsigned long long)f->add, true), "");
		return v;
	}
	host_err(h, n, "'%s' is not available in %s: the %s ABI does not provide it",
		 name, h->hook->event, h->abi->struct_name);
	return NULL;
}

LLVMValueRef hl_reg(struct hctx *h, unsigned off)
{
	return load_at(h, h->ctxarg, off, 8, false);
}

/* sargN at a function's first instruction (x86-64): the return address
 * at sp, then the arguments past the sixth, 8 bytes each; read from the
 * traced process's stack (0 if it cannot be). */
static LLVMValueRef stack_arg(struct hctx *h, int i)
{
	LLVMValueRef sp = load_at(h, h->ctxarg, PT_REGS_SP, 8, false);
	LLVMValueRef at = LLVMBuildAdd(h->b, sp, host_const(h, 8 * ((uint64_t)i + 1)), "");
	LLVMValueRef buf = host_alloca_zero(h, 8, "sarg");
	LLVMValueRef args[] = { buf, LLVMConstInt(h->i32, 8, false),
				LLVMBuildIntToPtr(h->b, at, h->ptr, "") };
	host_helper(h, BPF_H_PROBE_READ_USER, h->i64, args, 3);
	return LLVMBuildLoad2(h->b, h->i64, buf, "");
}

/* args.NAME of a uprobe: the parameter's register (or stack slot, past
 * six), cut to its type's size and extended as its sign says. */
static LLVMValueRef dwarf_arg(struct hctx *h, const struct node *n, const char *name)
{
	const struct attach *at = h->at;
	int i = 0;
	while (i < at->nargs && strcmp(at->args[i].name, name))
		i++;
	if (i == at->nargs) {
		host_err(h, n, "%s has no argument '%s'", at->func, name);
		return NULL;
	}
	int reg = at->arg_regs[i];
	if (reg < 0) {
		host_err(h, n, "args.%s (%s) is not passed in an integer register: gpux cannot "
			 "read it", name, at->args[i].doc);
		return NULL;
	}
	LLVMValueRef v = reg < 6 ? load_at(h, h->ctxarg, hl_pt_regs_arg[reg], 8, false)
				 : stack_arg(h, reg - 6);
	unsigned bits = at->args[i].type.bits;
	if (bits && bits < 64) {
		LLVMValueRef t = LLVMBuildTrunc(h->b, v, LLVMIntTypeInContext(h->ctx, bits), "");
		v = at->args[i].type.is_signed ? LLVMBuildSExt(h->b, t, h->i64, "")
					       : LLVMBuildZExt(h->b, t, h->i64, "");
	}
	return v;
}

LLVMValueRef hl_ctx_field(struct hctx *h, const struct node *n, unsigned *ssize)
{
	*ssize = 0;
	const char *name;
	int dim = -1;
	if (n->kind == N_FIELD) {
		const struct node *base = n->u.field.base;
		if (h->tp)
			return tp_field(h, n, n->u.field.name, ssize);
		if (h->at->args && h->at->prov->regs)
			return dwarf_arg(h, n, n->u.field.name);
		name = base->u.ident.name;
		dim = n->u.field.name[0] - 'x';
	} else {
		name = n->u.ident.name;
	}
	if (h->run == HOST_RUN_DRIVER)
		return driver_field(h, n, name);
	if (h->cuda)
		return cuda_field(h, n, name, dim, ssize);
	const char *prov = h->at->prov->name;
	if (h->usdt)
		return hl_usdt_arg(h, n, name);
	if (!strcmp(name, "func")) {
		/* an address names its function when attaching */
		if (hl_site_globbed(h) || h->at->addr) {
			struct hval v = hl_sym_string(h, false);
			*ssize = v.ssize;
			return v.v;
		}
		*ssize = (unsigned)strlen(h->at->func) + 1;
		return hl_str_literal(h, h->at->func, strlen(h->at->func), *ssize);
	}
	/* the event's fields say which of these it has (sema checked) */
	bool regs = h->at->prov->regs;
	if (regs && !strncmp(name, "arg", 3) && name[3] >= '0' && name[3] <= '5' && !name[4])
		return load_at(h, h->ctxarg, hl_pt_regs_arg[name[3] - '0'], 8, false);
	if (regs && !strcmp(name, "retval"))
		return load_at(h, h->ctxarg, PT_REGS_AX, 8, false);
	if (regs && !strncmp(name, "sarg", 4) && name[4] >= '0' && name[4] <= '5' && !name[5])
		return stack_arg(h, name[4] - '0');
	host_err(h, n, "'%s' cannot be read in %s probes yet", name, prov);
	return NULL;
}

/* ---- kfuncs ---- */

static bool hook_has(const struct host_sops_hook *hk, const char *name)
{
	for (int i = 0; i < hk->nfields; i++)
		if (!strcmp(hk->fields[i].name, name))
			return true;
	return false;
}

LLVMValueRef hl_kfunc_call(struct hctx *h, struct node *call)
{
	const struct action *act = call->u.call.fn;
	const struct node *a0 = call->u.call.args;
	/* the action's kfunc: one that acts on a field of the hook (self)
	 * when the argument is that field, else a general one, else the
	 * first (whose self check below then explains) */
	const struct host_sops_kfunc *k = NULL, *general = NULL, *on_self = NULL;
	for (int i = 0; h->abi && i < h->abi->nkfuncs; i++) {
		const struct host_sops_kfunc *c = &h->abi->kfuncs[i];
		if (c->action != act->id)
			continue;
		if (!k)
			k = c;
		if (!c->self && !general)
			general = c;
		if (c->self && !on_self && a0 && a0->kind == N_IDENT &&
		    !strcmp(a0->u.ident.name, c->self) && hook_has(h->hook, c->self))
			on_self = c;
	}
	k = on_self ? on_self : general ? general : k;
	if (!k) {
		host_err(h, call, "%s() has no kfunc in the %s ABI", act->name,
			 h->abi ? h->abi->struct_name : "(none)");
		return NULL;
	}
	/* the hook must pass what the kfunc takes (a decision context) */
	for (int i = 0; i < k->nargs; i++)
		if (k->args[i][0] != '=' && k->args[i][0] != '$' && !hook_has(h->hook, k->args[i])) {
			host_err(h, call, "%s() cannot be called in %s: the %s ABI passes this hook "
				 "no '%s' argument for %s()", act->name, h->hook->event,
				 h->abi->struct_name, k->args[i], k->name);
			return NULL;
		}
	if (k->self && !(a0 && a0->kind == N_IDENT && !strcmp(a0->u.ident.name, k->self))) {
		struct diag *d = host_err(h, a0 ? a0 : call, "%s() in the %s ABI moves only the "
					  "hook's own %s", act->name, h->abi->struct_name, k->self);
		if (d)
			diag_hint(d, "%s(%s)", act->name, k->self);
		return NULL;
	}
	LLVMValueRef args[3];
	LLVMTypeRef types[3];
	for (int i = 0; i < k->nargs; i++) {
		const char *a = k->args[i];
		LLVMValueRef v;
		if (a[0] == '=') {
			v = LLVMConstInt(h->i64, strtoull(a + 1, NULL, 0), false);
		} else if (a[0] == '$') {
			struct node *arg = call->u.call.args;
			for (int j = a[1] - '0'; arg && j > 0; j--)
				arg = arg->next;
			v = arg ? hl_expr_int(h, arg) : NULL;
		} else {
			v = driver_field(h, call, a);
		}
		if (!v)
			return NULL;
		/* pointers stay pointers so the verifier sees the BTF object */
		bool is_ptr = a[0] == '=' ? false
			      : a[0] != '$' || act->args[a[1] - '0'].kind == TY_PTR;
		args[i] = is_ptr ? LLVMBuildIntToPtr(h->b, v, h->ptr, "") : v;
		types[i] = is_ptr ? h->ptr : h->i64;
	}
	LLVMValueRef fn = LLVMGetNamedFunction(h->mod, k->name);
	LLVMTypeRef ft = LLVMFunctionType(h->i64, types, (unsigned)k->nargs, false);
	if (!fn) {
		fn = LLVMAddFunction(h->mod, k->name, ft);
		LLVMSetSection(fn, ".ksyms");
		/* weak, as gpu_ext's policies declare them: an object whose
		 * struct_ops part is not loaded (the kernel probes' run) needs
		 * no driver to resolve them */
		LLVMSetLinkage(fn, LLVMExternalWeakLinkage);
		if (k->bound)
			hl_btf_kfunc(h, fn, k);
		else
			hl_btf_func(h, fn, k->name, k->nargs, false, 0);
	}
	return LLVMBuildCall2(h->b, ft, fn, args, (unsigned)k->nargs, "");
}

/* ---- programs ---- */

static const char *fn_name(struct hctx *h, const struct node *p, int k, int e)
{
	const struct attach *at = &p->u.probe.attach->u.attach;
	const char *tail = at->filter ? at->filter : at->event ? at->event : "";
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "p%d_%s_%s", p->u.probe.index,
			 at->prov ? at->prov->name : "probe", tail);
	if (n >= (int)sizeof(buf))
		n = (int)sizeof(buf) - 1;
	for (int i = 0; i < n; i++)
		if (!((buf[i] >= 'a' && buf[i] <= 'z') || (buf[i] >= 'A' && buf[i] <= 'Z') ||
		      (buf[i] >= '0' && buf[i] <= '9')))
			buf[i] = '_';
	buf[n > 40 ? 40 : n] = '\0';
	if (k || e)
		return arena_printf(&h->obj->arena, "%s_%d_%d", buf, k, e);
	return arena_strdup(&h->obj->arena, buf);
}

/* The unit names it (lang/provider.h), from what was found here: a usdt
 * site, a driver hook's member. */
static const char *section_of(struct hctx *h, const struct node *an,
			      const struct event *ev)
{
	const struct attach *at = &an->u.attach;
	const char *site = h->usdt ? h->usdt->where : h->hook ? h->hook->member : NULL;
	if (!at->prov->unit->section)
		return NULL;
	return at->prov->unit->section(&h->obj->arena, at, ev, site);
}

static const struct host_sops_hook *find_hook(struct hctx *h, const struct node *an,
					      const struct event *ev,
					      struct sops_used *used, int *nused,
					      int *member)
{
	static const struct host_sops_abi *const builtin[] = {
		&host_abi_uvm_gpu_ext, &host_abi_nv_gpu_sched };
	const struct host_sops_abi *const *abis = h->opts->abis ? h->opts->abis : builtin;
	int nabis = h->opts->abis ? h->opts->nabis : 2;
	char ename[64];
	snprintf(ename, sizeof(ename), "%s:%s", ev->prov->name, ev->name);
	const struct host_sops_abi *seen = NULL;
	for (int i = 0; i < nabis; i++) {
		if (strcmp(abis[i]->provider, ev->prov->name))
			continue;
		seen = abis[i];
		for (int j = 0; j < abis[i]->nhooks; j++) {
			const struct host_sops_hook *hk = &abis[i]->hooks[j];
			if (strcmp(hk->event, ename))
				continue;
			int u = 0;
			while (u < *nused && used[u].abi != abis[i])
				u++;
			if (u == *nused) {
				if (u == 4)
					break;
				memset(&used[u], 0, sizeof(used[u]));
				used[u].abi = abis[i];
				while (abis[i]->members[used[u].nmembers] && used[u].nmembers < 32)
					used[u].nmembers++;
				(*nused)++;
			}
			*member = -1;
			for (int m = 0; m < used[u].nmembers; m++)
				if (!strcmp(abis[i]->members[m], hk->member))
					*member = m;
			if (*member < 0)
				break;
			h->abi = abis[i];
			*member += u * 32;
			return hk;
		}
	}
	if (seen)
		host_err(h, an, "%s is not available: the driver's struct %s has no member for it",
			 ename, seen->struct_name);
	else
		host_err(h, an, "no driver ABI given for %s", ename);
	return NULL;
}

LLVMValueRef hl_begin_fn(struct hctx *h, unsigned line, const char *name,
			 const char *section)
{
	LLVMTypeRef ft = LLVMFunctionType(h->i64, &h->ptr, 1, false);
	LLVMValueRef fn = LLVMAddFunction(h->mod, name, ft);
	LLVMSetSection(fn, section);
	/* nounwind: no .eh_frame in the object */
	unsigned kind = LLVMGetEnumAttributeKindForName("nounwind", 8);
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
				LLVMCreateEnumAttribute(h->ctx, kind, 0));
	h->fn = fn;
	h->ctxarg = LLVMGetParam(fn, 0);
	LLVMSetValueName2(h->ctxarg, "ctx", 3);
	h->sp = hl_btf_func(h, fn, name, 1, true, line);
	h->entry = LLVMAppendBasicBlockInContext(h->ctx, fn, "entry");
	h->nctx_loads = 0;
	h->vars = NULL;
	h->var_ix = (struct hindex){ .str = true };
	h->slots = NULL;
	h->split_on = false;
	h->split_flag = NULL;
	h->split_bb = NULL;
	LLVMPositionBuilderAtEnd(h->b, h->entry);
	/* no location of the last function's: a composed hook builds before
	 * its first probe sets one */
	LLVMSetCurrentDebugLocation2(h->b, NULL);
	return fn;
}

void hl_leave(struct hctx *h, LLVMValueRef v)
{
	if (!h->leave) {
		LLVMBuildRet(h->b, v);
		return;
	}
	/* a composed hook: the first decision other than DEFAULT stands */
	LLVMValueRef d = LLVMBuildLoad2(h->b, h->i64, h->decision, "");
	LLVMValueRef keep = LLVMBuildICmp(h->b, LLVMIntNE, d, host_const(h, DECISION_DEFAULT), "");
	LLVMBuildStore(h->b, LLVMBuildSelect(h->b, keep, d, v, ""), h->decision);
	LLVMBuildBr(h->b, h->leave);
}

/* p's predicate and body where the builder stands; each way out goes
 * through hl_leave. */
static void lower_body(struct hctx *h, struct node *p, const struct node *an)
{
	h->split_on = hl_big_probe(p);
	host_loc(h, an);
	if (p->u.probe.pred) {
		LLVMValueRef c = hl_expr_int(h, p->u.probe.pred);
		if (!c)
			return;
		LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "body");
		LLVMBasicBlockRef skip = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "skip");
		LLVMBuildCondBr(h->b, hl_to_bool(h, c), body, skip);
		LLVMPositionBuilderAtEnd(h->b, skip);
		hl_leave(h, host_const(h, 0));
		LLVMPositionBuilderAtEnd(h->b, body);
	}
	hl_stmt_list(h, p->u.probe.body->u.block.stmts);
	if (hl_block_open(h))
		hl_leave(h, host_const(h, 0));
}

/* An iterator's last call has no object (it is for a program's
 * epilogue): a probe runs once per object, so it returns there. */
static void skip_last_call(struct hctx *h, const struct event *e)
{
	LLVMBasicBlockRef none = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "no_object");
	LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "object");
	LLVMValueRef obj = hl_ctx_word(h, e->ctx_object);
	LLVMBuildCondBr(h->b, LLVMBuildICmp(h->b, LLVMIntEQ, obj, host_const(h, 0), ""), none,
			body);
	LLVMPositionBuilderAtEnd(h->b, none);
	LLVMBuildRet(h->b, host_const(h, 0));
	LLVMPositionBuilderAtEnd(h->b, body);
}

static LLVMValueRef lower_one(struct hctx *h, struct node *p, const struct node *an,
			      const char *name, const char *section)
{
	LLVMValueRef fn = hl_begin_fn(h, (unsigned)p->span.first_line, name, section);
	if (an->u.attach.prov->attach == ATTACH_ITER)
		skip_last_call(h, an->u.attach.events[0]);
	lower_body(h, p, an);
	return fn;
}

/* A driver hook more than one probe implements (in one file or several
 * given together): one program running them in order. Each probe's
 * actions apply; the first decision other than DEFAULT is the hook's. */
struct hook_probe {
	struct node *p;
	const struct node *an;
	int k, e;  /* attach point and event index (fn_name) */
	int member;
	const struct host_sops_hook *hook;
	const struct host_sops_abi *abi;
};

static LLVMValueRef lower_composed(struct hctx *h, struct hook_probe *hp, int n,
				   const char *name, const char *section)
{
	LLVMValueRef fn = hl_begin_fn(h, (unsigned)hp[0].p->span.first_line, name, section);
	h->decision = LLVMBuildAlloca(h->b, h->i64, "decision");
	LLVMBuildStore(h->b, host_const(h, DECISION_DEFAULT), h->decision);
	for (int i = 0; i < n; i++) {
		h->probe = hp[i].p;
		h->at = &hp[i].an->u.attach;
		h->hook = hp[i].hook;
		h->abi = hp[i].abi;
		h->vars = NULL; /* $variables are each probe's own */
		h->var_ix = (struct hindex){ .str = true };
		LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(h->ctx, fn, "probe");
		h->leave = LLVMAppendBasicBlockInContext(h->ctx, fn, "next");
		LLVMBuildBr(h->b, start);
		LLVMPositionBuilderAtEnd(h->b, start);
		lower_body(h, hp[i].p, hp[i].an);
		LLVMPositionBuilderAtEnd(h->b, h->leave);
	}
	h->leave = NULL;
	LLVMBuildRet(h->b, LLVMBuildLoad2(h->b, h->i64, h->decision, ""));
	return fn;
}

/* An offset or address is checked against the target's symbols now,
 * so that a wrong one is an error at its attach point (when the target
 * cannot be read yet, attaching says why). For a run, so is the target
 * itself and a function named whole, as bpftrace locates them; a dry
 * run leaves those to the machine that runs it (a policy on libcuda
 * checked where there is none). */
static int check_usym(struct hctx *h, const struct node *an)
{
	const struct attach *at = &an->u.attach;
	char path[PATH_MAX], err[PATH_MAX + 256];
	struct host_usym us;
	bool running = h->opts->cpid != 0;
	if (at->prov->syntax != SYN_UPROBE)
		return 0;
	if (host_resolve_target(at->event, h->opts->lib_pid, path, sizeof(path)) ||
	    access(path, R_OK)) {
		if (!running)
			return 0;
		host_err(h, an, "uprobe target file '%s' does not exist or is not executable",
			 at->event);
		return -1;
	}
	/* FUNC+0 names FUNC; a glob is matched when attaching */
	const char *fn = at->func ? at->func : at->filter;
	bool at_offset = at->addr || at->offset;
	if (!at_offset && (!running || !fn || strpbrk(fn, "*?[")))
		return 0;
	if (host_usym_resolve(path, at->addr ? NULL : fn, at->offset,
			      at->prov->attach == ATTACH_URETPROBE, &us, err, sizeof(err)) == 0)
		return 0;
	host_err(h, an, "%s", err);
	return -1;
}

/* The array doubles (from 16): a copy per 16 was quadratic in probes. */
static bool array_full(int n)
{
	return n == 0 || (n >= 16 && !(n & (n - 1)));
}

void hl_prog_append(struct hctx *h, const struct host_prog *p)
{
	struct host_obj *o = h->obj;
	if (array_full(o->nprogs)) {
		size_t cap = o->nprogs ? 2 * (size_t)o->nprogs : 16;
		struct host_prog *np = arena_zalloc(&o->arena, sizeof(*np) * cap);
		if (o->nprogs)
			memcpy(np, o->progs, sizeof(*np) * (size_t)o->nprogs);
		o->progs = np;
	}
	o->progs[o->nprogs++] = *p;
}

static void register_prog(struct hctx *h, const struct node *an, const char *name,
			  const char *section)
{
	const struct attach *at = &an->u.attach;
	struct host_prog hp = { .func = name, .section = section, .probe = at->text,
				.attach = at->prov->attach, .run = h->run, .span = an->span };
	hp.site.func = at->func;
	hp.site.offset = at->offset;
	hp.site.addr = at->addr;
	hp.site.name = at->sym;
	hp.site.module = at->module;
	switch (hp.attach) {
	case ATTACH_VM:
		hp.at.interval_ns = at->interval_ns;
		break;
	case ATTACH_USDT:
		if (h->usdt) {
			hp.at.usdt.path = h->usdt->path;
			hp.at.usdt.off = h->usdt->s.file_off;
			hp.at.usdt.sema = h->usdt->s.sema_off;
		}
		break;
	case ATTACH_PERF_EVENT:
		hp.at.perf.type = at->events[0]->perf_type;
		hp.at.perf.config = at->events[0]->perf_config;
		hp.at.perf.period = at->perf_count ? at->perf_count : at->interval_ns;
		hp.at.perf.freq = at->interval_hz;
		break;
	case ATTACH_ITER:
		hp.at.iter.pin = hl_iter_pin(h, at);
		break;
	default: /* the watchpoint's are set by host_watch.c */
		break;
	}
	hl_prog_append(h, &hp);
}

int hl_add_prog(struct hctx *h, struct node *p, const struct node *an, const char *name,
		const char *section, LLVMValueRef *fn)
{
	register_prog(h, an, name, section);
	int before = h->errors;
	*fn = lower_one(h, p, an, name, section);
	return h->errors > before ? -1 : 0;
}

/* A usdt attach point: one program per site, each reading its own
 * arguments; an error in one (an argument it lacks) is reported once. */
static void lower_usdt(struct hctx *h, struct node *p, const struct node *an, int k)
{
	struct hl_usdt_site *sites;
	int n;
	if (hl_usdt_sites(h, an, &sites, &n))
		return;
	for (int i = 0; i < n; i++) {
		h->usdt = &sites[i];
		LLVMValueRef fn;
		if (hl_add_prog(h, p, an, fn_name(h, p, k, i), section_of(h, an, h->at->events[0]),
			     &fn))
			break;
	}
	h->usdt = NULL;
}

/* Every driver hook's program: one probe's as any other, several
 * composed (in program order). */
static void lower_hooks(struct hctx *h, struct hook_probe *hp, int n, struct sops_used *used)
{
	for (int i = 0; i < n; i++) {
		if (hp[i].member < 0)
			continue; /* lowered with an earlier probe of its hook */
		struct hook_probe same[64];
		int ns = 0;
		for (int j = i; j < n && ns < 64; j++)
			if (hp[j].member == hp[i].member) {
				same[ns++] = hp[j];
				if (j > i)
					hp[j].member = -1;
			}
		h->probe = hp[i].p;
		h->at = &hp[i].an->u.attach;
		h->hook = hp[i].hook;
		h->abi = hp[i].abi;
		h->run = HOST_RUN_DRIVER;
		const char *sec = section_of(h, hp[i].an, h->at->events[hp[i].e]);
		LLVMValueRef fn;
		int before = h->errors;
		if (ns == 1) {
			hl_add_prog(h, hp[i].p, hp[i].an, fn_name(h, hp[i].p, hp[i].k, hp[i].e), sec, &fn);
		} else {
			const char *name = arena_printf(&h->obj->arena, "compose_%s", hp[i].hook->member);
			register_prog(h, hp[i].an, name, sec);
			fn = lower_composed(h, same, ns, name, sec);
		}
		if (h->errors == before)
			used[hp[i].member / 32].fns[hp[i].member % 32] = fn;
	}
}

static void struct_ops_vars(struct hctx *h, struct sops_used *used, int nused)
{
	for (int u = 0; u < nused; u++) {
		LLVMTypeRef fields[32];
		LLVMValueRef init[32];
		for (int m = 0; m < used[u].nmembers; m++) {
			fields[m] = h->ptr;
			init[m] = used[u].fns[m] ? used[u].fns[m] : LLVMConstNull(h->ptr);
		}
		LLVMTypeRef st = LLVMStructTypeInContext(h->ctx, fields,
							 (unsigned)used[u].nmembers, false);
		const char *var = arena_printf(&h->obj->arena, "gpux_%s",
					       used[u].abi->struct_name);
		LLVMValueRef g = LLVMAddGlobal(h->mod, st, var);
		LLVMSetInitializer(g, LLVMConstNamedStruct(st, init,
							   (unsigned)used[u].nmembers));
		LLVMSetSection(g, ".struct_ops");
		LLVMSetAlignment(g, 8);
		hl_btf_struct_ops(h, g, var, used[u].abi);
	}
}

static void license(struct hctx *h)
{
	LLVMValueRef s = LLVMConstStringInContext(h->ctx, "GPL", 3, false);
	LLVMValueRef g = LLVMAddGlobal(h->mod, LLVMTypeOf(s), "_license");
	LLVMSetInitializer(g, s);
	LLVMSetSection(g, "license");
}

int hl_probes_lower(struct hctx *h)
{
	struct sops_used used[4];
	int nused = 0, nhooks = 0;
	struct hook_probe hooks[64];
	license(h);
	for (struct node *p = h->prog->probes; p; p = p->next) {
		enum place place = p->u.probe.place;
		if (!(place & (PLACE_HOST | PLACE_DRIVER)))
			continue;
		h->probe = p;
		int k = 0;
		for (struct node *an = p->u.probe.attach; an; an = an->next, k++) {
			h->at = &an->u.attach;
			if (tp_attach(h, an) || check_usym(h, an))
				continue;
			for (int e = 0; e < h->at->nevents; e++) {
				const struct event *ev = h->at->events[e];
				int member = -1;
				h->hook = NULL;
				h->abi = NULL;
				h->cuda = h->at->prov->syntax == SYN_EVENT && place == PLACE_HOST;
				h->run = place == PLACE_DRIVER ? HOST_RUN_DRIVER
					 : h->at->prov->runner == RUNNER_KERNEL ? HOST_RUN_KERNEL
					 : HOST_RUN_VM;
				if (place == PLACE_DRIVER) {
					if (!(h->hook = find_hook(h, an, ev, used, &nused, &member)))
						continue;
					if (nhooks == 64) {
						host_err(h, an, "more than 64 driver probes");
						continue;
					}
					hooks[nhooks++] = (struct hook_probe){ p, an, k, e, member,
									       h->hook, h->abi };
					continue;
				}
				if (h->at->prov->syntax == SYN_USDT) {
					lower_usdt(h, p, an, k);
					continue;
				}
				if (h->at->prov->syntax == SYN_WATCHPOINT) {
					hl_lower_watchpoint(h, p, an, fn_name(h, p, k, e));
					continue;
				}
				const char *sec = section_of(h, an, ev);
				if (!sec)
					continue;
				LLVMValueRef fn;
				const char *name = fn_name(h, p, k, e);
				hl_add_prog(h, p, an, name, sec, &fn);
			}
		}
	}
	lower_hooks(h, hooks, nhooks, used);
	hl_capture_prog(h);
	h->sp = NULL;
	LLVMSetCurrentDebugLocation2(h->b, NULL);
	if (!h->errors)
		struct_ops_vars(h, used, nused);
	return 0;
}
