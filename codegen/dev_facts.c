/* Facts about a device module's maps that the controller needs and that
 * only the compiler can tell (dev_lower.h: struct dev_map_meta): which
 * maps the device reads or writes, which only add up, and whether the
 * device reads the host's clock. */
#include <string.h>

#include "dev_lower.h"

/* Maps the device program reads or overwrites (lookup, update, delete),
 * and those it changes at all (written), from the map reference in r1
 * at those calls; a reference it cannot follow marks every map. */
static void read_on_device(struct dev_module *mod)
{
	for (int p = 0; p < mod->nprobes; p++) {
		const struct dev_prog *prog = &mod->probes[p].prog;
		int reg_map[BPF_NREGS];
		for (int r = 0; r < BPF_NREGS; r++)
			reg_map[r] = -1;
		for (int i = 0; i < prog->ninsns; i++) {
			const struct bpf_insn *in = &prog->insns[i];
			unsigned cls = BPF_CLASS(in->code);
			if (bpf_is_lddw(in)) {
				reg_map[in->dst] = in->src == BPF_PSEUDO_MAP_IDX ? in->imm : -1;
				i++;
			} else if (in->code == (BPF_JMP | BPF_CALL)) {
				const struct dev_helper_info *hi = dev_helper_info(in->imm);
				bool op = hi && (hi->flags & DHF_MAP_OP);
				bool reads = in->imm == DH_MAP_LOOKUP || in->imm == DH_MAP_UPDATE ||
					     in->imm == DH_MAP_DELETE;
				int m = reg_map[1];
				for (int k = 0; op && k < mod->nmaps; k++)
					if (m < 0 || m == k) {
						mod->map_meta[k].read_on_device |= reads;
						mod->map_meta[k].written_on_device |=
							in->imm != DH_MAP_LOOKUP;
					}
				for (int r = 0; r <= 5; r++)
					reg_map[r] = -1;
			} else if (cls == BPF_ALU || cls == BPF_ALU64 || cls == BPF_LDX ||
				   cls == BPF_LD) {
				bool mov = BPF_OP(in->code) == BPF_MOV && (in->code & BPF_X) &&
					   cls == BPF_ALU64;
				reg_map[in->dst] = mov ? reg_map[in->src] : -1;
			}
		}
	}
}

struct adds {
	const struct map_info *mi;
	bool add, other;
};

static bool is_map(const struct node *n, const struct map_info *mi)
{
	return n->kind == N_MAP && n->u.map.info == mi;
}

static void scan_writes(struct node *n, void *arg)
{
	struct adds *a = arg;
	if (n->kind == N_ASSIGN && is_map(n->u.assign.target, a->mi)) {
		if (n->u.assign.op == OP_ADD || n->u.assign.op == OP_SUB)
			a->add = true;
		else
			a->other = true;
	} else if (n->kind == N_INCDEC && is_map(n->u.incdec.target, a->mi)) {
		a->add = true;
	}
	ast_visit_children(n, scan_writes, arg);
}

/* A plain map whose every write is `@m += v`, `@m -= v`, `@m++` or
 * `@m--` holds per-process partial sums, which merge by adding; any other
 * store makes the values whole, and the last slot's wins. */
static bool only_added(const struct program *prog, const struct map_info *mi)
{
	struct adds a = { mi, false, false };
	for (struct node *p = prog->probes; p; p = p->next)
		if (p->u.probe.place & PLACE_DEVICE)
			scan_writes(p, &a);
	return a.add && !a.other;
}

static void find_clock(struct node *n, void *arg)
{
	if (n->kind == N_IDENT && n->u.ident.builtin && !strcmp(n->u.ident.builtin->name, "nsecs"))
		*(bool *)arg = true;
	ast_visit_children(n, find_clock, arg);
}

/* What a predicate requires of the memory instruction: the `store`,
 * `!store` and `atomic` terms of its top-level && chain, each settled
 * per instruction (a probe is still called only where it holds). */
static unsigned access_only(const struct node *e)
{
	if (!e)
		return 0;
	if (e->kind == N_BINOP && e->u.binop.op == OP_LAND)
		return access_only(e->u.binop.lhs) | access_only(e->u.binop.rhs);
	bool neg = e->kind == N_UNOP && e->u.unop.op == OP_NOT;
	if (neg)
		e = e->u.unop.operand;
	if (e->kind != N_IDENT || e->u.ident.kind != ID_FIELD)
		return 0;
	if (!strcmp(e->u.ident.name, "store"))
		return neg ? GPUX_SITE_LOADS : GPUX_SITE_STORES;
	return !neg && !strcmp(e->u.ident.name, "atomic") ? GPUX_SITE_ATOMICS : 0;
}

void dev_map_facts(struct program *prog, struct dev_module *mod)
{
	for (int i = 0; i < mod->nprobes; i++)
		mod->probes[i].access_only = access_only(mod->probes[i].node->u.probe.pred);
	read_on_device(mod);
	mod->reads_clock = false;
	for (struct node *p = prog->probes; p && !mod->reads_clock; p = p->next)
		if (p->u.probe.place & PLACE_DEVICE)
			ast_visit_children(p, find_clock, &mod->reads_clock);
	for (int k = 0; k < mod->nmaps; k++) {
		struct dev_map_meta *meta = &mod->map_meta[k];
		meta->additive = meta->agg == AGG_NONE && only_added(prog, meta->info);
	}
}
