/* Calls: builtins are inlined as special-register reads, lane_filter and
 * prefetch as a few instructions, array maps' updates as a reduction
 * (ptx_array.c), hash lookups as a probe loop (ptx_lookup.c); every
 * other helper is a call to its PTX function in the helper library, with
 * r1..r5 as .b64 parameters and r0 as the result. */
#include <stddef.h>

#include "gpux_dev.h"
#include "ptx_emit.h"
#include "ptx_jit.h"

/* What codegen/ptx/helpers.cu defines. A helper missing here is refused
 * with a diagnostic instead of failing at link time. */
static const struct {
	int id;
	const char *symbol;
	int nargs;
} lib[] = {
	{ DH_MAP_LOOKUP, "gpux_h_map_lookup", 2 },
	{ DH_MAP_UPDATE, "gpux_h_map_update", 3 },
	{ DH_MAP_DELETE, "gpux_h_map_delete", 2 },
	{ DH_MAP_ADD, "gpux_h_map_add", 3 },
	{ DH_AGG_COUNT, "gpux_h_agg_count", 2 },
	{ DH_AGG_SUM, "gpux_h_agg_sum", 3 },
	{ DH_AGG_MIN, "gpux_h_agg_min", 3 },
	{ DH_AGG_MAX, "gpux_h_agg_max", 3 },
	{ DH_AGG_AVG, "gpux_h_agg_avg", 3 },
	{ DH_AGG_STATS, "gpux_h_agg_stats", 3 },
	{ DH_AGG_HIST, "gpux_h_agg_hist", 3 },
	{ DH_AGG_LHIST, "gpux_h_agg_lhist", 3 },
	{ DH_PRINTF, "gpux_h_printf", 3 },
	{ DH_EXIT, "gpux_h_exit", 0 },
};

#define NLIB (sizeof(lib) / sizeof(lib[0]))

const char *ptx_helper_symbol(int id, int *nargs)
{
	for (size_t k = 0; k < NLIB; k++) {
		if (lib[k].id == id) {
			if (nargs)
				*nargs = lib[k].nargs;
			return lib[k].symbol;
		}
	}
	return NULL;
}

/* Every helper the library has, in table order, for the prototypes. */
const char *ptx_helper_nth(int n, int *nargs)
{
	if (n < 0 || (size_t)n >= NLIB)
		return NULL;
	*nargs = lib[n].nargs;
	return lib[n].symbol;
}

/* A 32-bit special register into r0. */
static void sreg(struct ptx_fn *f, const char *name)
{
	ptx_line(f, "mov.u32 %%w0, %s;", name);
	ptx_line(f, "cvt.u64.u32 %%r0, %%w0;");
}

/* %w0 = the linear thread id in the block (tid.x + ntid.x * (tid.y +
 * ntid.y * tid.z)); leaves ntid.x in %w1. */
static void linear_tid(struct ptx_fn *f)
{
	static const char *const lines[] = {
		"mov.u32 %w0, %tid.z;",
		"mov.u32 %w1, %ntid.y;",
		"mov.u32 %w2, %tid.y;",
		"mad.lo.u32 %w0, %w0, %w1, %w2;",
		"mov.u32 %w1, %ntid.x;",
		"mov.u32 %w2, %tid.x;",
		"mad.lo.u32 %w0, %w0, %w1, %w2;",
	};
	for (size_t k = 0; k < sizeof(lines) / sizeof(lines[0]); k++)
		ptx_line(f, "%s", lines[k]);
}

/* gtid = linear block id * threads per block + linear thread id. The
 * block id needs 64 bits; the 32-bit parts cannot overflow (gridDim.y
 * and .z are below 2^16, a block has at most 1024 threads). */
static void gtid(struct ptx_fn *f)
{
	static const char *const block[] = {
		"mov.u32 %w0, %ctaid.z;",
		"mov.u32 %w1, %nctaid.y;",
		"mov.u32 %w2, %ctaid.y;",
		"mad.lo.u32 %w0, %w0, %w1, %w2;",
		"mov.u32 %w1, %nctaid.x;",
		"mov.u32 %w2, %ctaid.x;",
		"cvt.u64.u32 %t0, %w2;",
		"mad.wide.u32 %t0, %w0, %w1, %t0;",
	};
	static const char *const threads[] = {
		"mov.u32 %w2, %ntid.y;",
		"mul.lo.u32 %w1, %w1, %w2;",
		"mov.u32 %w2, %ntid.z;",
		"mul.lo.u32 %w1, %w1, %w2;",
		"cvt.u64.u32 %t1, %w0;",
		"cvt.u64.u32 %r0, %w1;",
		"mad.lo.u64 %r0, %t0, %r0, %t1;",
	};
	for (size_t k = 0; k < sizeof(block) / sizeof(block[0]); k++)
		ptx_line(f, "%s", block[k]);
	linear_tid(f);
	for (size_t k = 0; k < sizeof(threads) / sizeof(threads[0]); k++)
		ptx_line(f, "%s", threads[k]);
}

/* warp = linear thread id in the block / 32: the warp's index in its
 * block, uniform in a warp (%warpid is a hardware slot that changes
 * under preemption, not what users mean). */
static void warp_in_block(struct ptx_fn *f)
{
	linear_tid(f);
	ptx_line(f, "shr.u32 %%w0, %%w0, 5;");
	ptx_line(f, "cvt.u64.u32 %%r0, %%w0;");
}

/* Warp-uniform values need no broadcast: a special-register read is one
 * warp instruction, so every lane sees the same %smid, %globaltimer. */
static int builtin(struct ptx_fn *f, int i)
{
	static const char *const regs[DB_COUNT] = {
		[DB_SM] = "%smid", [DB_LANE] = "%laneid",
		[DB_TID_X] = "%tid.x", [DB_TID_Y] = "%tid.y", [DB_TID_Z] = "%tid.z",
		[DB_CTAID_X] = "%ctaid.x", [DB_CTAID_Y] = "%ctaid.y",
		[DB_CTAID_Z] = "%ctaid.z", [DB_NTID_X] = "%ntid.x",
		[DB_NTID_Y] = "%ntid.y", [DB_NTID_Z] = "%ntid.z",
		[DB_NCTAID_X] = "%nctaid.x", [DB_NCTAID_Y] = "%nctaid.y",
		[DB_NCTAID_Z] = "%nctaid.z",
	};
	if (!f->r1_known)
		return ptx_fail(f, i, "the builtin id in r1 must be a constant "
				"set in the same basic block");
	if (f->r1_value < 0 || f->r1_value >= DB_COUNT)
		return ptx_fail(f, i, "unknown builtin id %lld",
				(long long)f->r1_value);
	switch ((enum dev_builtin)f->r1_value) {
	case DB_GTID:
		gtid(f);
		break;
	case DB_NSECS:
		/* struct gpux_clock: g - base - mulhi(g, rate) */
		ptx_line(f, "{ .reg .b64 %%k<2>;");
		ptx_line(f, "mov.u64 %%r0, %%globaltimer;");
		ptx_line(f, "ld.global.v2.u64 {%%k0, %%k1}, [" GPUX_SYM_CLOCK_OFF "];");
		ptx_line(f, "mul.hi.s64 %%k1, %%r0, %%k1;");
		ptx_line(f, "sub.u64 %%r0, %%r0, %%k0;");
		ptx_line(f, "sub.u64 %%r0, %%r0, %%k1; }");
		break;
	case DB_CYCLES:
		ptx_line(f, "mov.u64 %%r0, %%clock64;");
		break;
	case DB_WARP:
		warp_in_block(f);
		break;
	case DB_ACTIVEMASK:
		/* the probe's lanes: those that arrived together, less the
		 * ones a /predicate/ sent away (lane_filter) */
		ptx_line(f, "cvt.u64.u32 %%r0, %%gpux_m;");
		break;
	case DB_ACTIVELANES:
		ptx_line(f, "popc.b32 %%w1, %%gpux_m;");
		ptx_line(f, "cvt.u64.u32 %%r0, %%w1;");
		break;
	case DB_GPU:
		ptx_line(f, "ld.global.u32 %%w1, [" GPUX_SYM_GPU "];");
		ptx_line(f, "cvt.u64.u32 %%r0, %%w1;");
		break;
	case DB_KERNEL_ID:
		/* gpux_dev_ctx.kernel_id: the low half of the third word */
		ptx_line(f, "and.b64 %%r0, %%c%zu, 0xffffffff;",
			 offsetof(struct gpux_dev_ctx, kernel_id) / 8);
		break;
	default:
		sreg(f, regs[f->r1_value]);
		break;
	}
	return 0;
}

/* lane_filter(r1): lanes with r1 == 0 leave as if by `r0 = 0; exit`
 * (at $Lgpux_leave, after the body); the rest get how many they are. */
static void lane_filter(struct ptx_fn *f)
{
	ptx_line(f, "setp.ne.u64 %%p, %%r1, 0;");
	ptx_line(f, "vote.sync.ballot.b32 %%w1, %%p, %%gpux_m;");
	ptx_line(f, "mov.b32 %%gpux_m, %%w1;");
	ptx_line(f, "@!%%p bra $Lgpux_leave;");
	ptx_line(f, "popc.b32 %%w1, %%w1;");
	ptx_line(f, "cvt.u64.u32 %%r0, %%w1;");
	f->needs_leave = true;
}

/* prefetch(r1): the lowest lane of the probe's mask prefetches the line
 * at its own r1. Each lane decides alone (is no lane of the mask below
 * it?), so nothing waits for convergence and no value crosses lanes; a
 * library call would cost the ABI's register saves for one instruction.
 * The address goes through a volatile word (generic: .local takes no
 * .volatile) so that it is never a constant: the H100's driver
 * (580) crashed the program while compiling a prefetch whose address
 * it had folded to a constant (prefetch(0), prefetch(4096)).
 * r0 = 0: every call leaves a value. */
static void prefetch(struct ptx_fn *f)
{
	ptx_line(f, "mov.u32 %%w1, %%lanemask_lt;");
	ptx_line(f, "and.b32 %%w1, %%w1, %%gpux_m;");
	ptx_line(f, "setp.eq.u32 %%p, %%w1, 0;");
	ptx_line(f, "cvta.local.u64 %%t1, gpux_pf;");
	ptx_line(f, "st.volatile.u64 [%%t1], %%r1;");
	ptx_line(f, "ld.volatile.u64 %%t0, [%%t1];");
	ptx_line(f, "@%%p prefetch.global.L2 [%%t0];");
	ptx_line(f, "mov.b64 %%r0, 0;");
}

bool ptx_call_by_value(const struct ptx_fn *f, int i, int r1_map)
{
	int id = f->prog->insns[i].imm;
	return ptx_array_update_at(f, id, r1_map) || ptx_lookup_at(f, id, r1_map);
}

int ptx_emit_call(struct ptx_fn *f, int i)
{
	const struct bpf_insn *in = &f->prog->insns[i];
	if (in->src != 0)
		return ptx_fail(f, i, "calls to other eBPF functions are not supported");
	if (in->imm == DH_BUILTIN)
		return builtin(f, i);
	if (in->imm == DH_LANE_FILTER) {
		lane_filter(f);
		return 0;
	}
	if (in->imm == DH_PREFETCH) {
		prefetch(f);
		return 0;
	}
	if (ptx_array_update_at(f, in->imm, f->r1_map))
		return ptx_array_update(f, i, f->r1_map);
	if (ptx_lookup_at(f, in->imm, f->r1_map))
		return ptx_lookup(f, i, f->r1_map);
	int nargs;
	const char *sym = ptx_helper_symbol(in->imm, &nargs);
	if (!sym) {
		const struct dev_helper_info *h = dev_helper_info(in->imm);
		if (!h)
			return ptx_fail(f, i, "unknown helper id %d", in->imm);
		return ptx_fail(f, i, "helper %s has no PTX implementation",
				h->name);
	}
	/* A scope of its own, so the parameter names can repeat. */
	ptx_line(f, "bar.warp.sync %%gpux_m;");
	ptx_line(f, "{");
	for (int a = 0; a < nargs; a++)
		ptx_line(f, ".param .b64 gpux_a%d;", a);
	ptx_line(f, ".param .b64 gpux_rv;");
	for (int a = 0; a < nargs; a++)
		ptx_line(f, "st.param.b64 [gpux_a%d], %%r%d;", a, a + 1);
	fprintf(f->out, "\tcall (gpux_rv), %s, (", sym);
	for (int a = 0; a < nargs; a++)
		fprintf(f->out, "%sgpux_a%d", a ? ", " : "", a);
	fputs(");\n", f->out);
	ptx_line(f, "ld.param.b64 %%r0, [gpux_rv];");
	ptx_line(f, "}");
	return 0;
}
