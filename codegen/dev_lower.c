/* Device probes (gdev:) lowered straight from the checked AST to eBPF.
 *
 * Why not through LLVM like the host probes: direct emission gives every
 * instruction the exact span of the AST node it came from, so the SIMT
 * verifier's rejections point at the source; it keeps full control of
 * the warp-collective helper ABI (device_abi.h: the builtin id must be a
 * constant beside its call, lane-varying values may only steer one-move
 * if-conversion triangles, keys and records live on the stack in the
 * layouts the helpers read); and a one-liner compiles in well under a
 * millisecond, with no LLVM in the loop.
 *
 * One program per probe: prologue (r9 = ctx, $variables zeroed), the
 * predicate (a branch to the exit if warp-uniform, lane_filter if not),
 * the body, and `r0 = 0; exit`. All programs share one map table. */
#include <stdio.h>
#include <string.h>

#include "dev_priv.h"

struct scan_state {
	struct lw *L;
	bool *ctx;
};

/* Every $variable of a probe gets a stack slot; note context reads. */
static void scan_node(struct node *n, void *arg)
{
	struct scan_state *st = arg;
	struct lw *L = st->L;
	if (n->kind == N_VAR && !dl_var_slot(L, n->u.var.name) &&
	    L->nvars < BPF_STACK_SIZE / 8) {
		L->vars[L->nvars].name = n->u.var.name;
		L->vars[L->nvars].off = 8 * (L->nvars + 1);
		L->nvars++;
	}
	if (n->kind == N_IDENT && n->u.ident.kind == ID_FIELD)
		*st->ctx = true;
	ast_visit_children(n, scan_node, st);
}

static void scan(struct lw *L, struct node *n, bool *ctx)
{
	struct scan_state st = { L, ctx };
	for (; n; n = n->next)
		scan_node(n, &st);
}

static void attach_info(struct lw *L, struct node *p, struct dev_probe *dp)
{
	struct arena *a = &L->prog->arena;
	int n = ast_count(p->u.probe.attach), k = 0;
	size_t len = 0;
	dp->attach = arena_zalloc(a, sizeof(*dp->attach) * (size_t)n);
	dp->nattach = n;
	for (struct node *at = p->u.probe.attach; at; at = at->next, k++) {
		struct dev_attach *da = &dp->attach[k];
		const struct attach *src = &at->u.attach;
		da->text = src->text;
		da->events = arena_zalloc(a, sizeof(char *) * (size_t)(src->nevents + 1));
		for (int e = 0; e < src->nevents; e++)
			da->events[e] = src->events[e]->name;
		da->nevents = src->nevents;
		da->filter = src->filter;
		da->filter_kind = src->nevents ? src->events[0]->filter : FILTER_NONE;
		len += strlen(src->text) + 1;
	}
	/* The program's name in messages: the attach points as written. */
	char *name = arena_zalloc(a, len + 1);
	for (k = 0; k < n; k++) {
		if (k)
			strcat(name, ",");
		strcat(name, dp->attach[k].text);
	}
	dp->prog.name = name;
}

static int lower_probe(struct lw *L, struct node *p, struct dev_probe *dp)
{
	bool ctx = false;
	struct node *pred = p->u.probe.pred;
	L->probe = p;
	L->insns = NULL;
	L->spans = NULL;
	L->n = L->cap = L->nlabels = L->caplabels = L->nfix = L->capfix = 0;
	L->labels = NULL;
	L->fixes = NULL;
	L->guard = 0;
	L->stack_full = false;
	L->vars = arena_zalloc(&L->prog->arena, sizeof(*L->vars) * (BPF_STACK_SIZE / 8));
	L->nvars = 0;
	if (L->counted) {
		/* the sites passed the predicate; the count is in the context */
		pred = NULL;
		ctx = true;
	}
	scan(L, pred, &ctx);
	scan(L, p->u.probe.body, &ctx);
	L->sp = 8 * L->nvars;
	L->exit_label = dl_new_label(L);
	attach_info(L, p, dp);
	dp->index = p->u.probe.index;
	dp->node = p;
	dp->func_name = arena_printf(&L->prog->arena, "gpux_probe_%d", p->u.probe.index);

	/* Prologue and epilogue point at the attach points. */
	L->cur = p->u.probe.attach->span;
	if (ctx)
		dl_emit_alu_x(L, BPF_MOV, DR_CTX, 1);
	/* bpftrace's variables start at 0; a lane-varying if may also read a
	 * variable before any path wrote it. */
	for (int k = 0; k < L->nvars; k++)
		dl_emit_st_k(L, 8, BPF_REG_FP, -L->vars[k].off, 0);
	int rc = 0;
	if (pred) {
		L->cur = pred->span;
		if (pred->unif == UNIF_UNIFORM) {
			rc = dl_cond_jump(L, pred, false, L->exit_label, 0);
		} else if ((rc = dl_eval_bool(L, pred, 0, 1)) == 0) {
			/* Lanes failing a varying predicate leave in lane_filter;
			 * the rest go on with uniform control flow. */
			dl_emit_call(L, DH_LANE_FILTER);
			dl_emit_jmp_k(L, BPF_JEQ, 0, 0, L->exit_label);
		}
	}
	if (dl_lower_block(L, p->u.probe.body) < 0)
		rc = -1;
	L->cur = p->u.probe.attach->span;
	dl_place_label(L, L->exit_label);
	dl_emit_mov_k(L, 0, 0);
	dl_emit(L, (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT });
	if (rc == 0 && (L->stack_full || dl_resolve_labels(L) < 0))
		rc = -1;
	dp->prog.insns = L->insns;
	dp->prog.spans = L->spans;
	dp->prog.ninsns = L->n;
	dp->prog.budget = DEV_BUDGET_DEFAULT;
	return rc;
}

int dev_lower(struct program *prog, struct dev_module *mod, struct diags *diags)
{
	struct lw L = { .prog = prog, .mod = mod, .diags = diags };
	int n = 0, rc = 0;
	memset(mod, 0, sizeof(*mod));
	for (struct node *p = prog->probes; p; p = p->next)
		if (place_is_device(p->u.probe.place))
			n++;
	mod->probes = arena_zalloc(&prog->arena, sizeof(*mod->probes) * (size_t)(n + 1));
	for (struct node *p = prog->probes; p; p = p->next) {
		if (!place_is_device(p->u.probe.place))
			continue;
		L.probe_no = mod->nprobes;
		struct dev_probe *dp = &mod->probes[mod->nprobes++];
		if (lower_probe(&L, p, dp) < 0) {
			rc = -1;
			continue;
		}
		if (!dev_only_counts(p))
			continue;
		struct dev_probe form = { 0 };
		L.counted = true;
		if (lower_probe(&L, p, &form) < 0)
			rc = -1;
		L.counted = false;
		dp->counted = form.prog;
		dp->counted_name = arena_printf(&prog->arena, "%s" GPUX_COUNTED_SUFFIX,
						dp->func_name);
	}
	/* Every program sees the final, shared map table. */
	for (int k = 0; k < mod->nprobes; k++) {
		mod->probes[k].prog.maps = mod->maps;
		mod->probes[k].prog.nmaps = mod->nmaps;
		mod->probes[k].counted.maps = mod->maps;
		mod->probes[k].counted.nmaps = mod->nmaps;
	}
	return rc;
}
