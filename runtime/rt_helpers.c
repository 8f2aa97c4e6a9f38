/* Picking and unpacking the helper library's cubins (rt_helpers.h). */
#include "rt_helpers.h"

#include <stdint.h>
#include <stdlib.h>

#include "cubin.h"
#include "decompress.h"
#include "fatbin.h"

/* Per blob, once unpacked: the cubin and its functions' most registers. */
struct unpacked {
	uint8_t *cubin;
	size_t size;
	unsigned regs;
	bool tried;
};
static struct unpacked *unpacked;

static struct unpacked *unpack(size_t i)
{
	if (!unpacked && !(unpacked = calloc(rt_helper_nblobs, sizeof(*unpacked))))
		return NULL;
	struct unpacked *u = &unpacked[i];
	if (u->tried)
		return u->cubin ? u : NULL;
	u->tried = true;
	const struct rt_helper_blob *b = &rt_helper_blobs[i];
	if (gpux_zstd_decompress(b->data, b->size, b->raw_size, &u->cubin, &u->size) != GPUX_FB_OK)
		return NULL;
	struct gpux_cubin_regs r = { 0 };
	if (gpux_cubin_regs(u->cubin, u->size, &r) == GPUX_FB_OK)
		for (size_t k = 0; k < r.n; k++)
			u->regs = r.regs[k] > u->regs ? r.regs[k] : u->regs;
	gpux_cubin_regs_free(&r);
	/* a budget bounds its functions even where no count was read */
	if (b->cap && (!u->regs || u->regs > b->cap))
		u->regs = b->cap;
	return u;
}

bool rt_helper_has(unsigned arch)
{
	for (size_t i = 0; i < rt_helper_nblobs; i++)
		if (rt_helper_blobs[i].arch == arch)
			return true;
	return false;
}

/* The registers blob i's functions take: its budget, or for the
 * uncapped one what ptxas gave them (UINT32_MAX if unknown). */
static unsigned bound(size_t i)
{
	if (rt_helper_blobs[i].cap)
		return rt_helper_blobs[i].cap;
	struct unpacked *u = unpack(i);
	return u && u->regs ? u->regs : UINT32_MAX;
}

const void *rt_helper_cubin(unsigned arch, unsigned cap, size_t *size, unsigned *regs)
{
	size_t best = SIZE_MAX, least = SIZE_MAX;
	unsigned best_b = 0, least_b = UINT32_MAX;
	for (size_t i = 0; i < rt_helper_nblobs; i++) {
		if (rt_helper_blobs[i].arch != arch)
			continue;
		unsigned b = bound(i);
		if ((!cap || b <= cap) && (best == SIZE_MAX || b > best_b)) {
			best = i;
			best_b = b;
		}
		if (b < least_b || least == SIZE_MAX) {
			least = i;
			least_b = b;
		}
	}
	size_t pick = best != SIZE_MAX ? best : least;
	struct unpacked *u = pick != SIZE_MAX ? unpack(pick) : NULL;
	if (!u)
		return NULL;
	*size = u->size;
	*regs = u->regs;
	return u->cubin;
}
