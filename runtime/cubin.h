/* Kernel names and register counts of a cubin (the ELF payload of a
 * fatbin's SASS element). */
#ifndef GPUX_CUBIN_H
#define GPUX_CUBIN_H

#include <stddef.h>
#include <stdint.h>

#include "kernel_list.h"

/* Appends the cubin's kernels (.symtab functions marked STO_CUDA_ENTRY,
 * st_other 0x10, as nvcc 13 marks them) to OUT. Bounds-checked ELF64
 * reader of its own, so the runtime needs no libelf. Returns GPUX_FB_OK,
 * GPUX_FB_EMAGIC, GPUX_FB_ETRUNC, GPUX_FB_EFORMAT or GPUX_FB_ENOMEM. */
int gpux_cubin_kernels(const uint8_t *elf, size_t len, struct gpux_names *out);

/* Registers per thread of each kernel of a cubin, as ptxas allocated
 * them: EIATTR_REGCOUNT records in .nv.info (symbol index, count), or
 * bits 24..31 of the kernel's .text section's sh_info where older
 * toolkits put it. */
struct gpux_cubin_regs {
	char **name;
	unsigned *regs;
	size_t n;
};

/* Appends every kernel of the cubin with a known count to OUT (free
 * with gpux_cubin_regs_free). Same returns as gpux_cubin_kernels. */
int gpux_cubin_regs(const uint8_t *elf, size_t len, struct gpux_cubin_regs *out);
/* The count of kernel NAME, 0 if unknown. */
unsigned gpux_cubin_regs_of(const struct gpux_cubin_regs *r, const char *name);
void gpux_cubin_regs_free(struct gpux_cubin_regs *r);

#endif
