/* Which kernels of a fatbin the runtime cannot instrument: SASS only. */
#ifndef GPUX_SASS_ONLY_H
#define GPUX_SASS_ONLY_H

#include <stddef.h>

#include "kernel_list.h"

/* Appends to OUT the kernels defined in some ELF element of the fatbin
 * buffer but in none of its PTX elements. *MAX_ARCH (if not NULL) gets
 * the highest SASS arch seen, for gpux_fb_rebuild_hint. */
int gpux_fb_sass_only(const void *buf, size_t len, struct gpux_names *out,
		      unsigned *max_arch);

#endif
