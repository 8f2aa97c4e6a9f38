/* Minimal ELF64 symbol-table reader for cubins. */
#include "cubin.h"

#include <string.h>

#include "fatbin.h"

#define STO_CUDA_ENTRY 0x10
#define SHT_SYMTAB_ 2
#define STT_FUNC_ 2

static uint64_t rd(const uint8_t *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* Checks OFF + SIZE fits in LEN without overflowing. */
static int in_bounds(uint64_t off, uint64_t size, size_t len)
{
	return off <= len && size <= len - off;
}

int gpux_cubin_kernels(const uint8_t *elf, size_t len, struct gpux_names *out)
{
	uint64_t shoff, shentsize, shnum;

	if (len < 64)
		return GPUX_FB_ETRUNC;
	/* ELF64 little-endian only: every cubin nvcc makes for x86 hosts. */
	if (memcmp(elf, "\177ELF", 4) || elf[4] != 2 || elf[5] != 1)
		return GPUX_FB_EMAGIC;
	shoff = rd(elf + 0x28, 8);
	shentsize = rd(elf + 0x3a, 2);
	shnum = rd(elf + 0x3c, 2);
	if (shentsize < 64 || !in_bounds(shoff, shentsize * shnum, len))
		return GPUX_FB_EFORMAT;
	for (uint64_t i = 0; i < shnum; i++) {
		const uint8_t *sh = elf + shoff + i * shentsize, *str;
		uint64_t off, size, entsize, link, stroff, strsize;

		if (rd(sh + 4, 4) != SHT_SYMTAB_)
			continue;
		off = rd(sh + 0x18, 8);
		size = rd(sh + 0x20, 8);
		link = rd(sh + 0x28, 4);
		entsize = rd(sh + 0x38, 8);
		if (entsize < 24 || link >= shnum || !in_bounds(off, size, len))
			return GPUX_FB_EFORMAT;
		str = elf + shoff + link * shentsize;
		stroff = rd(str + 0x18, 8);
		strsize = rd(str + 0x20, 8);
		if (!in_bounds(stroff, strsize, len) || !strsize ||
		    elf[stroff + strsize - 1] != 0)
			return GPUX_FB_EFORMAT;
		for (uint64_t s = 0; s + entsize <= size; s += entsize) {
			const uint8_t *sym = elf + off + s;
			uint64_t name = rd(sym, 4);
			const char *nm;
			int rc;

			if ((sym[4] & 0xf) != STT_FUNC_ ||
			    !(sym[5] & STO_CUDA_ENTRY))
				continue;
			if (name >= strsize)
				return GPUX_FB_EFORMAT;
			nm = (const char *)elf + stroff + name;
			rc = gpux_names_add(out, nm, strlen(nm), GPUX_SYM_ENTRY);
			if (rc)
				return rc;
		}
	}
	return GPUX_FB_OK;
}
