/* The C library the simulator's sources (sim/) use, as the kernel
 * provides it: kmod/ builds those sources unchanged, with this folder
 * ahead of the kernel's headers. */
#ifndef GPUX_KMOD_LIBC_STDLIB_H
#define GPUX_KMOD_LIBC_STDLIB_H

#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>

#include "errno.h"

#define calloc(n, size) kvcalloc((n), (size), GFP_KERNEL)
#define free(p) kvfree(p)
#define realloc(p, size) kvrealloc((p), (size), GFP_KERNEL)
#define qsort(base, n, size, cmp) sort((base), (n), (size), (cmp), NULL)

/* base 0 as C's: 0x hex, 0 octal; no overflow check in the kernel's
 * parser, so digits past 64 bits are refused by their count */
static inline unsigned long long kmod_strtoull(const char *s, char **end, int base)
{
	const char *p = s;
	unsigned long long v;

	while (*p == ' ' || *p == '\t')
		p++;
	v = simple_strtoull(p, end, base);
	if (end && *end - p > 20)
		errno = ERANGE;
	return v;
}
#define strtoull kmod_strtoull

#endif
