/* The abstract values: kinds, unsigned ranges, uniformity; ALU transfer,
 * branch outcomes and narrowing, and state subsumption for pruning. */
#include <inttypes.h>
#include <string.h>

#include "simt_priv.h"

const char *const simt_kind_name[] = {
	[VK_UNINIT] = "uninitialised",
	[VK_SCALAR] = "a number",
	[VK_CTX] = "the context pointer",
	[VK_STACK] = "a stack pointer",
	[VK_MAP] = "a map reference",
	[VK_MAPVAL_NULL] = "a map value pointer that may be null",
	[VK_MAPVAL] = "a map value pointer",
};

struct aval aval_scalar(uint64_t umin, uint64_t umax)
{
	struct aval v = { .kind = VK_SCALAR, .umin = umin, .umax = umax };
	return v;
}

struct aval aval_const(uint64_t c)
{
	return aval_scalar(c, c);
}

bool aval_is_const(const struct aval *v)
{
	return v->kind == VK_SCALAR && v->umin == v->umax;
}

bool aval_is_ptr(const struct aval *v)
{
	return v->kind > VK_SCALAR;
}

/* The result of an operation varies if an operand does; keep the first
 * varying operand's origin for messages. */
void aval_vary_from(struct aval *dst, const struct aval *a,
		    const struct aval *b)
{
	const struct aval *from = a && a->varying ? a : b && b->varying ? b : NULL;
	dst->varying = from != NULL;
	dst->origin = from ? from->origin : VO_NONE;
	dst->oidx = from ? from->oidx : 0;
}

const char *aval_describe(const struct simt_env *e, int reg,
			  const struct aval *v, char *buf, size_t len)
{
	int n = snprintf(buf, len, "r%d", reg);
	if (n < 0 || (size_t)n >= len || !v->varying)
		return buf;
	int nf;
	const struct dev_ctx_field *f = dev_ctx_fields(&nf);
	const struct dev_builtin_info *bi;
	switch (v->origin) {
	case VO_CTX:
		snprintf(buf + n, len - (size_t)n, " (from ctx field '%s')",
			 f[v->oidx].name);
		break;
	case VO_BUILTIN:
		bi = dev_builtin_info((enum dev_builtin)v->oidx);
		snprintf(buf + n, len - (size_t)n, " (from builtin '%s')",
			 bi ? bi->name : "?");
		break;
	case VO_LOOKUP:
		snprintf(buf + n, len - (size_t)n,
			 " (from a map lookup with a lane-varying key)");
		break;
	case VO_BRANCH:
		snprintf(buf + n, len - (size_t)n,
			 " (set under the lane-varying branch at line %d)",
			 simt_line(e, v->oidx));
		break;
	default:
		break;
	}
	return buf;
}

void aval_print(FILE *out, const struct aval *v)
{
	const char *u = v->varying ? "varying" : "uniform";
	switch (v->kind) {
	case VK_UNINIT:
		fprintf(out, "uninit");
		return;
	case VK_SCALAR:
		if (v->umin == v->umax)
			fprintf(out, "%s %" PRId64, u, (int64_t)v->umin);
		else
			fprintf(out, "%s [%" PRIu64 ", %" PRIu64 "]", u, v->umin, v->umax);
		return;
	case VK_MAP:
		fprintf(out, "map#%d", v->map);
		return;
	case VK_MAPVAL_NULL:
	case VK_MAPVAL:
		fprintf(out, "%s map_value%s#%d(id %d)%+" PRId64, u,
			v->kind == VK_MAPVAL_NULL ? "_or_null" : "", v->map, v->id,
			v->off);
		return;
	default:
		fprintf(out, "%s %s%+" PRId64, u, v->kind == VK_CTX ? "ctx" : "fp",
			v->off);
		return;
	}
}

static bool aval_subsumes(const struct aval *o, const struct aval *c)
{
	/* Never read on the explored path, so it cannot matter here. */
	if (o->kind == VK_UNINIT)
		return true;
	if (o->kind != c->kind || (c->varying && !o->varying))
		return false;
	if (o->kind == VK_SCALAR)
		return o->umin <= c->umin && c->umax <= o->umax;
	return o->off == c->off && o->map == c->map && o->id == c->id;
}

bool state_subsumes(const struct vstate *o, const struct vstate *c)
{
	if (o->insns < c->insns || o->calls < c->calls ||
	    o->map_ops < c->map_ops || o->join != c->join ||
	    (o->join >= 0 && o->taint != c->taint))
		return false;
	for (int r = 0; r < BPF_NREGS; r++)
		if (!aval_subsumes(&o->r[r], &c->r[r]))
			return false;
	for (int k = 0; k < SIMT_SLOTS; k++) {
		const struct slot *os = &o->stack[k], *cs = &c->stack[k];
		if ((os->init & cs->init) != os->init)
			return false;
		if (!os->init)
			continue;
		if (os->spilled != cs->spilled ||
		    !aval_subsumes(&os->val, &cs->val))
			return false;
	}
	return true;
}

static uint64_t mask_upto(uint64_t v)
{
	for (int s = 1; s < 64; s <<= 1)
		v |= v >> s;
	return v;
}

static struct aval trunc32(struct aval a)
{
	if (a.umax <= UINT32_MAX)
		return a;
	if (aval_is_const(&a))
		return aval_const(a.umin & UINT32_MAX);
	return aval_scalar(0, UINT32_MAX);
}

/* Scalar op on ranges; constants are exact, the rest conservative. */
static struct aval scalar_op(uint8_t op, struct aval a, struct aval b,
			     bool is64)
{
	uint64_t lim = is64 ? UINT64_MAX : UINT32_MAX;
	if (!is64) {
		a = trunc32(a);
		b = trunc32(b);
	}
	int sh = is64 ? 63 : 31;
	if (aval_is_const(&a) && aval_is_const(&b)) {
		uint64_t x = a.umin, y = b.umin, r;
		switch (op) {
		case BPF_ADD: r = x + y; break;
		case BPF_SUB: r = x - y; break;
		case BPF_MUL: r = x * y; break;
		case BPF_DIV: r = y ? x / y : 0; break;
		case BPF_MOD: r = y ? x % y : x; break;
		case BPF_OR: r = x | y; break;
		case BPF_AND: r = x & y; break;
		case BPF_XOR: r = x ^ y; break;
		case BPF_LSH: r = x << (y & (uint64_t)sh); break;
		case BPF_RSH: r = x >> (y & (uint64_t)sh); break;
		case BPF_ARSH:
			r = is64 ? (uint64_t)((int64_t)x >> (y & 63))
				 : (uint64_t)(uint32_t)((int32_t)x >> (y & 31));
			break;
		default: r = 0; break;
		}
		return aval_const(r & lim);
	}
	struct aval r = aval_scalar(0, lim);
	switch (op) {
	case BPF_ADD:
		if (a.umax <= lim - b.umax)
			r = aval_scalar(a.umin + b.umin, a.umax + b.umax);
		break;
	case BPF_SUB:
		if (a.umin >= b.umax)
			r = aval_scalar(a.umin - b.umax, a.umax - b.umin);
		break;
	case BPF_MUL:
		if (a.umax <= UINT32_MAX && b.umax <= UINT32_MAX &&
		    a.umax * b.umax <= lim)
			r = aval_scalar(a.umin * b.umin, a.umax * b.umax);
		break;
	case BPF_DIV:
		if (aval_is_const(&b) && b.umin)
			r = aval_scalar(a.umin / b.umin, a.umax / b.umin);
		else
			r = aval_scalar(0, a.umax);
		break;
	case BPF_MOD:
		if (aval_is_const(&b) && b.umin)
			r = aval_scalar(0, a.umax < b.umin - 1 ? a.umax : b.umin - 1);
		else
			r = aval_scalar(0, a.umax);
		break;
	case BPF_AND:
		r = aval_scalar(0, a.umax < b.umax ? a.umax : b.umax);
		break;
	case BPF_OR:
		r = aval_scalar(a.umin > b.umin ? a.umin : b.umin,
				mask_upto(a.umax | b.umax));
		break;
	case BPF_XOR:
		r = aval_scalar(0, mask_upto(a.umax | b.umax));
		break;
	case BPF_LSH:
		if (aval_is_const(&b) && b.umin <= (uint64_t)sh &&
		    a.umax <= (lim >> b.umin))
			r = aval_scalar(a.umin << b.umin, a.umax << b.umin);
		break;
	case BPF_RSH:
		if (aval_is_const(&b) && b.umin <= (uint64_t)sh)
			r = aval_scalar(a.umin >> b.umin, a.umax >> b.umin);
		else
			r = aval_scalar(0, a.umax);
		break;
	default:
		break;
	}
	return r;
}

static int ptr_arith(struct simt_env *e, struct vstate *s,
		     const struct bpf_insn *in, const struct aval *src)
{
	struct aval *d = &s->r[in->dst];
	uint8_t op = BPF_OP(in->code);
	bool ok_kind = d->kind == VK_CTX || d->kind == VK_STACK ||
		       d->kind == VK_MAPVAL;
	if (!ok_kind || BPF_CLASS(in->code) != BPF_ALU64 ||
	    (op != BPF_ADD && op != BPF_SUB) || !aval_is_const(src)) {
		struct diag *dg = simt_err(e, s->pc,
			"pointer arithmetic on r%d (%s) other than adding a constant",
			in->dst, simt_kind_name[d->kind]);
		diag_hint(dg, "only known constants may be added to stack, context and "
			  "non-null map value pointers");
		return -1;
	}
	int64_t c = (int64_t)src->umin;
	if (c > (1 << 20) || c < -(1 << 20) || d->off > (1 << 20) ||
	    d->off < -(1 << 20)) {
		simt_err(e, s->pc, "pointer offset out of range on r%d", in->dst);
		return -1;
	}
	d->off += op == BPF_ADD ? c : -c;
	if (src->varying && !d->varying)
		aval_vary_from(d, d, src);
	return 0;
}

int simt_alu(struct simt_env *e, struct vstate *s, const struct bpf_insn *in)
{
	bool is64 = BPF_CLASS(in->code) == BPF_ALU64;
	uint8_t op = BPF_OP(in->code);
	struct aval src, *d = &s->r[in->dst];
	if (in->dst == BPF_REG_FP) {
		simt_err(e, s->pc, "r10 (the frame pointer) is read-only");
		return -1;
	}
	if (op != BPF_MOV && simt_check_read(e, s, in->dst))
		return -1;
	if (BPF_SRC(in->code) == BPF_X && op != BPF_NEG && op != BPF_END) {
		if (simt_check_read(e, s, in->src))
			return -1;
		src = s->r[in->src];
	} else {
		src = aval_const(is64 ? (uint64_t)(int64_t)in->imm : (uint32_t)in->imm);
	}
	if (in->off && (op == BPF_MOV || op == BPF_DIV || op == BPF_MOD)) {
		/* ISA v4 sign-extending moves and signed division: only the
		 * range is kept, so constants need no signed arithmetic. */
		if (aval_is_ptr(&src) || aval_is_ptr(d)) {
			simt_err(e, s->pc, "sign-extending or signed operation on a pointer");
			return -1;
		}
		struct aval r = aval_scalar(0, is64 ? UINT64_MAX : UINT32_MAX);
		aval_vary_from(&r, op == BPF_MOV ? &src : d, &src);
		*d = r;
		return 0;
	}
	if (op == BPF_MOV) {
		if (is64 || !aval_is_ptr(&src)) {
			*d = is64 ? src : trunc32(src);
			aval_vary_from(d, &src, NULL);
			return 0;
		}
		simt_err(e, s->pc, "32-bit move of r%d, %s", in->src,
			 simt_kind_name[src.kind]);
		return -1;
	}
	if (aval_is_ptr(d) || aval_is_ptr(&src)) {
		if (!aval_is_ptr(d) && op != BPF_NEG && op != BPF_END) {
			struct diag *dg = simt_err(e, s->pc,
				"arithmetic with r%d, %s, into a number",
				in->src, simt_kind_name[src.kind]);
			diag_hint(dg, "pointers cannot be turned into numbers");
			return -1;
		}
		return ptr_arith(e, s, in, &src);
	}
	struct aval r;
	if (op == BPF_NEG) {
		r = scalar_op(BPF_SUB, aval_const(0), *d, is64);
		src = *d;
	} else if (op == BPF_END) {
		r = aval_scalar(0, in->imm >= 64 ? UINT64_MAX :
			in->imm == 32 ? UINT32_MAX : 0xffff);
	} else if (op <= BPF_ARSH && op != BPF_NEG) {
		r = scalar_op(op, *d, src, is64);
	} else {
		simt_err(e, s->pc, "unknown ALU operation 0x%02x", in->code);
		return -1;
	}
	aval_vary_from(&r, d, &src);
	*d = r;
	return 0;
}

/* Compare two ranges; signed and 32-bit tests only where they agree
 * with the unsigned 64-bit one. */
int simt_decide(const struct bpf_insn *in, const struct aval *a,
		const struct aval *b)
{
	uint8_t op = BPF_OP(in->code);
	bool j32 = BPF_CLASS(in->code) == BPF_JMP32;
	uint64_t lim = j32 ? UINT32_MAX : UINT64_MAX;
	uint64_t slim = j32 ? INT32_MAX : INT64_MAX;
	bool signed_op = op == BPF_JSGT || op == BPF_JSGE || op == BPF_JSLT ||
			 op == BPF_JSLE;
	if (aval_is_const(a) && aval_is_const(b)) {
		uint64_t x = a->umin & lim, y = b->umin & lim;
		int64_t sx = j32 ? (int32_t)x : (int64_t)x;
		int64_t sy = j32 ? (int32_t)y : (int64_t)y;
		switch (op) {
		case BPF_JEQ: return x == y;
		case BPF_JNE: return x != y;
		case BPF_JGT: return x > y;
		case BPF_JGE: return x >= y;
		case BPF_JLT: return x < y;
		case BPF_JLE: return x <= y;
		case BPF_JSET: return (x & y) != 0;
		case BPF_JSGT: return sx > sy;
		case BPF_JSGE: return sx >= sy;
		case BPF_JSLT: return sx < sy;
		case BPF_JSLE: return sx <= sy;
		default: return -1;
		}
	}
	if (a->umax > (signed_op ? slim : lim) || b->umax > (signed_op ? slim : lim))
		return -1;
	switch (op) {
	case BPF_JEQ:
	case BPF_JNE:
		if (a->umax < b->umin || b->umax < a->umin)
			return op == BPF_JNE;
		return -1;
	case BPF_JGT: case BPF_JSGT:
		return a->umin > b->umax ? 1 : a->umax <= b->umin ? 0 : -1;
	case BPF_JGE: case BPF_JSGE:
		return a->umin >= b->umax ? 1 : a->umax < b->umin ? 0 : -1;
	case BPF_JLT: case BPF_JSLT:
		return a->umax < b->umin ? 1 : a->umin >= b->umax ? 0 : -1;
	case BPF_JLE: case BPF_JSLE:
		return a->umax <= b->umin ? 1 : a->umin > b->umax ? 0 : -1;
	default:
		return -1;
	}
}

/* Narrow v by "v OP c" holding (unsigned view). */
static void narrow(struct aval *v, uint8_t op, uint64_t c)
{
	switch (op) {
	case BPF_JEQ:
		v->umin = v->umax = c;
		break;
	case BPF_JNE:
		if (v->umin == c && v->umin < v->umax)
			v->umin++;
		else if (v->umax == c && v->umin < v->umax)
			v->umax--;
		break;
	case BPF_JGT:
		if (c < UINT64_MAX && v->umin < c + 1)
			v->umin = c + 1;
		break;
	case BPF_JGE:
		if (v->umin < c)
			v->umin = c;
		break;
	case BPF_JLT:
		if (c > 0 && v->umax > c - 1)
			v->umax = c - 1;
		break;
	case BPF_JLE:
		if (v->umax > c)
			v->umax = c;
		break;
	}
}

static uint8_t negate(uint8_t op)
{
	switch (op) {
	case BPF_JEQ: return BPF_JNE;
	case BPF_JNE: return BPF_JEQ;
	case BPF_JGT: return BPF_JLE;
	case BPF_JGE: return BPF_JLT;
	case BPF_JLT: return BPF_JGE;
	case BPF_JLE: return BPF_JGT;
	default: return 0;
	}
}

static uint8_t swap(uint8_t op)
{
	switch (op) {
	case BPF_JGT: return BPF_JLT;
	case BPF_JGE: return BPF_JLE;
	case BPF_JLT: return BPF_JGT;
	case BPF_JLE: return BPF_JGE;
	default: return op;
	}
}

void simt_refine(const struct bpf_insn *in, struct aval *a, struct aval *b,
		 bool taken)
{
	uint8_t op = BPF_OP(in->code);
	uint64_t lim = BPF_CLASS(in->code) == BPF_JMP32 ? UINT32_MAX : UINT64_MAX;
	if (a->kind != VK_SCALAR || b->kind != VK_SCALAR || !negate(op) ||
	    a->umax > lim || b->umax > lim)
		return;
	if (!taken)
		op = negate(op);
	if (aval_is_const(b))
		narrow(a, op, b->umin);
	else if (aval_is_const(a))
		narrow(b, swap(op), a->umin);
}
