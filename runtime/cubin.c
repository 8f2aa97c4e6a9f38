/* Minimal ELF64 symbol-table reader for cubins. */
#include "cubin.h"

#include <stdlib.h>
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

/* The cubin's section headers, bounds-checked. */
struct elf_view {
	const uint8_t *elf;
	size_t len;
	uint64_t shoff, shentsize, shnum;
};

static int view(const uint8_t *elf, size_t len, struct elf_view *v)
{
	if (len < 64)
		return GPUX_FB_ETRUNC;
	/* ELF64 little-endian only: every cubin nvcc makes for x86 hosts. */
	if (memcmp(elf, "\177ELF", 4) || elf[4] != 2 || elf[5] != 1)
		return GPUX_FB_EMAGIC;
	*v = (struct elf_view){ elf, len, rd(elf + 0x28, 8), rd(elf + 0x3a, 2), rd(elf + 0x3c, 2) };
	if (v->shentsize < 64 || !in_bounds(v->shoff, v->shentsize * v->shnum, len))
		return GPUX_FB_EFORMAT;
	return GPUX_FB_OK;
}

static const uint8_t *shdr(const struct elf_view *v, uint64_t i)
{
	return v->elf + v->shoff + i * v->shentsize;
}

int gpux_cubin_kernels(const uint8_t *elf, size_t len, struct gpux_names *out)
{
	struct elf_view v;
	int vrc = view(elf, len, &v);
	if (vrc)
		return vrc;
	uint64_t shnum = v.shnum;
	for (uint64_t i = 0; i < shnum; i++) {
		const uint8_t *sh = shdr(&v, i), *str;
		uint64_t off, size, entsize, link, stroff, strsize;

		if (rd(sh + 4, 4) != SHT_SYMTAB_)
			continue;
		off = rd(sh + 0x18, 8);
		size = rd(sh + 0x20, 8);
		link = rd(sh + 0x28, 4);
		entsize = rd(sh + 0x38, 8);
		if (entsize < 24 || link >= shnum || !in_bounds(off, size, len))
			return GPUX_FB_EFORMAT;
		str = shdr(&v, link);
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

/* A section's NUL-terminated name, or "" when it is out of bounds. */
static const char *sec_name(const struct elf_view *v, uint64_t i)
{
	uint64_t strndx = rd(v->elf + 0x3e, 2);
	if (strndx >= v->shnum)
		return "";
	const uint8_t *s = shdr(v, strndx);
	uint64_t off = rd(s + 0x18, 8), size = rd(s + 0x20, 8), name = rd(shdr(v, i), 4);
	if (!in_bounds(off, size, v->len) || name >= size || !memchr(v->elf + off + name, 0, size - name))
		return "";
	return (const char *)v->elf + off + name;
}

static int add_regs(struct gpux_cubin_regs *out, const char *name, unsigned regs)
{
	for (size_t i = 0; i < out->n; i++)
		if (!strcmp(out->name[i], name))
			return GPUX_FB_OK;
	char **n = realloc(out->name, (out->n + 1) * sizeof(*n));
	if (!n)
		return GPUX_FB_ENOMEM;
	out->name = n;
	unsigned *r = realloc(out->regs, (out->n + 1) * sizeof(*r));
	if (!r)
		return GPUX_FB_ENOMEM;
	out->regs = r;
	if (!(out->name[out->n] = strdup(name)))
		return GPUX_FB_ENOMEM;
	out->regs[out->n++] = regs;
	return GPUX_FB_OK;
}

#define EIATTR_REGCOUNT 0x2f
#define EIFMT_SVAL 4

int gpux_cubin_regs(const uint8_t *elf, size_t len, struct gpux_cubin_regs *out)
{
	struct elf_view v;
	int rc = view(elf, len, &v);
	if (rc)
		return rc;
	/* the symbol table: kernel names by index */
	uint64_t symoff = 0, symsize = 0, entsize = 0, stroff = 0, strsize = 0;
	for (uint64_t i = 0; i < v.shnum && !symsize; i++) {
		const uint8_t *sh = shdr(&v, i);
		if (rd(sh + 4, 4) != SHT_SYMTAB_)
			continue;
		uint64_t link = rd(sh + 0x28, 4);
		symoff = rd(sh + 0x18, 8);
		symsize = rd(sh + 0x20, 8);
		entsize = rd(sh + 0x38, 8);
		if (entsize < 24 || link >= v.shnum || !in_bounds(symoff, symsize, len))
			return GPUX_FB_EFORMAT;
		stroff = rd(shdr(&v, link) + 0x18, 8);
		strsize = rd(shdr(&v, link) + 0x20, 8);
		if (!in_bounds(stroff, strsize, len) || !strsize || elf[stroff + strsize - 1])
			return GPUX_FB_EFORMAT;
	}
	if (!symsize)
		return GPUX_FB_OK;
	for (uint64_t i = 0; i < v.shnum; i++) {
		const uint8_t *sh = shdr(&v, i);
		const char *nm = sec_name(&v, i);
		uint64_t off = rd(sh + 0x18, 8), size = rd(sh + 0x20, 8);
		if (!strcmp(nm, ".nv.info") && in_bounds(off, size, len)) {
			/* records: u8 format, u8 attribute, then a u16 value, or
			 * for EIFMT_SVAL a u16 size and that many bytes */
			for (uint64_t p = off; p + 4 <= off + size;) {
				unsigned fmt = elf[p], attr = elf[p + 1];
				uint64_t vsize = fmt == EIFMT_SVAL ? rd(elf + p + 2, 2) : 0;
				if (p + 4 + vsize > off + size)
					break;
				if (fmt == EIFMT_SVAL && attr == EIATTR_REGCOUNT && vsize >= 8) {
					uint64_t sym = rd(elf + p + 4, 4), s = sym * entsize;
					unsigned regs = (unsigned)rd(elf + p + 8, 4);
					if (s + entsize <= symsize) {
						uint64_t name = rd(elf + symoff + s, 4);
						if (name < strsize && (rc = add_regs(out, (const char *)elf + stroff + name, regs)))
							return rc;
					}
				}
				p += 4 + vsize;
			}
		} else if (!strncmp(nm, ".text.", 6) && rd(sh + 0x2c, 4) >> 24) {
			if ((rc = add_regs(out, nm + 6, (unsigned)(rd(sh + 0x2c, 4) >> 24))))
				return rc;
		}
	}
	return GPUX_FB_OK;
}

unsigned gpux_cubin_regs_of(const struct gpux_cubin_regs *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->name[i], name))
			return r->regs[i];
	return 0;
}

void gpux_cubin_regs_free(struct gpux_cubin_regs *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->name[i]);
	free(r->name);
	free(r->regs);
	memset(r, 0, sizeof(*r));
}
