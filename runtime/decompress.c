/* LZ4 block and ZSTD frame decompression for fatbin elements. */
#include "decompress.h"

#include <limits.h>
#include <stdlib.h>
#include <zstd.h>

#include "fatbin.h"

/* Adds LZ4's 255-run length extension; -1 when it runs off the input. */
static int lz4_len(const uint8_t **ip, const uint8_t *end, size_t *len)
{
	uint8_t b;

	do {
		if (*ip >= end)
			return -1;
		b = *(*ip)++;
		if (*len > SIZE_MAX - b)
			return -1;
		*len += b;
	} while (b == 255);
	return 0;
}

long gpux_lz4_block(const uint8_t *src, size_t src_len, uint8_t *dst,
		    size_t dst_len)
{
	const uint8_t *ip = src, *iend = src + src_len;
	size_t op = 0, lit, match, off, i;
	uint8_t token;

	if (dst_len > (size_t)LONG_MAX)
		return -1;
	while (ip < iend) {
		token = *ip++;
		lit = token >> 4;
		if (lit == 15 && lz4_len(&ip, iend, &lit))
			return -1;
		if (lit > (size_t)(iend - ip) || lit > dst_len - op)
			return -1;
		for (i = 0; i < lit; i++)
			dst[op++] = *ip++;
		/* The last sequence carries literals only. */
		if (ip == iend)
			break;
		if (iend - ip < 2)
			return -1;
		off = (size_t)ip[0] | (size_t)ip[1] << 8;
		ip += 2;
		if (off == 0 || off > op)
			return -1;
		match = token & 15;
		if (match == 15 && lz4_len(&ip, iend, &match))
			return -1;
		match += 4;
		if (match > dst_len - op)
			return -1;
		/* Byte by byte: a match may overlap the bytes it produces. */
		for (i = 0; i < match; i++, op++)
			dst[op] = dst[op - off];
	}
	return (long)op;
}

static int alloc_out(uint64_t out_size, uint8_t **out)
{
	if (out_size > GPUX_DECOMPRESS_MAX)
		return GPUX_FB_EFORMAT;
	*out = malloc((size_t)out_size + 1);
	return *out ? GPUX_FB_OK : GPUX_FB_ENOMEM;
}

int gpux_lz4_decompress(const uint8_t *src, size_t src_len, uint64_t out_size,
			uint8_t **out, size_t *out_len)
{
	long n;
	int rc;

	*out = NULL;
	*out_len = 0;
	/* A byte of LZ4 input yields at most 255 bytes: bounds the malloc. */
	if (!src_len || out_size / 255 > src_len)
		return GPUX_FB_EFORMAT;
	rc = alloc_out(out_size, out);
	if (rc)
		return rc;
	n = gpux_lz4_block(src, src_len, *out, (size_t)out_size);
	if (n < 0 || (uint64_t)n != out_size) {
		free(*out);
		*out = NULL;
		return GPUX_FB_EDECOMPRESS;
	}
	(*out)[n] = 0;
	*out_len = (size_t)n;
	return GPUX_FB_OK;
}

int gpux_zstd_decompress(const uint8_t *src, size_t src_len,
			 uint64_t out_size, uint8_t **out, size_t *out_len)
{
	unsigned long long fcs;
	size_t n;
	int rc;

	*out = NULL;
	*out_len = 0;
	/* The frame states its size: a header that disagrees is corrupt, and
	 * we learn it before allocating. */
	fcs = ZSTD_getFrameContentSize(src, src_len);
	if (fcs == ZSTD_CONTENTSIZE_ERROR)
		return GPUX_FB_EDECOMPRESS;
	if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != out_size)
		return GPUX_FB_EFORMAT;
	rc = alloc_out(out_size, out);
	if (rc)
		return rc;
	n = ZSTD_decompress(*out, (size_t)out_size, src, src_len);
	if (ZSTD_isError(n) || n != out_size) {
		free(*out);
		*out = NULL;
		return GPUX_FB_EDECOMPRESS;
	}
	(*out)[n] = 0;
	*out_len = n;
	return GPUX_FB_OK;
}
