/* Hash maps' lookups, inline: the probe loop of the library's
 * map_lookup (open addressing from gpux_key_hash, gpux_dev.h) written
 * into the probe. A lookup is what a device probe does to read a map
 * (`@launched[kernel]`), often from every thread of every kernel; as a
 * call into the library it cost the ABI's register traffic and a GPU
 * fence per lane, and a probe that calls nothing else needs no library
 * at all: the runtime then loads the patched module as it is, without
 * linking (runtime/rt_image.c).
 *
 * A lookup never waits: a slot another lane is still inserting (BUSY)
 * does not hold the key yet as far as this lookup is concerned, which
 * is the answer it would get a moment earlier. Where no device probe
 * changes the map (a cross-layer map the launches write, or one nobody
 * writes) nothing inserts while the kernel runs on this stream, so the
 * state and key words are plain loads; otherwise the state word is an
 * acquire that pairs with the inserter's fence and exchange. */
#include "gpux_dev.h"
#include "ptx_emit.h"
#include "ptx_jit.h"

#include <stdio.h>

#define MAX_WORDS 8 /* longer keys go to the library */

bool ptx_lookup_at(const struct ptx_fn *f, int id, int map)
{
	if (id != DH_MAP_LOOKUP || map < 0 || map >= f->prog->nmaps)
		return false;
	const struct dev_map *m = &f->prog->maps[map];
	return !m->array && m->key_size % 8 == 0 && m->key_size / 8 >= 1 &&
	       m->key_size / 8 <= MAX_WORDS;
}

/* %hh = gpux_hash_mix(%hh) */
static void mix(struct ptx_fn *f)
{
	ptx_line(f, "shr.b64 %%hx, %%hh, 33;");
	ptx_line(f, "xor.b64 %%hh, %%hh, %%hx;");
	ptx_line(f, "mul.lo.u64 %%hh, %%hh, 0xff51afd7ed558ccd;");
	ptx_line(f, "shr.b64 %%hx, %%hh, 33;");
	ptx_line(f, "xor.b64 %%hh, %%hh, %%hx;");
	ptx_line(f, "mul.lo.u64 %%hh, %%hh, 0xc4ceb9fe1a85ec53;");
	ptx_line(f, "shr.b64 %%hx, %%hh, 33;");
	ptx_line(f, "xor.b64 %%hh, %%hh, %%hx;");
}

/* Whether the lookup of m loads its value's first word with the slot. */
static bool loads_value(const struct ptx_fn *f, const struct dev_map *m)
{
	return f->value_regs && m->device_reads_only && m->value_size >= 8 &&
	       m->value_size % 8 == 0;
}

int ptx_lookup(struct ptx_fn *f, int i, int map)
{
	const struct dev_map *m = &f->prog->maps[map];
	int words = (int)(m->key_size / 8);
	bool ro = m->device_reads_only, value = loads_value(f, m);
	const char *ld = ro ? "ld.global" : "ld.relaxed.gpu.global";
	const char *ld_state = ro ? "ld.global" : "ld.acquire.gpu.global";
	ptx_line(f, "{ // lookup in " GPUX_SYM_MAP "%d", map);
	ptx_line(f, ".reg .b64 %%hk<%d>, %%hh, %%hx, %%hy, %%hs, %%hkeys, %%hv;", words);
	ptx_line(f, ".reg .b32 %%hn, %%hm, %%hi, %%hc, %%hw;");
	ptx_line(f, ".reg .pred %%hp;");
	for (int w = 0; w < words; w++) {
		char dst[16];
		snprintf(dst, sizeof(dst), "%%hk%d", w);
		ptx_stack_key_word(f, w, dst);
	}
	/* gpux_key_hash: h = mix(h ^ word) from the golden ratio */
	ptx_line(f, "mov.u64 %%hh, 0x9e3779b97f4a7c15;");
	for (int w = 0; w < words; w++) {
		ptx_line(f, "xor.b64 %%hh, %%hh, %%hk%d;", w);
		mix(f);
	}
	ptx_desc_word(f, map, PTX_DW_STATE, "%hs");
	ptx_desc_word(f, map, PTX_DW_KEYS, "%hkeys");
	ptx_desc_word(f, map, PTX_DW_VALUES, "%hv");
	ptx_desc_word(f, map, PTX_DW_MAX_ENTRIES, "%hn");
	/* max_entries is a power of two: slot (h + probe) & (n - 1) */
	ptx_line(f, "sub.u32 %%hm, %%hn, 1;");
	ptx_line(f, "cvt.u32.u64 %%hi, %%hh;");
	ptx_line(f, "and.b32 %%hi, %%hi, %%hm;");
	ptx_line(f, "mov.u32 %%hc, 0;");
	ptx_line(f, "mov.u64 %%r0, 0;");
	fprintf(f->out, "$Lgpux_lk%d:\n", i);
	ptx_line(f, "setp.ge.u32 %%hp, %%hc, %%hn;");
	ptx_line(f, "@%%hp bra $Lgpux_lk%d_done;", i);
	ptx_line(f, "mul.wide.u32 %%hx, %%hi, 4;");
	ptx_line(f, "add.u64 %%hx, %%hx, %%hs;");
	ptx_line(f, "%s.u32 %%hw, [%%hx];", ld_state);
	if (ro) {
		/* nothing inserts: the slot's first key word (and, for the
		 * value registers, its value's) is loaded with its state, one
		 * memory round trip for a hit where it took three */
		ptx_line(f, "mul.wide.u32 %%hx, %%hi, %u;", m->key_size);
		ptx_line(f, "add.u64 %%hx, %%hx, %%hkeys;");
		ptx_line(f, "%s.u64 %%hh, [%%hx];", ld);
		ptx_line(f, "mul.wide.u32 %%hy, %%hi, %u;", m->value_size);
		ptx_line(f, "add.u64 %%hy, %%hy, %%hv;");
		if (value)
			ptx_line(f, "ld.global.u64 %%lv%d, [%%hy];", i);
	}
	ptx_line(f, "setp.eq.u32 %%hp, %%hw, %u;", GPUX_SLOT_EMPTY);
	ptx_line(f, "@%%hp bra $Lgpux_lk%d_done;", i);
	ptx_line(f, "setp.ne.u32 %%hp, %%hw, %u;", GPUX_SLOT_FULL);
	ptx_line(f, "@%%hp bra $Lgpux_lk%d_next;", i);
	if (!ro) {
		ptx_line(f, "mul.wide.u32 %%hx, %%hi, %u;", m->key_size);
		ptx_line(f, "add.u64 %%hx, %%hx, %%hkeys;");
	}
	for (int w = 0; w < words; w++) {
		if (w || !ro)
			ptx_line(f, "%s.u64 %%hh, [%%hx+%d];", ld, 8 * w);
		ptx_line(f, "setp.ne.u64 %%hp, %%hh, %%hk%d;", w);
		ptx_line(f, "@%%hp bra $Lgpux_lk%d_next;", i);
	}
	if (ro) {
		ptx_line(f, "mov.u64 %%r0, %%hy;");
	} else {
		ptx_line(f, "mul.wide.u32 %%hx, %%hi, %u;", m->value_size);
		ptx_line(f, "add.u64 %%r0, %%hx, %%hv;");
	}
	ptx_line(f, "bra $Lgpux_lk%d_done;", i);
	fprintf(f->out, "$Lgpux_lk%d_next:\n", i);
	ptx_line(f, "add.u32 %%hc, %%hc, 1;");
	ptx_line(f, "add.u32 %%hi, %%hi, 1;");
	ptx_line(f, "and.b32 %%hi, %%hi, %%hm;");
	ptx_line(f, "bra $Lgpux_lk%d;", i);
	fprintf(f->out, "$Lgpux_lk%d_done:\n", i);
	ptx_line(f, "}");
	if (value)
		f->lk_done = i;
	return 0;
}

/* A value's address moves with mov and is lost on any other write; the
 * jump targets forget it (ptx_jit.c), so a register keeps it only on
 * the straight path from its lookup, where the value was loaded. */
void ptx_lookup_track(struct ptx_fn *f, const struct bpf_insn *in, int at)
{
	uint8_t cls = BPF_CLASS(in->code);
	if (in->code == (BPF_JMP | BPF_CALL)) {
		for (int r = 0; r <= 5; r++)
			f->lk_at[r] = -1;
		f->lk_at[0] = f->lk_done == at ? at : -1;
		f->lk_done = -1;
		return;
	}
	if (in->dst >= BPF_NREGS ||
	    !(cls == BPF_ALU || cls == BPF_ALU64 || cls == BPF_LDX || cls == BPF_LD))
		return;
	bool mov = cls == BPF_ALU64 && in->code == (BPF_ALU64 | BPF_MOV | BPF_X) &&
		   in->src < BPF_NREGS;
	f->lk_at[in->dst] = mov ? f->lk_at[in->src] : -1;
}
