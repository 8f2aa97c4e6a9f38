/* Checks of bpftrace's stacks and symbols: ustack and kstack (bare, or
 * with a mode and a frame limit), usym() and ksym() of an address,
 * uaddr() and kaddr() of a symbol's name, and the kernel-only builtins
 * (curtask). The words of the errors are bpftrace 0.17's. */
#include <string.h>

#include "catalog.h"
#include "sema_fns.h"

/* bpftrace's own bound on a stack's frames (the kernel's is
 * kernel.perf_event_max_stack, checked when the stack map is made) */
#define STACK_LIMIT_MAX 1024

static bool kernel_runs(const struct tctx *c)
{
	const struct provider *p = c->probe->u.probe.attach->u.attach.prov;
	return p && p->runner == RUNNER_KERNEL;
}

bool sema_kernel_only(struct tctx *c, struct node *n, const char *name)
{
	char pb[64];
	if (kernel_runs(c))
		return true;
	struct diag *dg = terr(c, n->span, "%s can not be used with \"%s\" probes", name,
			       probe_name(c, pb, sizeof(pb)));
	diag_hint(dg, "gpux reads it with a kernel helper: only probes the kernel runs have it "
		  "(kprobes, uprobes, tracepoints, profile...)");
	return false;
}

bool sema_target_only(struct tctx *c, struct node *n, const char *name)
{
	char pb[64];
	const struct attach *at = &c->probe->u.probe.attach->u.attach;
	if (at->prov && at->prov->runner == RUNNER_TARGET)
		return true;
	struct diag *dg = terr(c, n->span, "%s can not be used with \"%s\" probes", name,
			       probe_name(c, pb, sizeof(pb)));
	diag_hint(dg, "it is the device of the event's CUDA context: only gdev: and cuda: "
		  "probes have one");
	return false;
}

/* What bpftrace calls an argument in "expects a X literal (Y provided)". */
static const char *arg_kind(const struct node *a, bool *mode, enum stack_mode *m)
{
	*mode = false;
	if (!a)
		return "none";
	if (a->kind == N_IDENT) {
		const char *s = a->u.ident.name;
		if (!strcmp(s, "bpftrace") || !strcmp(s, "perf")) {
			*mode = true;
			*m = s[0] == 'p' ? STACK_PERF : STACK_BPFTRACE;
			return "stack mode";
		}
		return NULL; /* an unknown identifier: its own error */
	}
	if (a->kind == N_STR)
		return "string";
	return "integer";
}

/* ustack(N), ustack(mode), ustack(mode, N); the same for kstack. */
struct type sema_chk_stack(struct tctx *c, struct node *call, const struct fn *fn)
{
	bool user = fn->name[0] == 'u';
	struct type t = TYPE_STACK(user, STACK_BPFTRACE, STACK_DEFAULT_LIMIT);
	struct node *a = sema_arg(call, 0), *b = sema_arg(call, 1);
	bool is_mode;
	enum stack_mode m = STACK_BPFTRACE;
	for (struct node *x = call->u.call.args; x; x = x->next) {
		bool dummy;
		enum stack_mode dm;
		if (x->kind == N_IDENT && !arg_kind(x, &dummy, &dm))
			terr(c, x->span, "Unknown identifier: '%s'", x->u.ident.name);
	}
	const char *k = arg_kind(a, &is_mode, &m);
	struct node *lim = NULL;
	if (!b) {
		if (is_mode)
			t.stack_mode = (uint8_t)m;
		else if (a && a->kind == N_INT)
			lim = a;
		else if (a)
			terr(c, call->span, "%s() expects a integer literal (%s provided)", fn->name,
			     k ? k : "none");
	} else {
		if (!is_mode)
			terr(c, call->span, "%s() expects a stack mode literal (%s provided)",
			     fn->name, k ? k : "none");
		else
			t.stack_mode = (uint8_t)m;
		bool bm;
		const char *kb = arg_kind(b, &bm, &m);
		if (b->kind == N_INT)
			lim = b;
		else
			terr(c, call->span, "%s() expects a integer literal (%s provided)", fn->name,
			     kb ? kb : "none");
	}
	if (lim) {
		lim->type = TYPE_I64;
		uint64_t v = (uint64_t)lim->u.num.value;
		if (v > STACK_LIMIT_MAX)
			terr(c, call->span, "%s([int limit]): limit shouldn't exceed %d, %llu given",
			     fn->name, STACK_LIMIT_MAX, (unsigned long long)v);
		else if (v == 0)
			terr(c, lim->span, "%s(): a stack of 0 frames holds nothing; the limit is "
			     "1 to %d", fn->name, STACK_DEFAULT_LIMIT);
		else
			t.limit = (uint16_t)v;
	}
	sema_kernel_only(c, call, fn->name);
	return t;
}

/* usym(addr), ksym(addr): the address, symbolized when printed. */
struct type sema_chk_sym(struct tctx *c, struct node *call, const struct fn *fn)
{
	struct node *a = sema_arg(call, 0);
	check_expr(c, a);
	if (a->type.kind != TY_NONE && a->type.kind != TY_INT && a->type.kind != TY_PTR) {
		terr(c, call->span, "%s() expects an integer or pointer argument", fn->name);
		return TYPE_NONE;
	}
	return (struct type){ .kind = fn->name[0] == 'u' ? TY_USYM : TY_KSYM };
}

/* uaddr("sym"), kaddr("sym"): the address of a symbol of the probe's
 * binary, or of the kernel, found when compiling. */
struct type sema_chk_symaddr(struct tctx *c, struct node *call, const struct fn *fn)
{
	struct node *a = sema_arg(call, 0);
	char pb[64];
	if (!sema_str_literal(c, a)) {
		check_expr(c, a);
		terr(c, call->span, "%s() expects a string literal (%s provided)", fn->name,
		     a->type.kind == TY_STR ? "string" : "integer");
		return TYPE_NONE;
	}
	a->type = TYPE_STR;
	const struct attach *at = &c->probe->u.probe.attach->u.attach;
	const struct provider *p = at->prov;
	if (fn->name[0] == 'u' && (!p || p->syntax != SYN_UPROBE)) {
		terr(c, call->span, "uaddr can not be used with \"%s\" probes",
		     probe_name(c, pb, sizeof(pb)));
		return TYPE_NONE;
	}
	/* uaddr: a pointer to an integer of the object's size (1, 2 or 4
	 * bytes; else 8), as bpftrace types it, so *uaddr("x") reads x */
	uint64_t size;
	if (fn->name[0] == 'u' && c->prog->object_size && at->event &&
	    c->prog->object_size(at->event, c->prog->target_pid, a->u.str.s, &size) == 0) {
		struct type *in = arena_alloc(&c->prog->arena, sizeof(*in));
		*in = TYPE_INT(size == 1 || size == 2 || size == 4 ? (unsigned)size * 8 : 64, true);
		return (struct type){ .kind = TY_POINTER, .inner = in };
	}
	return TYPE_U64;
}
