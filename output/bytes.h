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

#endif
