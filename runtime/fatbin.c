/* Fatbin wrapper, container and element parsing; layout in fatbin.h. */
#include "fatbin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decompress.h"

/* Unaligned little-endian reads: wrappers and elements may sit anywhere
 * in a buffer the caller copied. */
static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

const char *gpux_fb_strerror(int status)
{
	switch (status) {
	case GPUX_FB_OK: return "ok";
	case GPUX_FB_END: return "end of fatbin";
	case GPUX_FB_ETRUNC: return "fatbin truncated";
	case GPUX_FB_EMAGIC: return "bad fatbin magic";
	case GPUX_FB_EFORMAT: return "malformed fatbin header";
	case GPUX_FB_ENOMEM: return "out of memory";
	case GPUX_FB_EDECOMPRESS: return "corrupt compressed fatbin element";
	case GPUX_FB_EUNSUPPORTED: return "unsupported fatbin compression";
	case GPUX_FB_ENOTFOUND: return "no matching fatbin element";
	}
	return "unknown fatbin error";
}

int gpux_fb_wrapper_parse(const void *buf, size_t len,
			  struct gpux_fb_wrapper *out)
{
	const uint8_t *p = buf;

	if (!buf || len < GPUX_FB_WRAPPER_SIZE)
		return GPUX_FB_ETRUNC;
	out->magic = rd32(p);
	out->version = rd32(p + 4);
	out->data = rd64(p + 8);
	out->extra = rd64(p + 16);
	if (out->magic != GPUX_FB_WRAPPER_MAGIC)
		return GPUX_FB_EMAGIC;
	return GPUX_FB_OK;
}

int gpux_fb_container_size(const void *buf, size_t avail, size_t *total)
{
	const uint8_t *p = buf;
	uint16_t hs;
	uint64_t size;

	if (!buf || avail < GPUX_FB_HEADER_SIZE)
		return GPUX_FB_ETRUNC;
	if (rd32(p) != GPUX_FB_MAGIC)
		return GPUX_FB_EMAGIC;
	hs = rd16(p + 6);
	size = rd64(p + 8);
	if (hs < GPUX_FB_HEADER_SIZE || size > SIZE_MAX - hs)
		return GPUX_FB_EFORMAT;
	*total = (size_t)(hs + size);
	return GPUX_FB_OK;
}

void gpux_fb_iter_init(struct gpux_fb_iter *it, const void *buf, size_t len)
{
	memset(it, 0, sizeof(*it));
	it->buf = buf;
	it->len = buf ? len : 0;
}

/* Opens the container at it->pos. Zero bytes between containers are
 * alignment padding; a buffer that ends in zeros ends cleanly. */
static int open_container(struct gpux_fb_iter *it)
{
	size_t total;
	int rc;

	while (it->pos < it->len && it->buf[it->pos] == 0)
		it->pos++;
	if (it->pos >= it->len)
		return GPUX_FB_END;
	rc = gpux_fb_container_size(it->buf + it->pos, it->len - it->pos, &total);
	if (rc)
		return rc;
	if (total > it->len - it->pos)
		return GPUX_FB_ETRUNC;
	it->cont_end = it->pos + total;
	it->pos += rd16(it->buf + it->pos + 6);
	return GPUX_FB_OK;
}

static int parse_elem(const uint8_t *p, size_t avail, struct gpux_fb_elem *e)
{
	uint32_t name_off, name_len, opt_off, opt_len;

	if (avail < 64)
		return GPUX_FB_ETRUNC;
	e->kind = rd16(p);
	e->version = rd16(p + 2);
	e->header_size = rd32(p + 4);
	e->payload_size = rd64(p + 8);
	e->compressed_size = rd32(p + 16);
	e->code_minor = rd16(p + 24);
	e->code_major = rd16(p + 26);
	e->arch = rd32(p + 28);
	name_off = rd32(p + 32);
	name_len = rd32(p + 36);
	e->flags = rd64(p + 40);
	e->uncompressed_size = rd64(p + 56);
	e->options = NULL;
	e->options_len = 0;
	if (e->header_size < 64 || e->header_size > avail)
		return e->header_size < 64 ? GPUX_FB_EFORMAT : GPUX_FB_ETRUNC;
	if (e->payload_size > avail - e->header_size)
		return GPUX_FB_ETRUNC;
	if (name_len && ((uint64_t)name_off + name_len > e->header_size))
		return GPUX_FB_EFORMAT;
	/* Options live inside the header (PTX elements, -rdc builds). */
	if (e->kind == GPUX_FB_PTX && e->header_size >= 72) {
		opt_off = rd32(p + 64);
		opt_len = rd32(p + 68);
		if (opt_len) {
			if ((uint64_t)opt_off + opt_len > e->header_size)
				return GPUX_FB_EFORMAT;
			e->options = (const char *)p + opt_off;
			e->options_len = opt_len;
		}
	}
	if ((e->flags & (GPUX_FB_FLAG_LZ4 | GPUX_FB_FLAG_ZSTD)) &&
	    e->compressed_size > e->payload_size)
		return GPUX_FB_EFORMAT;
	e->payload = p + e->header_size;
	return GPUX_FB_OK;
}

int gpux_fb_next(struct gpux_fb_iter *it, struct gpux_fb_elem *out)
{
	int rc;

	if (it->failed)
		return it->failed;
	for (;;) {
		if (!it->cont_end) {
			rc = open_container(it);
			if (rc) {
				if (rc != GPUX_FB_END)
					it->failed = rc;
				return rc;
			}
		}
		if (it->pos < it->cont_end)
			break;
		it->cont_end = 0;
		it->container++;
	}
	rc = parse_elem(it->buf + it->pos, it->cont_end - it->pos, out);
	if (rc) {
		it->failed = rc;
		return rc;
	}
	out->offset = it->pos;
	out->container = it->container;
	it->pos += out->header_size + out->payload_size;
	return GPUX_FB_OK;
}

int gpux_fb_elem_data(const struct gpux_fb_elem *e, uint8_t **out, size_t *len)
{
	uint64_t flags = e->flags & (GPUX_FB_FLAG_LZ4 | GPUX_FB_FLAG_ZSTD);
	size_t n;
	uint8_t *buf;

	*out = NULL;
	*len = 0;
	if (flags == GPUX_FB_FLAG_LZ4)
		return gpux_lz4_decompress(e->payload, e->compressed_size,
					   e->uncompressed_size, out, len);
	if (flags == GPUX_FB_FLAG_ZSTD)
		return gpux_zstd_decompress(e->payload, e->compressed_size,
					    e->uncompressed_size, out, len);
	if (flags)
		return GPUX_FB_EUNSUPPORTED;
	n = (size_t)e->payload_size;
	buf = malloc(n + 1);
	if (!buf)
		return GPUX_FB_ENOMEM;
	memcpy(buf, e->payload, n);
	buf[n] = 0;
	*out = buf;
	*len = n;
	return GPUX_FB_OK;
}

int gpux_fb_elem_ptx(const struct gpux_fb_elem *e, char **text)
{
	uint8_t *data;
	size_t len;
	int rc;

	*text = NULL;
	if (e->kind != GPUX_FB_PTX)
		return GPUX_FB_ENOTFOUND;
	rc = gpux_fb_elem_data(e, &data, &len);
	if (rc)
		return rc;
	/* The buffer is NUL-terminated; padding NULs end the text early. */
	*text = (char *)data;
	return GPUX_FB_OK;
}

int gpux_fb_best_ptx(const void *buf, size_t len, unsigned device_arch,
		     struct gpux_fb_elem *out, unsigned *lowest_ptx)
{
	struct gpux_fb_iter it;
	struct gpux_fb_elem e;
	unsigned lowest = 0;
	int found = 0, rc;

	gpux_fb_iter_init(&it, buf, len);
	while ((rc = gpux_fb_next(&it, &e)) == GPUX_FB_OK) {
		if (e.kind != GPUX_FB_PTX)
			continue;
		if (!lowest || e.arch < lowest)
			lowest = e.arch;
		if (e.arch <= device_arch && (!found || e.arch > out->arch)) {
			*out = e;
			found = 1;
		}
	}
	if (lowest_ptx)
		*lowest_ptx = lowest;
	if (rc != GPUX_FB_END)
		return rc;
	return found ? GPUX_FB_OK : GPUX_FB_ENOTFOUND;
}

int gpux_fb_rebuild_hint(unsigned arch, char *buf, size_t size)
{
	return snprintf(buf, size,
			"-gencode arch=compute_%u,code=[sm_%u,compute_%u]",
			arch, arch, arch);
}
