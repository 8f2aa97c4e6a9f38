/* The SIMT verifier's search: depth-first over paths, with pruning at
 * jump targets (simt_priv.h explains the strategy), budgets, statistics
 * and the optional log. */
#include <stdlib.h>
#include <string.h>

#include "bpf_asm.h"
#include "simt_priv.h"

#define SIMT_MAX_PROCESSED (1 << 20) /* instructions interpreted in all */
#define SIMT_MAX_SEEN 32             /* states kept per pruning point */

struct seen {
	struct seen *next;
	struct vstate s;
};

struct diag *simt_err(struct simt_env *e, int insn, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	e->failed = 1;
	if (e->prog->spans)
		return diag_error(e->diags, e->prog->spans[insn], "%s", buf);
	return diag_error_nospan(e->diags, "%s: insn %d: %s", e->prog->name,
				 insn, buf);
}

int simt_line(const struct simt_env *e, int insn)
{
	return e->prog->spans ? e->prog->spans[insn].first_line : insn;
}

struct vstate *simt_push(struct simt_env *e, const struct vstate *s)
{
	if (e->nwork == e->capwork) {
		int cap = e->capwork ? e->capwork * 2 : 16;
		struct vstate **w = realloc(e->work, sizeof(*w) * (size_t)cap);
		if (!w)
			return NULL;
		e->work = w;
		e->capwork = cap;
	}
	struct vstate *t = malloc(sizeof(*t));
	if (!t)
		return NULL;
	*t = *s;
	e->work[e->nwork++] = t;
	e->st.states++;
	return t;
}

/* True if an explored state at this point covers s; else remember s. */
static bool prune(struct simt_env *e, const struct vstate *s)
{
	for (struct seen *o = e->seen[s->pc]; o; o = o->next)
		if (state_subsumes(&o->s, s))
			return true;
	if (e->nseen[s->pc] >= SIMT_MAX_SEEN)
		return false;
	struct seen *n = malloc(sizeof(*n));
	if (!n)
		return false;
	n->s = *s;
	n->next = e->seen[s->pc];
	e->seen[s->pc] = n;
	e->nseen[s->pc]++;
	return false;
}

static void rejoin(struct simt_env *e, struct vstate *s)
{
	if (e->log)
		fprintf(e->log, "%d: lanes rejoin after the branch at %d; varying now:",
			s->pc, s->join_branch);
	for (int r = 0; r < BPF_NREGS; r++) {
		struct aval *v = &s->r[r];
		if (!(s->taint & (1u << r)) || v->kind == VK_UNINIT || v->varying)
			continue;
		v->varying = 1;
		v->origin = VO_BRANCH;
		v->oidx = s->join_branch;
		if (e->log)
			fprintf(e->log, " r%d", r);
	}
	if (e->log)
		fputc('\n', e->log);
	s->join = -1;
}

static int budget_insns(struct simt_env *e, struct vstate *s)
{
	int max = e->prog->budget.insns;
	if (max <= 0 || s->insns <= max)
		return 0;
	struct diag *dg;
	if (e->flags[s->pc] & IF_IN_LOOP) {
		dg = simt_err(e, s->pc, "loop exceeds the instruction budget: more than "
			      "%d instructions on one path", max);
		diag_hint(dg, "%s allows %d instructions per event; lower the loop's "
			  "bound", e->prog->name, max);
	} else {
		dg = simt_err(e, s->pc, "program exceeds the instruction budget: more "
			      "than %d instructions on one path", max);
		diag_hint(dg, "%s allows %d instructions per event", e->prog->name, max);
	}
	return -1;
}

static int lddw(struct simt_env *e, struct vstate *s, const struct bpf_insn *in)
{
	if (in->dst == BPF_REG_FP) {
		simt_err(e, s->pc, "r10 (the frame pointer) is read-only");
		return -1;
	}
	if (in->src == BPF_PSEUDO_MAP_IDX) {
		if (in->imm < 0 || in->imm >= e->prog->nmaps) {
			simt_err(e, s->pc, "no map with index %d", in->imm);
			return -1;
		}
		s->r[in->dst] = (struct aval){ .kind = VK_MAP, .map = in->imm };
	} else if (in->src == 0) {
		s->r[in->dst] = aval_const((uint32_t)in->imm |
					   (uint64_t)(uint32_t)in[1].imm << 32);
	} else {
		simt_err(e, s->pc, "unsupported 64-bit immediate load (src %d)", in->src);
		return -1;
	}
	s->pc += 2;
	return 0;
}

static int do_exit(struct simt_env *e, struct vstate *s)
{
	struct diag *dg;
	if (s->r[0].kind != VK_SCALAR) {
		dg = simt_err(e, s->pc, "r0 is %s at exit", simt_kind_name[s->r[0].kind]);
		diag_hint(dg, "set r0 to a number (0) before exit");
		return -1;
	}
	if (s->insns > e->st.longest_path)
		e->st.longest_path = s->insns;
	if (s->calls > e->st.helper_calls)
		e->st.helper_calls = s->calls;
	if (s->map_ops > e->st.map_ops)
		e->st.map_ops = s->map_ops;
	return 1;
}

/* One instruction: 0 to go on at s->pc, 1 at the end of the path. */
static int step(struct simt_env *e, struct vstate *s, struct vstate **fork)
{
	const struct bpf_insn *in = &e->prog->insns[s->pc];
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
	*fork = NULL;
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		if (simt_alu(e, s, in))
			return -1;
		s->pc++;
		return 0;
	case BPF_LD:
		if (bpf_is_lddw(in))
			return lddw(e, s, in);
		simt_err(e, s->pc, "packet loads (BPF_ABS, BPF_IND) are not supported");
		return -1;
	case BPF_LDX:
	case BPF_ST:
	case BPF_STX:
		if (simt_mem(e, s, in))
			return -1;
		s->pc++;
		return 0;
	default:
		break;
	}
	if (op == BPF_EXIT && cls == BPF_JMP)
		return do_exit(e, s);
	if (op == BPF_CALL && cls == BPF_JMP) {
		if (simt_call(e, s, in))
			return -1;
		s->pc++;
		return 0;
	}
	if (op == BPF_JA && cls == BPF_JMP) {
		s->pc += 1 + in->off;
		return 0;
	}
	if (op == BPF_JA || op == BPF_CALL || op == BPF_EXIT || op > BPF_JSLE) {
		simt_err(e, s->pc, "unknown jump instruction 0x%02x", in->code);
		return -1;
	}
	return simt_branch(e, s, in, fork);
}

static void log_changes(struct simt_env *e, const struct vstate *before,
			const struct vstate *after)
{
	for (int r = 0; r < BPF_NREGS; r++) {
		if (!memcmp(&before->r[r], &after->r[r], sizeof(struct aval)))
			continue;
		fprintf(e->log, "    r%d = ", r);
		aval_print(e->log, &after->r[r]);
		fputc('\n', e->log);
	}
	for (int k = 0; k < SIMT_SLOTS; k++) {
		if (!memcmp(&before->stack[k], &after->stack[k], sizeof(struct slot)))
			continue;
		fprintf(e->log, "    fp-%d = ", BPF_STACK_SIZE - 8 * k);
		if (after->stack[k].spilled)
			aval_print(e->log, &after->stack[k].val);
		else
			fprintf(e->log, "bytes 0x%02x %s", after->stack[k].init,
				after->stack[k].val.varying ? "varying" : "uniform");
		fputc('\n', e->log);
	}
}

static int walk(struct simt_env *e, struct vstate *s)
{
	for (;;) {
		if (s->join == s->pc)
			rejoin(e, s);
		if ((e->flags[s->pc] & IF_TARGET) && prune(e, s)) {
			e->st.pruned++;
			if (e->log)
				fprintf(e->log, "%d: pruned: an explored state covers this one\n",
					s->pc);
			return 0;
		}
		s->insns++;
		if (budget_insns(e, s))
			return -1;
		if (++e->st.processed > SIMT_MAX_PROCESSED) {
			simt_err(e, s->pc, "program is too complex to verify: more than %d "
				 "instructions explored", SIMT_MAX_PROCESSED);
			return -1;
		}
		struct vstate before, *fork;
		if (e->log) {
			before = *s;
			fprintf(e->log, "%d: ", s->pc);
			bpf_disasm_insn(e->log, e->prog->insns, s->pc, e->prog->ninsns,
					e->prog->maps, e->prog->nmaps);
			fputc('\n', e->log);
		}
		int rc = step(e, s, &fork);
		if (rc < 0 && !e->failed)
			diag_error_nospan(e->diags, "out of memory in the SIMT verifier");
		if (rc)
			return rc < 0 ? -1 : 0;
		if (e->log) {
			log_changes(e, &before, s);
			if (fork)
				fprintf(e->log, "    (also explores %d later)\n", fork->pc);
		}
	}
}

static int search(struct simt_env *e)
{
	struct vstate init;
	memset(&init, 0, sizeof(init));
	init.join = -1;
	init.r[1] = (struct aval){ .kind = VK_CTX };
	init.r[BPF_REG_FP] = (struct aval){ .kind = VK_STACK };
	if (!simt_push(e, &init)) {
		diag_error_nospan(e->diags, "out of memory in the SIMT verifier");
		return -1;
	}
	while (e->nwork) {
		struct vstate *s = e->work[--e->nwork];
		int rc = walk(e, s);
		free(s);
		if (rc)
			return -1;
	}
	return 0;
}

int simt_verify_log(const struct dev_prog *prog, struct diags *diags,
		    struct simt_stats *stats, FILE *log)
{
	struct simt_env e;
	int n = prog->ninsns, rc = -1;
	memset(&e, 0, sizeof(e));
	e.prog = prog;
	e.diags = diags;
	e.log = log;
	if (n <= 0) {
		diag_error_nospan(diags, "%s: the program is empty", prog->name);
		goto out;
	}
	e.flags = calloc((size_t)n, 1);
	e.jump_preds = calloc((size_t)n, sizeof(int));
	e.seen = calloc((size_t)n, sizeof(*e.seen));
	e.nseen = calloc((size_t)n, sizeof(int));
	if (!e.flags || !e.jump_preds || !e.seen || !e.nseen) {
		diag_error_nospan(diags, "out of memory in the SIMT verifier");
		goto out;
	}
	if (simt_cfg(&e) == 0)
		rc = search(&e);
out:
	for (int i = 0; i < e.nwork; i++)
		free(e.work[i]);
	free(e.work);
	if (e.seen) {
		for (int i = 0; i < n; i++) {
			while (e.seen[i]) {
				struct seen *next = e.seen[i]->next;
				free(e.seen[i]);
				e.seen[i] = next;
			}
		}
	}
	free(e.seen);
	free(e.nseen);
	free(e.flags);
	free(e.jump_preds);
	if (stats)
		*stats = e.st;
	return rc;
}

int simt_verify(const struct dev_prog *prog, struct diags *diags,
		struct simt_stats *stats)
{
	return simt_verify_log(prog, diags, stats, NULL);
}
