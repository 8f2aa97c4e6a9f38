/* Map descriptors' words in registers. Every inline map operation starts
 * from words of its descriptor (struct gpux_map_desc: where the tables
 * are, how many slots, how many shards). Loaded where each operation is,
 * a probe that looks one map up and then updates another waits for the
 * second descriptor after the first lookup's loads; at a kernel's exit
 * every such wait keeps the warp, and its block's slot, a memory round
 * trip longer (bench/gpu/README.md). So where nothing branches before the
 * probe's first inline operation, the words of every map the probe
 * touches inline are loaded there together, and each operation reads its
 * registers. That place is reached on every path to a later operation,
 * and the descriptor never changes while a kernel runs (the runtime
 * fills it before the first launch), so the values are the ones the
 * operation would have loaded itself. */
#include <stdlib.h>

#include "bpf_asm.h"
#include "ptx_emit.h"

static const struct {
	int off;
	const char *type, *reg;
} words[PTX_DW_COUNT] = {
	[PTX_DW_STATE] = { PTX_DESC(state), "u64", "%ds" },
	[PTX_DW_KEYS] = { PTX_DESC(keys), "u64", "%dk" },
	[PTX_DW_VALUES] = { PTX_DESC(values), "u64", "%dv" },
	[PTX_DW_MAX_ENTRIES] = { PTX_DESC(max_entries), "u32", "%dn" },
	[PTX_DW_KIND] = { PTX_DESC(kind), "u32", "%dt" },
};

unsigned ptx_desc_needs(const struct ptx_fn *f, int id, int map)
{
	if (ptx_lookup_at(f, id, map))
		return 1u << PTX_DW_STATE | 1u << PTX_DW_KEYS | 1u << PTX_DW_VALUES |
		       1u << PTX_DW_MAX_ENTRIES;
	if (!ptx_array_update_at(f, id, map))
		return 0;
	unsigned w = 1u << PTX_DW_VALUES | 1u << PTX_DW_KIND;
	return id == DH_AGG_SUM ? w | 1u << PTX_DW_STATE : w;
}

/* The map r1 points at is followed as the emitter follows it (ptx_jit.c):
 * forgotten at jump targets and calls, so an operation counted here is
 * one written inline there. */
int ptx_desc_plan(struct ptx_fn *f)
{
	const struct dev_prog *p = f->prog;
	f->desc_at = -1;
	f->desc_words = NULL;
	if (p->nmaps <= 0)
		return 0;
	unsigned *need = calloc((size_t)p->nmaps, sizeof(*need));
	if (!need)
		return ptx_fail(f, 0, "out of memory");
	int r1 = -1, first = -1;
	bool straight = true;
	for (int i = 0; i < p->ninsns; i++) {
		const struct bpf_insn *in = &p->insns[i];
		if (f->is_target[i]) {
			r1 = -1;
			straight = false;
		}
		if (in->code == (BPF_JMP | BPF_CALL)) {
			unsigned w = r1 >= 0 ? ptx_desc_needs(f, in->imm, r1) : 0;
			if (w) {
				need[r1] |= w;
				if (first < 0 && straight)
					first = i;
			}
			r1 = -1;
		} else {
			if (ptx_is_jump(in)) /* past an exit: unreachable or a target */
				straight = false;
			r1 = ptx_r1_map_after(in, r1);
		}
		if (bpf_is_lddw(in))
			i++;
	}
	if (first < 0) {
		free(need);
		return 0;
	}
	f->desc_at = first;
	f->desc_words = need;
	return 0;
}

void ptx_desc_decls(struct ptx_fn *f)
{
	if (f->desc_at < 0)
		return;
	int n = f->prog->nmaps;
	ptx_line(f, ".reg .b64 %%ds<%d>, %%dk<%d>, %%dv<%d>;", n, n, n);
	ptx_line(f, ".reg .b32 %%dn<%d>, %%dt<%d>;", n, n);
}

void ptx_desc_hoist(struct ptx_fn *f, int i)
{
	if (i != f->desc_at)
		return;
	for (int m = 0; m < f->prog->nmaps; m++)
		for (int w = 0; w < PTX_DW_COUNT; w++)
			if (f->desc_words[m] >> w & 1)
				ptx_line(f, "ld.global.nc.%s %s%d, [" GPUX_SYM_MAP "%d+%d];",
					 words[w].type, words[w].reg, m, m, words[w].off);
}

void ptx_desc_word(struct ptx_fn *f, int map, enum ptx_desc_word w, const char *dst)
{
	if (f->desc_at >= 0 && (f->desc_words[map] >> w & 1)) {
		ptx_line(f, "mov.b%s %s, %s%d;", words[w].type + 1, dst, words[w].reg, map);
		return;
	}
	ptx_line(f, "ld.global.nc.%s %s, [" GPUX_SYM_MAP "%d+%d];", words[w].type, dst, map,
		 words[w].off);
}
