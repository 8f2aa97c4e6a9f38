/* The helper library's relocatable cubins built into libgpux-rt.so
 * (helpers_cubin.cmake): one per SM architecture and register budget,
 * each one zstd frame. */
#ifndef GPUX_RT_HELPERS_H
#define GPUX_RT_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

struct rt_helper_blob {
	unsigned arch;             /* sm_XX as XX */
	unsigned cap;              /* ptxas -maxrregcount, 0: none */
	const unsigned char *data; /* the zstd frame */
	size_t size;
	size_t raw_size;           /* of the cubin */
};
/* The generated table (embed_cubins.cmake). */
extern const struct rt_helper_blob rt_helper_blobs[];
extern const size_t rt_helper_nblobs;

/* Whether the build has cubins for a device of arch. */
bool rt_helper_has(unsigned arch);

/* The cubin for a device of arch (exactly: a relocatable cubin links
 * for its own SM only) whose kernels are held to cap registers (0: no
 * cap): of the budgets whose functions fit in cap, the largest; below
 * the smallest, the smallest (ptxas raises a cap that low to its floor
 * for code that calls functions). NULL when there is none or it cannot
 * be unpacked. *regs: the most registers a function of it takes.
 * Unpacked once and kept for the process's life; call with rt_lock. */
const void *rt_helper_cubin(unsigned arch, unsigned cap, size_t *size, unsigned *regs);

#endif
