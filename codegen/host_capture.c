/* Captured fields (llvm_host.h, struct host_sops_capture): what a
 * driver hook cannot read from its own arguments, a kprobe on the
 * driver function that calls it reads and leaves in a per-CPU slot.
 * The hook reads the slot; the kprobe program is made once, for the
 * fields of its capture, when some hook reads one. */
#include <string.h>

#include "host_priv.h"

static LLVMValueRef slot_map(struct hctx *h, const struct host_sops_capture *c)
{
	if (!h->capture_map) {
		static const char *const names[] = { "type", "max_entries", "key_size",
						     "value_size" };
		uint32_t vals[] = { BPF_M_PERCPU_ARRAY, 1, 4, 8 * (uint32_t)c->nfields };
		h->capture_map = hl_map_global(h, HOST_CAPTURE_MAP, vals, names, 4);
		h->capture = c;
	}
	return h->capture_map;
}

/* The map's one value, or NULL. */
static LLVMValueRef slots(struct hctx *h, const struct host_sops_capture *c)
{
	LLVMValueRef key = host_alloca(h, 4, "capkey");
	LLVMBuildStore(h->b, LLVMConstInt(h->i32, 0, false), key);
	LLVMValueRef args[] = { slot_map(h, c), key };
	return host_helper(h, BPF_H_MAP_LOOKUP, h->ptr, args, 2);
}

LLVMValueRef hl_capture_read(struct hctx *h, const struct node *n, const char *name)
{
	const struct host_sops_capture *c = h->abi->capture;
	int i = 0;
	while (c && i < c->nfields && strcmp(c->fields[i].name, name))
		i++;
	if (!c || i == c->nfields) {
		host_err(h, n, "'%s' is not available in %s: the %s ABI does not provide it",
			 name, h->hook->event, h->abi->struct_name);
		return NULL;
	}
	return hl_load_or_zero_at(h, slots(h, c), 8 * (unsigned)i);
}

/* One field from the kprobe's registers: every load through
 * bpf_probe_read_kernel (the argument is a plain number to the
 * verifier), a failed one reading 0. */
static LLVMValueRef read_field(struct hctx *h, const struct host_sops_field *f)
{
	LLVMValueRef v = LLVMBuildLoad2(h->b, h->i64,
					host_gep(h, h->ctxarg, hl_pt_regs_arg[f->arg]), "");
	for (int k = 0; k < f->nloads; k++) {
		unsigned size = k == f->nloads - 1 ? f->size : 8;
		LLVMValueRef tmp = host_alloca(h, 8, "capload");
		LLVMBuildStore(h->b, host_const(h, 0), tmp);
		LLVMValueRef src = LLVMBuildAdd(h->b, v, host_const(h, f->off[k]), "");
		LLVMValueRef args[] = { tmp, LLVMConstInt(h->i32, size, false),
					LLVMBuildIntToPtr(h->b, src, h->ptr, "") };
		host_helper(h, BPF_H_PROBE_READ_KERNEL, h->i64, args, 3);
		v = LLVMBuildLoad2(h->b, LLVMIntTypeInContext(h->ctx, size * 8), tmp, "");
		if (size != 8)
			v = LLVMBuildZExt(h->b, v, h->i64, "");
	}
	if (f->add)
		v = LLVMBuildAdd(h->b, v, LLVMConstInt(h->i64, (unsigned long long)f->add, true), "");
	return v;
}

void hl_capture_prog(struct hctx *h)
{
	const struct host_sops_capture *c = h->capture;
	if (!c)
		return;
	const char *sec = arena_printf(&h->obj->arena, "kprobe/%s", c->func);
	hl_begin_fn(h, 0, HOST_CAPTURE_PROG, sec);
	hl_prog_append(h, &(struct host_prog){
		.func = HOST_CAPTURE_PROG, .section = sec,
		.probe = arena_printf(&h->obj->arena, "kprobe:%s", c->func),
		.attach = ATTACH_KPROBE, .run = HOST_RUN_DRIVER });
	LLVMValueRef v = slots(h, c);
	LLVMBasicBlockRef store = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "store");
	LLVMBasicBlockRef out = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "out");
	LLVMBuildCondBr(h->b, LLVMBuildICmp(h->b, LLVMIntNE, v, LLVMConstNull(h->ptr), ""),
			store, out);
	LLVMPositionBuilderAtEnd(h->b, store);
	for (int i = 0; i < c->nfields; i++)
		LLVMBuildStore(h->b, read_field(h, &c->fields[i]), host_gep(h, v, 8 * (unsigned)i));
	LLVMBuildBr(h->b, out);
	LLVMPositionBuilderAtEnd(h->b, out);
	LLVMBuildRet(h->b, host_const(h, 0));
}
