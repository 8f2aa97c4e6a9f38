/* 8-byte values at any alignment in map keys, values and records. */
#ifndef GPUX_BYTES_H
#define GPUX_BYTES_H

#include <stdint.h>
#include <string.h>

static inline int64_t rd64(const unsigned char *p)
{
	int64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline void wr64(unsigned char *p, int64_t v)
{
	memcpy(p, &v, 8);
}

/* x / d as the printing code wants it from values it did not make: 0
 * for d == 0, and INT64_MIN / -1 wraps instead of trapping. */
static inline int64_t sdiv64(int64_t x, int64_t d)
{
	if (d == 0)
		return 0;
	if (d == -1)
		return (int64_t)(0 - (uint64_t)x);
	return x / d;
}

#endif
