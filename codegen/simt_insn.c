/* Transfer for memory accesses and conditional branches: where bounds
 * and uniform control flow are checked (helper calls: simt_call.c). */
#include <inttypes.h>
#include <string.h>

#include "simt_priv.h"

int simt_check_read(struct simt_env *e, const struct vstate *s, int reg)
{
	if (s->r[reg].kind != VK_UNINIT)
		return 0;
	struct diag *dg = simt_err(e, s->pc, "r%d is read before it is written", reg);
	if (reg >= 1 && reg <= 5 && s->calls)
		diag_hint(dg, "helper calls clobber r1-r5; keep values across calls in r6-r9");
	return -1;
}

static uint64_t size_max(int size)
{
	return size == 8 ? UINT64_MAX : (1ull << (8 * size)) - 1;
}

static int ctx_load(struct simt_env *e, struct vstate *s, int dst,
		    const struct aval *base, int64_t off, int size)
{
	int n;
	const struct dev_ctx_field *f = dev_ctx_fields(&n);
	for (int k = 0; k < n; k++) {
		if (f[k].off != off || f[k].size != size)
			continue;
		struct aval v = aval_scalar(0, size_max(size));
		v.varying = f[k].unif == UNIF_VARYING || base->varying;
		v.origin = VO_CTX;
		v.oidx = k;
		s->r[dst] = v;
		return 0;
	}
	struct diag *dg = simt_err(e, s->pc,
		"invalid context access: %d bytes at offset %" PRId64, size, off);
	char buf[256];
	int len = 0;
	for (int k = 0; k < n && len < (int)sizeof(buf); k++)
		len += snprintf(buf + len, sizeof(buf) - (size_t)len, "%s%s (%d at %d)",
				k ? ", " : "", f[k].name, f[k].size, f[k].off);
	diag_hint(dg, "the context's fields (bytes at offset): %s", buf);
	return -1;
}

/* Slot index and byte mask of [off, off + size) on the stack. */
static int stack_range(struct simt_env *e, struct vstate *s, int64_t off,
		       int size, int *slot, uint8_t *mask)
{
	if (off < -BPF_STACK_SIZE || off + size > 0) {
		struct diag *dg = simt_err(e, s->pc,
			"stack access out of bounds: %d bytes at r10 %c %" PRId64,
			size, off < 0 ? '-' : '+', off < 0 ? -off : off);
		diag_hint(dg, "the stack is the %d bytes below r10", BPF_STACK_SIZE);
		return -1;
	}
	if (off % size) {
		simt_err(e, s->pc, "misaligned %d-byte stack access at r10 - %" PRId64,
			 size, -off);
		return -1;
	}
	int64_t at = off + BPF_STACK_SIZE;
	*slot = (int)(at / 8);
	*mask = (uint8_t)(((1u << size) - 1) << (at % 8));
	return 0;
}

static int stack_load(struct simt_env *e, struct vstate *s, int dst,
		      const struct aval *base, int64_t off, int size)
{
	int k;
	uint8_t mask;
	if (stack_range(e, s, off, size, &k, &mask))
		return -1;
	struct slot *sl = &s->stack[k];
	if ((sl->init & mask) != mask) {
		struct diag *dg = simt_err(e, s->pc,
			"read of uninitialised stack bytes at r10 - %" PRId64, -off);
		diag_hint(dg, "store to the stack before reading it back");
		return -1;
	}
	struct aval v;
	if (sl->spilled && size == 8) {
		v = sl->val;
	} else if (sl->spilled && aval_is_ptr(&sl->val)) {
		simt_err(e, s->pc, "partial read of a pointer spilled at r10 - %d",
			 BPF_STACK_SIZE - k * 8);
		return -1;
	} else if (sl->spilled && aval_is_const(&sl->val)) {
		int shift = 8 * (int)((off + BPF_STACK_SIZE) % 8);
		v = sl->val;
		v.umin = v.umax = (sl->val.umin >> shift) & size_max(size);
	} else {
		v = aval_scalar(0, size_max(size));
		aval_vary_from(&v, &sl->val, NULL);
	}
	if (base->varying && !v.varying)
		aval_vary_from(&v, base, NULL);
	s->r[dst] = v;
	return 0;
}

static int stack_store(struct simt_env *e, struct vstate *s,
		       const struct aval *base, int64_t off, int size,
		       struct aval v)
{
	int k;
	uint8_t mask;
	if (stack_range(e, s, off, size, &k, &mask))
		return -1;
	if (base->varying) {
		/* Other lanes wrote other slots: none is uniform any more. */
		for (int j = 0; j < SIMT_SLOTS; j++)
			if (s->stack[j].init && !s->stack[j].val.varying)
				aval_vary_from(&s->stack[j].val, base, NULL);
		if (!v.varying)
			aval_vary_from(&v, base, NULL);
	}
	struct slot *sl = &s->stack[k];
	if (size == 8) {
		sl->init = 0xff;
		sl->spilled = 1;
		sl->val = v;
		return 0;
	}
	if (aval_is_ptr(&v)) {
		simt_err(e, s->pc, "partial store of a pointer (%s) to the stack",
			 simt_kind_name[v.kind]);
		return -1;
	}
	/* The slot keeps its other bytes: it varies if any write did. */
	struct aval old = sl->init ? sl->val : aval_const(0);
	if (sl->spilled && aval_is_ptr(&old))
		sl->init = 0;
	sl->spilled = 0;
	sl->init |= mask;
	sl->val = aval_scalar(0, UINT64_MAX);
	aval_vary_from(&sl->val, &old, &v);
	return 0;
}

int simt_mem(struct simt_env *e, struct vstate *s, const struct bpf_insn *in)
{
	uint8_t cls = BPF_CLASS(in->code);
	bool load = cls == BPF_LDX;
	int breg = load ? in->src : in->dst, size = bpf_size_bytes(in->code);
	if (BPF_MODE(in->code) == BPF_ATOMIC) {
		struct diag *dg = simt_err(e, s->pc,
			"atomic operations are not allowed in device probes");
		diag_hint(dg, "lanes of many warps would contend on one address; use an "
			  "aggregation (count, sum, min, max) or map_add, which "
			  "combine the lanes and update once per warp");
		return -1;
	}
	if (BPF_MODE(in->code) != BPF_MEM) {
		simt_err(e, s->pc, "unsupported load or store mode 0x%02x", in->code);
		return -1;
	}
	if (simt_check_read(e, s, breg))
		return -1;
	if (cls == BPF_STX && simt_check_read(e, s, in->src))
		return -1;
	if (load && in->dst == BPF_REG_FP) {
		simt_err(e, s->pc, "r10 (the frame pointer) is read-only");
		return -1;
	}
	struct aval base = s->r[breg];
	int64_t off = base.off + in->off;
	struct diag *dg;
	switch (base.kind) {
	case VK_CTX:
		if (load)
			return ctx_load(e, s, in->dst, &base, off, size);
		simt_err(e, s->pc, "the context is read-only");
		return -1;
	case VK_STACK:
		if (load)
			return stack_load(e, s, in->dst, &base, off, size);
		return stack_store(e, s, &base, off, size,
				   cls == BPF_STX ? s->r[in->src]
						  : aval_const((uint64_t)(int64_t)in->imm &
							       size_max(size)));
	case VK_MAPVAL:
		if (!load) {
			dg = simt_err(e, s->pc, "stores into map values are not allowed");
			diag_hint(dg, "update maps through helpers (map_update, map_add), "
				  "which write once per warp");
			return -1;
		}
		if (off < 0 || off + size > e->prog->maps[base.map].value_size ||
		    off % size) {
			simt_err(e, s->pc, "map value access out of bounds: %d bytes at "
				 "offset %" PRId64 " of map '%s' (value size %u)", size,
				 off, e->prog->maps[base.map].name,
				 e->prog->maps[base.map].value_size);
			return -1;
		}
		s->r[in->dst] = aval_scalar(0, size_max(size));
		aval_vary_from(&s->r[in->dst], &base, NULL);
		return 0;
	case VK_MAPVAL_NULL:
		dg = simt_err(e, s->pc, "r%d may be null here", breg);
		diag_hint(dg, "compare it with 0 first: map_lookup returns 0 for a missing key");
		return -1;
	default:
		dg = simt_err(e, s->pc, "invalid memory access: r%d is %s, not a pointer "
			      "to the context, the stack or a map value", breg,
			      simt_kind_name[base.kind]);
		if (base.kind == VK_MAP)
			diag_hint(dg, "read map values through map_lookup");
		return -1;
	}
}

/* A map_lookup result compared with 0: both sides learn it, and so does
 * every copy of it. */
static void null_check(struct vstate *s, int id, bool is_null)
{
	for (int r = 0; r < BPF_NREGS; r++) {
		struct aval *v = &s->r[r];
		if (v->kind == VK_MAPVAL_NULL && v->id == id) {
			if (is_null)
				v->kind = VK_SCALAR, v->umin = v->umax = 0;
			else
				v->kind = VK_MAPVAL;
		}
	}
	for (int k = 0; k < SIMT_SLOTS; k++) {
		struct aval *v = &s->stack[k].val;
		if (s->stack[k].spilled && v->kind == VK_MAPVAL_NULL && v->id == id) {
			if (is_null)
				v->kind = VK_SCALAR, v->umin = v->umax = 0;
			else
				v->kind = VK_MAPVAL;
		}
	}
}

static int varying_branch(struct simt_env *e, struct vstate *s, int vreg)
{
	char buf[160];
	const char *why;
	int at, join;
	uint16_t taint;
	aval_describe(e, vreg, &s->r[vreg], buf, sizeof(buf));
	if (e->flags[s->pc] & IF_LOOP_EXIT) {
		struct diag *dg = simt_err(e, s->pc, "loop exit depends on a "
					   "lane-varying value: %s", buf);
		diag_hint(dg, "lanes would leave the loop at different times; bound "
			  "the loop with a warp-uniform value");
		return -1;
	}
	if (simt_diamond(e, s->pc, &join, &taint, &why, &at)) {
		struct diag *dg = simt_err(e, s->pc, "branch depends on a "
					   "lane-varying value: %s", buf);
		const struct dev_helper_info *h = at >= 0 ?
			dev_helper_info(e->prog->insns[at].imm) : NULL;
		if (at >= 0 && BPF_OP(e->prog->insns[at].code) == BPF_CALL)
			diag_hint(dg, "a lane-varying branch may only skip register work "
				  "that rejoins within %d instructions; here the "
				  "region calls %s (line %d)", SIMT_DIAMOND_MAX,
				  h ? h->name : "a helper", simt_line(e, at));
		else if (at >= 0)
			diag_hint(dg, "a lane-varying branch may only skip register work "
				  "that rejoins within %d instructions; here the "
				  "region %s (line %d)", SIMT_DIAMOND_MAX, why,
				  simt_line(e, at));
		else
			diag_hint(dg, "a lane-varying branch may only skip register work "
				  "that rejoins within %d instructions; here %s",
				  SIMT_DIAMOND_MAX, why);
		if (at >= 0 && (BPF_CLASS(e->prog->insns[at].code) == BPF_ST ||
				BPF_CLASS(e->prog->insns[at].code) == BPF_STX ||
				BPF_OP(e->prog->insns[at].code) == BPF_CALL))
			diag_hint(dg, "side effects happen at warp-uniform points: to act "
				  "for some lanes only, filter them with lane_filter "
				  "(a predicate) instead of branching");
		return -1;
	}
	s->join = join;
	s->join_branch = s->pc;
	s->taint = taint;
	return 0;
}

/* A loop exit test that cannot be decided must at least compare values
 * whose range fits the instruction budget, or the loop is unbounded. */
static int loop_bound(struct simt_env *e, struct vstate *s,
		      const struct bpf_insn *in, const struct aval *a,
		      const struct aval *b)
{
	uint64_t budget = e->prog->budget.insns > 0 ?
		(uint64_t)e->prog->budget.insns : UINT64_MAX;
	const struct aval *wide = a->umax - a->umin > b->umax - b->umin ? a : b;
	if (wide->umax - wide->umin <= budget && BPF_OP(in->code) != BPF_JSET)
		return 0;
	int reg = wide == a ? in->dst : in->src;
	struct diag *dg = simt_err(e, s->pc, "loop is not bounded: its exit test "
		"depends on r%d, which is only known to be in [%" PRIu64 ", %" PRIu64 "]",
		reg, wide->umin, wide->umax);
	diag_hint(dg, "bound the loop by a constant, or clamp the bound first "
		  "(e.g. r%d &= 15)", reg);
	return -1;
}

int simt_branch(struct simt_env *e, struct vstate *s,
		const struct bpf_insn *in, struct vstate **fork)
{
	bool x = BPF_SRC(in->code) == BPF_X;
	*fork = NULL;
	if (simt_check_read(e, s, in->dst) || (x && simt_check_read(e, s, in->src)))
		return -1;
	struct aval *a = &s->r[in->dst], kb, *b = x ? &s->r[in->src] : &kb;
	uint8_t op = BPF_OP(in->code);
	kb = aval_const(BPF_CLASS(in->code) == BPF_JMP32 ? (uint32_t)in->imm
			: (uint64_t)(int64_t)in->imm);
	int target = s->pc + 1 + in->off, id = -1;
	if (aval_is_ptr(a) || aval_is_ptr(b)) {
		const struct aval *p = aval_is_ptr(a) ? a : b, *o = p == a ? b : a;
		if ((p->kind != VK_MAPVAL_NULL && p->kind != VK_MAPVAL) ||
		    (op != BPF_JEQ && op != BPF_JNE) || !aval_is_const(o) ||
		    o->umin || BPF_CLASS(in->code) != BPF_JMP) {
			simt_err(e, s->pc, "comparison of r%d, %s; only map_lookup "
				 "results may be compared, with 0", p == a ? in->dst :
				 in->src, simt_kind_name[p->kind]);
			return -1;
		}
		id = p->id;
	}
	if (a->varying || b->varying) {
		int vreg = a->varying ? in->dst : in->src;
		if (varying_branch(e, s, vreg))
			return -1;
	}
	int out;
	if (id >= 0) {
		const struct aval *p = aval_is_ptr(a) ? a : b;
		out = p->kind == VK_MAPVAL ? op == BPF_JNE : -1;
		if (out < 0) {
			struct vstate *t = simt_push(e, s);
			if (!t)
				return -1;
			null_check(t, id, op == BPF_JEQ);
			t->pc = target;
			*fork = t;
			null_check(s, id, op != BPF_JEQ);
		}
		s->pc = out == 1 ? target : s->pc + 1;
		return 0;
	}
	out = simt_decide(in, a, b);
	if (out < 0 && (e->flags[s->pc] & IF_LOOP_EXIT) && loop_bound(e, s, in, a, b))
		return -1;
	if (out < 0) {
		struct vstate *t = simt_push(e, s);
		if (!t)
			return -1;
		simt_refine(in, &t->r[in->dst], x ? &t->r[in->src] : &kb, true);
		t->pc = target;
		*fork = t;
		simt_refine(in, a, b, false);
	}
	s->pc = out == 1 ? target : s->pc + 1;
	return 0;
}
