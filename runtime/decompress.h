/* Decompression of fatbin elements: LZ4 blocks (our own bounds-checked
 * decoder, so the runtime needs no liblz4) and ZSTD frames (libzstd). */
#ifndef GPUX_DECOMPRESS_H
#define GPUX_DECOMPRESS_H

#include <stddef.h>
#include <stdint.h>

/* Largest element we inflate: headers come from untrusted memory. */
#define GPUX_DECOMPRESS_MAX ((uint64_t)1 << 30)

/* Decode SRC_LEN bytes into a malloc'd buffer of exactly OUT_SIZE bytes
 * plus a NUL. Return GPUX_FB_OK or a negative GPUX_FB_* status. */
int gpux_lz4_decompress(const uint8_t *src, size_t src_len, uint64_t out_size,
			uint8_t **out, size_t *out_len);
int gpux_zstd_decompress(const uint8_t *src, size_t src_len,
			 uint64_t out_size, uint8_t **out, size_t *out_len);

/* The LZ4 block decoder alone, into a caller buffer: bytes written or -1. */
long gpux_lz4_block(const uint8_t *src, size_t src_len, uint8_t *dst,
		    size_t dst_len);

#endif
