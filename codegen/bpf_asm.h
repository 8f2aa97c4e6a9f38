/* A text form of eBPF, as the kernel's verifier log spells it:
 *
 *   .name gdev:access            ; the program's name in messages
 *   .map pages 8 8 4096          ; NAME KEY_SIZE VALUE_SIZE [MAX_ENTRIES]
 *   .budget 4096 64 16           ; insns helper-calls map-ops
 *   r1 = map[pages] ll           ; lddw of a map reference
 *   r2 = *(u64 *)(r1 + 0)
 *   *(u64 *)(r10 - 8) = r2
 *   if r2 > 4096 goto big
 *   call agg_count
 *   big: exit
 *
 * The assembler builds test programs for the SIMT verifier and the JIT
 * (each instruction's span is its line, so messages point at the text);
 * the disassembler prints `-d bpf`. */
#ifndef GPUX_BPF_ASM_H
#define GPUX_BPF_ASM_H

#include <stdio.h>

#include "device_abi.h"
#include "diag.h"

/* Assemble src into prog; arrays live in arena. 0 if clean, else -1 with
 * diagnostics located on the offending line. */
int bpf_assemble(const struct source *src, struct arena *arena,
		 struct dev_prog *prog, struct diags *diags);

/* One instruction (two slots for lddw) in the same syntax; returns the
 * number of slots it used. Labels print as relative offsets ("+3"). */
int bpf_disasm_insn(FILE *out, const struct bpf_insn *insns, int i, int n,
		    const struct dev_map *maps, int nmaps);
void bpf_disasm(FILE *out, const struct dev_prog *prog);

#endif
