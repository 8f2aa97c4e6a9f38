/* Array maps' updates, inline (GPUX_MAP_ARRAY in gpux_dev.h): the key is
 * the slot and everything about the table but where it is and how many
 * shards it has is known here, so an update is two loads of the
 * descriptor that do not wait on each other, a little arithmetic and one
 * `red.global.add` for the warp (all lanes at one address) or one per
 * lane. A call into the library cost the ABI's register traffic, loads
 * of the descriptor's fields one after another and a match.any, which
 * over 32 distinct keys cost more than the reductions it saved
 * (bench/gpu/atomics_bench.cu on the H100). */
#include "gpux_dev.h"
#include "ptx_emit.h"
#include "ptx_jit.h"

bool ptx_array_update_at(const struct ptx_fn *f, int id, int map)
{
	if (map < 0 || map >= f->prog->nmaps || !f->prog->maps[map].array)
		return false;
	switch (id) {
	case DH_AGG_COUNT: case DH_AGG_SUM: case DH_AGG_AVG: case DH_AGG_STATS:
	case DH_AGG_HIST: case DH_AGG_LHIST:
		return true;
	default:
		return false;
	}
}

/* %gb = the bucket (u32) of r3 for hist() or lhist() of m; uses %gt. */
static void bucket(struct ptx_fn *f, int id, const struct dev_map *m)
{
	unsigned n = m->value_size / 8;
	if (id == DH_AGG_HIST) {
		/* <0, 0, then [2^k, 2^(k+1)): 65 - clz, 0 below zero */
		ptx_line(f, "clz.b64 %%gb, %%r3;");
		ptx_line(f, "sub.u32 %%gb, 65, %%gb;");
		ptx_line(f, "setp.lt.s64 %%p, %%r3, 0;");
		ptx_line(f, "@%%p mov.u32 %%gb, 0;");
		ptx_line(f, "min.u32 %%gb, %%gb, %u;", n - 1);
		return;
	}
	if (n < 2) {
		ptx_line(f, "mov.u32 %%gb, 0;");
		return;
	}
	/* below min, then [min + k*step, +step), the last one open */
	ptx_line(f, "sub.s64 %%gt, %%r3, %lld;", (long long)m->lhist_min);
	ptx_udiv_imm(f, "%gt", "%gt", (uint64_t)m->lhist_step, false);
	ptx_line(f, "min.u64 %%gt, %%gt, %u;", n - 2);
	ptx_line(f, "cvt.u32.u64 %%gb, %%gt;");
	ptx_line(f, "add.u32 %%gb, %%gb, 1;");
	ptx_line(f, "setp.lt.s64 %%p, %%r3, %lld;", (long long)m->lhist_min);
	ptx_line(f, "@%%p mov.u32 %%gb, 0;");
}

/* %gv = the sum of r3 over the lanes of %gm, modulo 2^64: redux adds
 * 32-bit words, so 16 bits at a time, which 32 lanes cannot overflow. */
static void warp_sum(struct ptx_fn *f)
{
	ptx_line(f, "mov.b64 {%%gq0, %%gq2}, %%r3;");
	ptx_line(f, "mov.u64 %%gv, 0;");
	for (int part = 0; part < 4; part++) {
		const char *w = part < 2 ? "%gq0" : "%gq2";
		ptx_line(f, "bfe.u32 %%gq1, %s, %d, 16;", w, 16 * (part & 1));
		ptx_line(f, "redux.sync.add.u32 %%gq1, %%gq1, %%gm;");
		ptx_line(f, "cvt.u64.u32 %%gw, %%gq1;");
		ptx_line(f, "shl.b64 %%gw, %%gw, %d;", 16 * part);
		ptx_line(f, "add.u64 %%gv, %%gv, %%gw;");
	}
}

/* The reductions into %ga for the lanes of the group %gg, each lane in
 * one: the lowest lane adds for its group (how many, %gc). */
static void group_adds(struct ptx_fn *f)
{
	ptx_line(f, "neg.s32 %%gl, %%gg;");
	ptx_line(f, "and.b32 %%gl, %%gl, %%gg;");
	ptx_line(f, "bfind.u32 %%gl, %%gl;");
	ptx_line(f, "mov.u32 %%gq0, %%laneid;");
	ptx_line(f, "setp.eq.u32 %%p, %%gq0, %%gl;");
	ptx_line(f, "and.pred %%p, %%p, %%gin;");
	ptx_line(f, "popc.b32 %%gq0, %%gg;");
	ptx_line(f, "cvt.u64.u32 %%gc, %%gq0;");
}

/* With one key in the warp, %gg = the lanes whose bucket (%gb) is this
 * lane's: one match.any, where a ballot per distinct bucket issued a
 * dozen instructions for the usual one bucket a warp. On CuPy's short
 * kernels a probe costs what it issues (bench/gpu/README.md): five
 * fewer instructions a warp measured. %gu is the same in every lane
 * (a vote), so the warp runs the match together or not at all. */
static void bucket_groups(struct ptx_fn *f, bool warp)
{
	ptx_line(f, "%smatch.any.sync.b32 %%gg, %%gb, %%gm;", warp ? "" : "@%gu ");
}

/* Same-address reductions from one warp reach L2 one by one (an xlarge
 * count per lane took 4.4 times the kernel's time), so lanes are grouped
 * by address where that is cheap: when the key is the same in every
 * active lane (%gu), the lowest lane adds for the warp, or for each
 * bucket of a histogram (bucket_groups). A key that
 * differs between lanes gets one reduction per lane: grouping 32
 * distinct keys with match.any cost more than it saved. A key the
 * compiler knows is the same in every lane (warp: `kernel`, blockIdx,
 * constants) needs no vote. */
static void warp_or_lanes(struct ptx_fn *f, int id, bool lanes, bool warp)
{
	if (lanes) { /* keys that differ between lanes: each lane adds its own */
		if (id == DH_AGG_COUNT || id == DH_AGG_HIST || id == DH_AGG_LHIST) {
			ptx_line(f, "@%%gin red.global.add.u64 [%%ga], 1;");
		} else if (id == DH_AGG_SUM) {
			ptx_line(f, "@%%gin red.global.add.u64 [%%ga], %%r3;");
			ptx_line(f, "@%%gin st.volatile.global.u32 [%%gt], %u;", GPUX_SLOT_FULL);
		} else {
			ptx_line(f, "@%%gin red.global.add.u64 [%%ga], 1;");
			ptx_line(f, "@%%gin red.global.add.u64 [%%ga+8], %%r3;");
		}
		return;
	}
	ptx_line(f, "activemask.b32 %%gm;");
	if (warp) {
		ptx_line(f, "mov.b32 %%gg, %%gm;");
	} else {
		ptx_line(f, "neg.s32 %%gl, %%gm;");
		ptx_line(f, "and.b32 %%gl, %%gl, %%gm;");
		ptx_line(f, "bfind.u32 %%gl, %%gl;");
		ptx_line(f, "mov.b64 {%%gq0, %%gq1}, %%t0;");
		ptx_line(f, "shfl.sync.idx.b32 %%gq0, %%gq0, %%gl, 31, %%gm;");
		ptx_line(f, "shfl.sync.idx.b32 %%gq1, %%gq1, %%gl, 31, %%gm;");
		ptx_line(f, "mov.b64 %%gw, {%%gq0, %%gq1};");
		ptx_line(f, "setp.eq.u64 %%gu, %%gw, %%t0;");
		ptx_line(f, "vote.sync.all.pred %%gu, %%gu, %%gm;");
		/* the group: the warp, this lane's bucket, or this lane alone */
		ptx_line(f, "mov.u32 %%gq0, %%laneid;");
		ptx_line(f, "shl.b32 %%gq1, 1, %%gq0;");
		ptx_line(f, "selp.b32 %%gg, %%gm, %%gq1, %%gu;");
	}
	if (id == DH_AGG_HIST || id == DH_AGG_LHIST)
		bucket_groups(f, warp);
	group_adds(f);
	switch (id) {
	case DH_AGG_COUNT: case DH_AGG_HIST: case DH_AGG_LHIST:
		ptx_line(f, "@%%p red.global.add.u64 [%%ga], %%gc;");
		return;
	default:
		break;
	}
	warp_sum(f);
	if (!warp)
		ptx_line(f, "selp.u64 %%gv, %%gv, %%r3, %%gu;");
	if (id == DH_AGG_SUM) {
		ptx_line(f, "@%%p red.global.add.u64 [%%ga], %%gv;");
		/* a sum may be 0: the slot's state says it was seen */
		ptx_line(f, "@%%gin st.volatile.global.u32 [%%gt], %u;", GPUX_SLOT_FULL);
		return;
	}
	/* avg, stats: struct gpux_avg { count, sum } */
	ptx_line(f, "@%%p red.global.add.u64 [%%ga], %%gc;");
	ptx_line(f, "@%%p red.global.add.u64 [%%ga+8], %%gv;");
}

int ptx_array_update(struct ptx_fn *f, int i, int map)
{
	int id = f->prog->insns[i].imm;
	const struct dev_map *m = &f->prog->maps[map];
	uint64_t shard = GPUX_SHARD_BYTES(m->max_entries, m->key_size, m->value_size);
	/* the shard's offset is a 32-bit multiply; lhist divides by step */
	if (shard >> 32)
		return ptx_fail(f, i, "array map @%s is too large for the device (%llu bytes)",
				m->name, (unsigned long long)shard);
	if (id == DH_AGG_LHIST && m->lhist_step <= 0)
		return ptx_fail(f, i, "lhist() of @%s has no positive step", m->name);
	static const char *const what[] = {
		[DH_AGG_COUNT] = "count", [DH_AGG_SUM] = "sum", [DH_AGG_AVG] = "avg",
		[DH_AGG_STATS] = "stats", [DH_AGG_HIST] = "hist", [DH_AGG_LHIST] = "lhist",
	};
	ptx_stack_key(f); /* the key's word, %t0 */
	ptx_line(f, "{ // %s() into array " GPUX_SYM_MAP "%d", what[id], map);
	ptx_line(f, ".reg .b64 %%ga, %%gv, %%gt, %%gw, %%gc;");
	ptx_line(f, ".reg .b32 %%gk, %%gs, %%gb, %%gm, %%gl, %%gg, %%gq<3>;");
	ptx_line(f, ".reg .pred %%gin, %%gu;");
	/* where shard 0's values (and states) are, and the shard count */
	ptx_desc_word(f, map, PTX_DW_VALUES, "%gv");
	ptx_desc_word(f, map, PTX_DW_KIND, "%gk");
	if (id == DH_AGG_SUM)
		ptx_desc_word(f, map, PTX_DW_STATE, "%gt");
	/* a key past the table is counted as a drop, never written: the
	 * compiler's bound says it cannot happen */
	ptx_line(f, "setp.lt.u64 %%gin, %%t0, %u;", m->max_entries);
	ptx_line(f, "@!%%gin red.global.add.u64 [" GPUX_SYM_MAP "%d+%d], 1;", map, PTX_DESC(drops));
	/* this SM's shard: %smid mod 2^(kind >> GPUX_MAP_SHARD_SHIFT) */
	ptx_line(f, "bfe.u32 %%gk, %%gk, %d, 5;", GPUX_MAP_SHARD_SHIFT);
	ptx_line(f, "shl.b32 %%gk, 1, %%gk;");
	ptx_line(f, "sub.u32 %%gk, %%gk, 1;");
	ptx_line(f, "mov.u32 %%gs, %%smid;");
	ptx_line(f, "and.b32 %%gs, %%gs, %%gk;");
	ptx_line(f, "mul.wide.u32 %%ga, %%gs, %llu;", (unsigned long long)shard);
	if (id == DH_AGG_SUM) {
		ptx_line(f, "add.u64 %%gt, %%gt, %%ga;");
		ptx_line(f, "mad.lo.u64 %%gt, %%t0, 4, %%gt;");
	}
	ptx_line(f, "mad.lo.u64 %%ga, %%t0, %u, %%ga;", m->value_size);
	if (id == DH_AGG_HIST || id == DH_AGG_LHIST) {
		bucket(f, id, m);
		ptx_line(f, "mul.wide.u32 %%gt, %%gb, 8;");
		ptx_line(f, "add.u64 %%ga, %%ga, %%gt;");
	}
	ptx_line(f, "add.u64 %%ga, %%ga, %%gv;");
	warp_or_lanes(f, id, m->lane_keys, m->warp_keys && !m->lane_keys);
	ptx_line(f, "}");
	ptx_line(f, "mov.b64 %%r0, 0;");
	return 0;
}
