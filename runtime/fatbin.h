/* Fatbin parsing in memory: the __fatBinC_Wrapper_t that host code passes
 * to __cudaRegisterFatBinary, the fatbin containers it points to, and the
 * PTX/ELF elements inside them. Every read is bounds-checked against the
 * buffer the caller gives: this parses the memory of arbitrary programs.
 *
 * Layout, verified on nvcc 13.0 output (little-endian; offsets in bytes):
 *
 * Wrapper (24 bytes, section .nvFatBinSegment):
 *   0 u32 magic 0x466243B1   4 u32 version (1: a TU's fatbin; 2: the
 *   linked module nvlink makes)   8 u64 pointer to a container
 *   16 u64 v2: pointer to the prelinked fatbins list (.bss); v1: 0.
 *
 * Container (sections .nv_fatbin and, with -rdc, __nv_relfatbin; a
 * linked executable concatenates one per TU, no padding seen):
 *   0 u32 magic 0xBA55ED50   4 u16 version (1)   6 u16 header_size (16)
 *   8 u64 size of the elements that follow the header
 *
 * Element header (header_size 0x40 for ELF, 0x50 for PTX, 0x60 for PTX
 * with ptxas options as -rdc makes):
 *   0 u16 kind (1 PTX, 2 ELF/SASS)   2 u16 version (0x0101)
 *   4 u32 header_size   8 u64 payload size (padded to 8)
 *   16 u32 compressed size (exact bytes; 0 when not compressed)
 *   20 u32 0x40 for PTX, 0 for ELF (unknown)
 *   24 u16 code version minor   26 u16 major (PTX ISA 9.0; ELF 1.8)
 *   28 u32 SM arch (80 = sm_80/compute_80, 90 = sm_90)
 *   32 u32 name offset, 36 u32 name length (0 in nvcc output)
 *   40 u64 flags: 0x1 64-bit, 0x10 linux host, 0x2000 LZ4 block,
 *          0x8000 ZSTD frame
 *   48 u64 0   56 u64 uncompressed size (0 when not compressed)
 *   PTX only: 64 u32 options offset (from the element header; 0x48),
 *          68 u32 options length (0, or 16 for "--compile-only  ")
 *
 * The payload follows the element header. Uncompressed PTX is NUL-padded
 * text with comments blanked to empty lines. nvcc 13 compresses PTX only,
 * with ZSTD, by default (and with --compress-mode=balance); size mode and
 * -Xfatbin -compress-all use ZSTD for ELF too; speed mode uses LZ4. */
#ifndef GPUX_FATBIN_H
#define GPUX_FATBIN_H

#include <stddef.h>
#include <stdint.h>

#define GPUX_FB_WRAPPER_MAGIC 0x466243B1u
#define GPUX_FB_MAGIC 0xBA55ED50u
#define GPUX_FB_WRAPPER_SIZE 24
#define GPUX_FB_HEADER_SIZE 16

enum gpux_fb_kind { GPUX_FB_PTX = 1, GPUX_FB_ELF = 2 };

#define GPUX_FB_FLAG_64BIT 0x1u
#define GPUX_FB_FLAG_LZ4 0x2000u
#define GPUX_FB_FLAG_ZSTD 0x8000u

enum gpux_fb_status {
	GPUX_FB_OK = 0,
	GPUX_FB_END = 1,              /* iteration finished */
	GPUX_FB_ETRUNC = -1,          /* a length runs past the buffer */
	GPUX_FB_EMAGIC = -2,          /* not a wrapper / container */
	GPUX_FB_EFORMAT = -3,         /* inconsistent header fields */
	GPUX_FB_ENOMEM = -4,
	GPUX_FB_EDECOMPRESS = -5,     /* corrupt compressed payload */
	GPUX_FB_EUNSUPPORTED = -6,    /* unknown compression flags */
	GPUX_FB_ENOTFOUND = -7,       /* no element matches */
};

const char *gpux_fb_strerror(int status);

struct gpux_fb_wrapper {
	uint32_t magic;
	uint32_t version;
	uint64_t data;                /* address of the container */
	uint64_t extra;
};

/* Reads a wrapper from LEN bytes at BUF (LEN >= 24). */
int gpux_fb_wrapper_parse(const void *buf, size_t len,
			  struct gpux_fb_wrapper *out);

/* Total bytes (header + elements) of the container at BUF, from its
 * first 16 bytes: the in-process caller knows no length up front. */
int gpux_fb_container_size(const void *buf, size_t avail, size_t *total);

struct gpux_fb_elem {
	uint16_t kind;
	uint16_t version;
	uint32_t header_size;
	uint64_t payload_size;        /* padded bytes after the header */
	uint32_t compressed_size;
	uint16_t code_major, code_minor;
	uint32_t arch;                /* 80 for sm_80 / compute_80 */
	uint64_t flags;
	uint64_t uncompressed_size;
	const uint8_t *payload;       /* points into the caller's buffer */
	const char *options;          /* ptxas options, not NUL-terminated */
	size_t options_len;
	size_t offset;                /* of the element header in the buffer */
	unsigned container;           /* index of its container */
};

/* Walks every element of the containers concatenated in a buffer. */
struct gpux_fb_iter {
	const uint8_t *buf;
	size_t len;
	size_t pos;
	size_t cont_end;              /* 0 between containers */
	unsigned container;           /* after GPUX_FB_END: containers seen */
	int failed;
};

void gpux_fb_iter_init(struct gpux_fb_iter *it, const void *buf, size_t len);
/* GPUX_FB_OK with *out filled, GPUX_FB_END, or an error (sticky). */
int gpux_fb_next(struct gpux_fb_iter *it, struct gpux_fb_elem *out);

/* The element's payload, decompressed, in a malloc'd buffer with a NUL
 * after its LEN bytes. */
int gpux_fb_elem_data(const struct gpux_fb_elem *e, uint8_t **out,
		      size_t *len);
/* The PTX text of a PTX element: malloc'd, NUL-terminated, padding cut. */
int gpux_fb_elem_ptx(const struct gpux_fb_elem *e, char **text);

/* The PTX element with the highest arch <= DEVICE_ARCH (e.g. 90 for a
 * compute capability 9.0 device). GPUX_FB_ENOTFOUND if none; then
 * *lowest_ptx is the lowest PTX arch present, or 0 if there is no PTX. */
int gpux_fb_best_ptx(const void *buf, size_t len, unsigned device_arch,
		     struct gpux_fb_elem *out, unsigned *lowest_ptx);

/* "-gencode arch=compute_90,code=[sm_90,compute_90]" for the rebuild
 * advice; returns snprintf's count. */
int gpux_fb_rebuild_hint(unsigned arch, char *buf, size_t size);

#endif
