/* Control-flow facts the search needs before it starts: valid jumps, no
 * falling off the end, no unreachable code, back edges and the branches
 * that leave loops, and the shape of if-conversion diamonds. */
#include <stdlib.h>
#include <string.h>

#include "simt_priv.h"

static bool is_jump(uint8_t code)
{
	uint8_t cls = BPF_CLASS(code);
	uint8_t op = BPF_OP(code);
	return (cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_CALL &&
	       op != BPF_EXIT;
}

static bool is_cond(uint8_t code)
{
	return is_jump(code) && BPF_OP(code) != BPF_JA;
}

/* Successors of instruction i: 0 (exit), 1 or 2 (fall-through first). */
int simt_succ(const struct bpf_insn *insns, int i, int out[2])
{
	const struct bpf_insn *in = &insns[i];
	if (bpf_is_lddw(in)) {
		out[0] = i + 2;
		return 1;
	}
	if (in->code == (BPF_JMP | BPF_EXIT))
		return 0;
	if (!is_jump(in->code)) {
		out[0] = i + 1;
		return 1;
	}
	if (BPF_OP(in->code) == BPF_JA) {
		out[0] = i + 1 + in->off;
		return 1;
	}
	out[0] = i + 1;
	out[1] = i + 1 + in->off;
	return 2;
}

static int check_targets(struct simt_env *e)
{
	const struct dev_prog *p = e->prog;
	for (int i = 0; i < p->ninsns; i++) {
		const struct bpf_insn *in = &p->insns[i];
		if (bpf_is_lddw(in)) {
			if (i + 1 >= p->ninsns) {
				simt_err(e, i, "the 64-bit immediate load is missing its second slot");
				return -1;
			}
			e->flags[i + 1] |= IF_LDDW_HI;
			i++;
		}
	}
	for (int i = 0; i < p->ninsns; i++) {
		int succ[2];
		if (e->flags[i] & IF_LDDW_HI)
			continue;
		int n = simt_succ(p->insns, i, succ);
		for (int k = 0; k < n; k++) {
			bool jumped = is_jump(p->insns[i].code) && (n == 1 || k == 1);
			if (succ[k] == p->ninsns && !jumped) {
				simt_err(e, i, "the program falls off its end after this instruction");
				return -1;
			}
			if (succ[k] < 0 || succ[k] >= p->ninsns ||
			    (e->flags[succ[k]] & IF_LDDW_HI)) {
				simt_err(e, i, "jump out of range: to instruction %d of %d",
					 succ[k], p->ninsns);
				return -1;
			}
			if (jumped) {
				e->flags[succ[k]] |= IF_TARGET;
				e->jump_preds[succ[k]]++;
			}
		}
	}
	return 0;
}

/* Depth-first numbering from the entry: reachability and back edges (an
 * edge to an instruction still on the DFS stack closes a loop). */
static int find_loops(struct simt_env *e, int *back_from, int *back_to,
		      int *nback)
{
	const struct dev_prog *p = e->prog;
	int n = p->ninsns;
	uint8_t *color = calloc((size_t)n, 1); /* 0 new, 1 open, 2 done */
	int *stack = malloc(sizeof(int) * (size_t)n);
	int *next = calloc((size_t)n, sizeof(int));
	int rc = 0, sp = 0;
	if (!color || !stack || !next) {
		rc = -1;
		goto out;
	}
	stack[sp++] = 0;
	color[0] = 1;
	while (sp) {
		int i = stack[sp - 1], succ[2];
		int ns = simt_succ(p->insns, i, succ);
		if (next[i] == ns) {
			color[i] = 2;
			sp--;
			continue;
		}
		int j = succ[next[i]++];
		if (color[j] == 1) {
			back_from[*nback] = i;
			back_to[*nback] = j;
			(*nback)++;
		} else if (!color[j]) {
			color[j] = 1;
			stack[sp++] = j;
		}
	}
	for (int i = 0; i < n; i++) {
		if (!color[i] && !(e->flags[i] & IF_LDDW_HI)) {
			simt_err(e, i, "unreachable instruction");
			rc = -1;
			break;
		}
	}
out:
	free(color);
	free(stack);
	free(next);
	return rc;
}

/* The natural loop of back edge from -> head: what reaches `from`
 * without passing head. Its conditional branches with a successor
 * outside it are the loop's exit tests. */
static int mark_loop(struct simt_env *e, int from, int head, int **preds,
		     int *npreds)
{
	int n = e->prog->ninsns;
	uint8_t *in = calloc((size_t)n, 1);
	int *stack = malloc(sizeof(int) * (size_t)n);
	int sp = 0;
	if (!in || !stack) {
		free(in);
		free(stack);
		return -1;
	}
	in[head] = 1;
	if (!in[from]) {
		in[from] = 1;
		stack[sp++] = from;
	}
	while (sp) {
		int i = stack[--sp];
		for (int k = 0; k < npreds[i]; k++) {
			int j = preds[i][k];
			if (!in[j]) {
				in[j] = 1;
				stack[sp++] = j;
			}
		}
	}
	for (int i = 0; i < n; i++) {
		int succ[2];
		if (!in[i])
			continue;
		e->flags[i] |= IF_IN_LOOP;
		if (!is_cond(e->prog->insns[i].code))
			continue;
		int ns = simt_succ(e->prog->insns, i, succ);
		for (int k = 0; k < ns; k++)
			if (!in[succ[k]])
				e->flags[i] |= IF_LOOP_EXIT;
	}
	free(in);
	free(stack);
	return 0;
}

static int loops(struct simt_env *e)
{
	int n = e->prog->ninsns, nback = 0, rc = -1;
	int *from = malloc(sizeof(int) * (size_t)n * 2);
	int *to = malloc(sizeof(int) * (size_t)n * 2);
	int *npreds = calloc((size_t)n, sizeof(int));
	int **preds = calloc((size_t)n, sizeof(int *));
	if (!from || !to || !npreds || !preds)
		goto out;
	if (find_loops(e, from, to, &nback))
		goto out;
	rc = 0;
	if (!nback)
		goto out;
	/* Predecessor lists, at most two successors per instruction. */
	int *cap = calloc((size_t)n, sizeof(int));
	if (!cap) {
		rc = -1;
		goto out;
	}
	for (int i = 0; i < n && !rc; i++) {
		int succ[2];
		if (e->flags[i] & IF_LDDW_HI)
			continue;
		int ns = simt_succ(e->prog->insns, i, succ);
		for (int k = 0; k < ns; k++) {
			int j = succ[k];
			if (npreds[j] == cap[j]) {
				cap[j] = cap[j] ? cap[j] * 2 : 2;
				int *np = realloc(preds[j], sizeof(int) * (size_t)cap[j]);
				if (!np) {
					rc = -1;
					break;
				}
				preds[j] = np;
			}
			preds[j][npreds[j]++] = i;
		}
	}
	free(cap);
	for (int b = 0; b < nback && !rc; b++)
		rc = mark_loop(e, from[b], to[b], preds, npreds);
out:
	if (preds)
		for (int i = 0; i < n; i++)
			free(preds[i]);
	free(preds);
	free(npreds);
	free(from);
	free(to);
	return rc;
}

int simt_cfg(struct simt_env *e)
{
	if (check_targets(e))
		return -1;
	if (loops(e)) {
		if (!e->diags->errors)
			diag_error_nospan(e->diags, "out of memory in the SIMT verifier");
		return -1;
	}
	return 0;
}

/* What an if-converted region may hold: register work and reads. */
static const char *region_insn_why(const struct bpf_insn *in)
{
	uint8_t cls = BPF_CLASS(in->code);
	if (cls == BPF_ALU || cls == BPF_ALU64 || cls == BPF_LD ||
	    (cls == BPF_LDX && BPF_MODE(in->code) == BPF_MEM))
		return NULL;
	if (cls == BPF_ST || cls == BPF_STX)
		return "stores to memory";
	if (BPF_OP(in->code) == BPF_CALL)
		return "calls";
	if (BPF_OP(in->code) == BPF_EXIT)
		return "exits";
	return "branches again";
}

/* Report a helper call first: it is the side effect that most needs a
 * warp-uniform point. */
static int scan(const struct simt_env *e, int from, int to, uint16_t *taint,
		const char **why, int *at)
{
	for (int i = from; i < to; i++) {
		const struct bpf_insn *in = &e->prog->insns[i];
		const char *w;
		if (e->flags[i] & IF_LDDW_HI)
			continue;
		if ((w = region_insn_why(in))) {
			if (*at < 0 || BPF_OP(in->code) == BPF_CALL) {
				*why = w;
				*at = i;
			}
			if (BPF_OP(in->code) == BPF_CALL)
				return -1;
			continue;
		}
		*taint |= (uint16_t)(1u << in->dst);
	}
	return *at >= 0 ? -1 : 0;
}

int simt_diamond(const struct simt_env *e, int b, int *join, uint16_t *taint,
		 const char **why, int *at)
{
	const struct bpf_insn *insns = e->prog->insns;
	int t = b + 1 + insns[b].off, j = t, else_start = -1;
	*at = -1;
	*taint = 0;
	if (t <= b) {
		*why = "it jumps backwards (a loop)";
		return -1;
	}
	/* if c goto E; A...; goto J; E: B...; J: -- or a triangle. */
	int then_end = t;
	const struct bpf_insn *last = &insns[t - 1];
	if (t - 1 > b && !(e->flags[t - 1] & IF_LDDW_HI) &&
	    last->code == (BPF_JMP | BPF_JA)) {
		j = t + last->off;
		if (j < t) {
			*why = "its two sides do not rejoin ahead of it";
			*at = t - 1;
			return -1;
		}
		then_end = t - 1;
		else_start = t;
	}
	if (scan(e, b + 1, then_end, taint, why, at) ||
	    scan(e, t, j, taint, why, at))
		return -1;
	if (j - b - 1 > SIMT_DIAMOND_MAX) {
		*why = "its two sides do not rejoin within 32 instructions";
		return -1;
	}
	for (int i = b + 1; i < j; i++) {
		if (e->jump_preds[i] > (i == else_start ? 1 : 0)) {
			*why = "another jump lands inside it";
			*at = i;
			return -1;
		}
	}
	*taint &= (uint16_t)~(1u << BPF_REG_FP);
	*join = j;
	return 0;
}
