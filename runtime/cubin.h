/* Kernel names of a cubin (the ELF payload of a fatbin's SASS element). */
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

#endif
