/* Transfer for helper calls: forbidden and unknown helpers, argument
 * kinds and bounds, uniform keys for helpers that one leader runs, the
 * call and map-op budgets, and what r0 holds afterwards. */
#include <inttypes.h>

#include "simt_priv.h"

/* A helper's pointer argument: size bytes on the stack, all written.
 * *varying tells whether any of them (or the pointer) vary. */
static int stack_arg(struct simt_env *e, struct vstate *s,
		     const struct dev_helper_info *h, int reg, uint32_t size,
		     const char *what, bool *varying)
{
	const struct aval *p = &s->r[reg];
	if (p->kind != VK_STACK) {
		simt_err(e, s->pc, "%s expects a pointer to the %s on the stack in r%d, "
			 "but r%d is %s", h->name, what, reg, reg,
			 simt_kind_name[p->kind]);
		return -1;
	}
	if (p->off < -BPF_STACK_SIZE || p->off + (int64_t)size > 0 || !size) {
		simt_err(e, s->pc, "%s: the %s (%u bytes at r10 - %" PRId64
			 ") is outside the stack", h->name, what, size, -p->off);
		return -1;
	}
	*varying = p->varying;
	for (int64_t b = p->off; b < p->off + (int64_t)size; b++) {
		struct slot *sl = &s->stack[(b + BPF_STACK_SIZE) / 8];
		if (!(sl->init & (1u << ((b + BPF_STACK_SIZE) % 8)))) {
			struct diag *dg = simt_err(e, s->pc,
				"%s: the %s at r10 - %" PRId64 " is not fully "
				"initialised (byte r10 - %" PRId64 ")", h->name, what,
				-p->off, -b);
			diag_hint(dg, "store all %u bytes before the call", size);
			return -1;
		}
		if (sl->spilled && aval_is_ptr(&sl->val)) {
			simt_err(e, s->pc, "%s: the %s holds a pointer", h->name, what);
			return -1;
		}
		*varying |= sl->val.varying;
	}
	return 0;
}

static int call_args(struct simt_env *e, struct vstate *s,
		     const struct dev_helper_info *h, int *map, bool *vkey,
		     bool *vkey_ok)
{
	*map = -1;
	*vkey = false;
	for (int a = 0; a < 5 && h->args[a] != DA_NONE; a++) {
		int reg = a + 1;
		struct aval *v = &s->r[reg];
		bool vary = false;
		if (simt_check_read(e, s, reg))
			return -1;
		if (v->varying && (h->args[a] == DA_IMM || h->args[a] == DA_SIZE ||
				   h->args[a] == DA_MAP)) {
			char buf[160];
			struct diag *dg = simt_err(e, s->pc, "%s with a lane-varying "
				"%s: %s", h->name, h->args[a] == DA_MAP ?
				"map reference" : "constant argument",
				aval_describe(e, reg, v, buf, sizeof(buf)));
			diag_hint(dg, "the call is made once for the whole warp, so "
				  "every lane must pass the same value");
			return -1;
		}
		switch (h->args[a]) {
		case DA_IMM:
		case DA_SIZE:
			if (!aval_is_const(v)) {
				simt_err(e, s->pc, "%s expects a known constant in r%d, "
					 "but r%d is %s", h->name, reg, reg,
					 aval_is_ptr(v) ? simt_kind_name[v->kind] :
					 "not known at verification time");
				return -1;
			}
			break;
		case DA_MAP:
			if (v->kind != VK_MAP) {
				simt_err(e, s->pc, "%s expects a map reference in r%d, "
					 "but r%d is %s", h->name, reg, reg,
					 simt_kind_name[v->kind]);
				return -1;
			}
			*map = v->map;
			break;
		case DA_KEY:
		case DA_VALUE:
			if (*map < 0) {
				simt_err(e, s->pc, "%s: no map argument before the key",
					 h->name);
				return -1;
			}
			if (stack_arg(e, s, h, reg, h->args[a] == DA_KEY ?
				      e->prog->maps[*map].key_size :
				      e->prog->maps[*map].value_size,
				      h->args[a] == DA_KEY ? "key" : "value", &vary))
				return -1;
			if (h->args[a] == DA_KEY)
				*vkey = vary;
			break;
		case DA_STACK:
			if (a + 1 >= 5 || !aval_is_const(&s->r[reg + 1]) ||
			    s->r[reg + 1].umin > BPF_STACK_SIZE) {
				simt_err(e, s->pc, "%s expects a constant size of at "
					 "most %d in r%d", h->name, BPF_STACK_SIZE, reg + 1);
				return -1;
			}
			if (stack_arg(e, s, h, reg, (uint32_t)s->r[reg + 1].umin,
				      "argument record", &vary))
				return -1;
			break;
		default:
			if (v->kind != VK_SCALAR) {
				simt_err(e, s->pc, "%s expects a number in r%d, but r%d is %s",
					 h->name, reg, reg, simt_kind_name[v->kind]);
				return -1;
			}
			break;
		}
	}
	*vkey_ok = !(h->flags & DHF_SIDE_EFFECT) || (h->flags & DHF_GROUPS_KEY);
	return 0;
}

static int budget_check(struct simt_env *e, struct vstate *s)
{
	const struct dev_budget *b = &e->prog->budget;
	if (b->helper_calls > 0 && s->calls > b->helper_calls) {
		struct diag *dg = simt_err(e, s->pc, "too many helper calls: more than "
					   "%d on one path", b->helper_calls);
		diag_hint(dg, "%s allows %d helper call%s per event", e->prog->name,
			  b->helper_calls, b->helper_calls == 1 ? "" : "s");
		return -1;
	}
	if (b->map_ops > 0 && s->map_ops > b->map_ops) {
		struct diag *dg = simt_err(e, s->pc, "too many map operations: more "
					   "than %d on one path", b->map_ops);
		diag_hint(dg, "%s allows %d map operation%s per event", e->prog->name,
			  b->map_ops, b->map_ops == 1 ? "" : "s");
		return -1;
	}
	return 0;
}

int simt_call(struct simt_env *e, struct vstate *s, const struct bpf_insn *in)
{
	const struct dev_helper_info *h = dev_helper_info(in->imm);
	struct diag *dg;
	int map;
	bool vkey, vkey_ok;
	if (in->src || !h) {
		dg = simt_err(e, s->pc, "unknown helper id %d", in->imm);
		diag_hint(dg, "device probes call only the helpers of device_abi.h");
		return -1;
	}
	if (h->flags & DHF_FORBIDDEN) {
		dg = simt_err(e, s->pc, "%s", dev_helper_forbidden_why(h->id));
		diag_hint(dg, "probes run inside the traced kernel and must never wait "
			  "for other threads");
		return -1;
	}
	if (call_args(e, s, h, &map, &vkey, &vkey_ok))
		return -1;
	if (vkey && !vkey_ok) {
		char buf[32];
		dg = simt_err(e, s->pc, "%s with a lane-varying key: lanes would race "
			      "on different entries", h->name);
		snprintf(buf, sizeof(buf), "%s", e->prog->maps[map].name);
		diag_hint(dg, "one leader writes per warp, so the key of map '%s' must "
			  "be warp-uniform; aggregations (count, sum, map_add, ...) "
			  "group lanes by key instead", buf);
		return -1;
	}
	s->calls++;
	if (h->flags & DHF_MAP_OP)
		s->map_ops++;
	if (budget_check(e, s))
		return -1;
	struct aval r0 = aval_scalar(0, UINT64_MAX);
	if (h->id == DH_BUILTIN) {
		const struct dev_builtin_info *bi =
			dev_builtin_info((enum dev_builtin)s->r[1].umin);
		if (s->r[1].umin >= DB_COUNT || !bi) {
			simt_err(e, s->pc, "unknown builtin id %" PRIu64, s->r[1].umin);
			return -1;
		}
		r0.varying = bi->unif == UNIF_VARYING;
		r0.origin = VO_BUILTIN;
		r0.oidx = bi->id;
	} else if (h->flags & DHF_RET_MAP_VALUE) {
		r0.kind = VK_MAPVAL_NULL;
		r0.map = map;
		r0.id = ++s->next_id;
		r0.off = 0;
		r0.varying = vkey;
		r0.origin = VO_LOOKUP;
	}
	for (int r = 1; r <= 5; r++)
		s->r[r] = (struct aval){ .kind = VK_UNINIT };
	s->r[0] = r0;
	return 0;
}
