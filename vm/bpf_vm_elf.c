/* Loading a host object into the VM: a small bounds-checked ELF64 reader
 * (the preloaded runtime carries no libelf), map definitions from BTF
 * (libbpf's convention: a ".maps" variable is a struct of pointers to
 * int arrays whose length is the value), one program per function of a
 * "gpux/" section, and the relocations that name maps. */
#include <elf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_vm_priv.h"
#include "driver_kfuncs.h"
#include "host_sec.h"

#define R_BPF_64_64_ 1  /* lddw imm64 against a symbol */
#define R_BPF_64_32_ 10 /* call imm32 against a function symbol */

struct elf_in {
	const unsigned char *p;
	size_t len;
	const Elf64_Shdr *sh;
	unsigned nsh;
	const Elf64_Sym *syms;
	size_t nsyms;
	unsigned symstr;
	char *err;
	size_t errlen;
};

static int bad(struct elf_in *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct elf_in *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->err, e->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Bytes of section i, or NULL when they are not inside the file. */
static const unsigned char *sec_data(const struct elf_in *e, unsigned i, size_t *size)
{
	if (i >= e->nsh)
		return NULL;
	const Elf64_Shdr *s = &e->sh[i];
	if (s->sh_type == SHT_NOBITS || s->sh_offset > e->len || s->sh_size > e->len - s->sh_offset)
		return NULL;
	*size = s->sh_size;
	return e->p + s->sh_offset;
}

/* A NUL-terminated string at off in string section i, or NULL. */
static const char *str_at(const struct elf_in *e, unsigned i, size_t off)
{
	size_t n = 0;
	const unsigned char *d = sec_data(e, i, &n);
	if (!d || off >= n || !memchr(d + off, 0, n - off))
		return NULL;
	return (const char *)d + off;
}

static const char *sec_name(const struct elf_in *e, unsigned i)
{
	const Elf64_Ehdr *h = (const void *)e->p;
	const char *s = str_at(e, h->e_shstrndx, e->sh[i].sh_name);
	return s ? s : "";
}

static int find_sec(const struct elf_in *e, const char *name)
{
	for (unsigned i = 1; i < e->nsh; i++)
		if (!strcmp(sec_name(e, i), name))
			return (int)i;
	return -1;
}

static int read_headers(struct elf_in *e)
{
	const Elf64_Ehdr *h = (const void *)e->p;
	if (e->len < sizeof(*h) || memcmp(h->e_ident, ELFMAG, SELFMAG) ||
	    h->e_ident[EI_CLASS] != ELFCLASS64 || h->e_ident[EI_DATA] != ELFDATA2LSB)
		return bad(e, "not a little-endian ELF64 object");
	if (h->e_machine != EM_BPF)
		return bad(e, "not a BPF object (e_machine %u)", h->e_machine);
	if (h->e_shentsize != sizeof(Elf64_Shdr) || h->e_shoff % 8 || h->e_shoff > e->len ||
	    (size_t)h->e_shnum * sizeof(Elf64_Shdr) > e->len - h->e_shoff ||
	    h->e_shstrndx >= h->e_shnum)
		return bad(e, "ELF section headers out of bounds");
	e->sh = (const void *)(e->p + h->e_shoff);
	e->nsh = h->e_shnum;
	for (unsigned i = 1; i < e->nsh; i++) {
		size_t n = 0;
		if (e->sh[i].sh_type != SHT_NOBITS && !sec_data(e, i, &n))
			return bad(e, "ELF section %u out of bounds", i);
		if (e->sh[i].sh_type != SHT_SYMTAB)
			continue;
		const unsigned char *d = sec_data(e, i, &n);
		if (e->sh[i].sh_entsize != sizeof(Elf64_Sym) || (uintptr_t)d % 8)
			return bad(e, "malformed ELF symbol table");
		e->syms = (const void *)d;
		e->nsyms = n / sizeof(Elf64_Sym);
		e->symstr = e->sh[i].sh_link;
	}
	if (!e->syms)
		return bad(e, "ELF object without a symbol table");
	return 0;
}

static const char *sym_name(const struct elf_in *e, const Elf64_Sym *s)
{
	const char *n = str_at(e, e->symstr, s->st_name);
	return n ? n : "";
}

/* ---- BTF: just enough to read map definitions ---- */

struct btf {
	const unsigned char *types, *strs;
	uint32_t types_len, strs_len;
	uint32_t *off; /* off[id]: byte offset of type id in types */
	uint32_t n;
};

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* Bytes of kind-specific data after a type's 12-byte header. */
static int64_t btf_extra(uint32_t kind, uint32_t vlen)
{
	switch (kind) {
	case 1: case 14: case 17: return 4;         /* int, var, decl tag */
	case 3: return 12;                          /* array */
	case 4: case 5: case 15: case 19: return 12 * (int64_t)vlen; /* struct, union, datasec, enum64 */
	case 6: case 13: return 8 * (int64_t)vlen;  /* enum, func proto */
	case 2: case 7: case 8: case 9: case 10: case 11: case 12: case 16: case 18:
		return 0;
	default: return -1;
	}
}

static int btf_open(struct elf_in *e, struct btf *b)
{
	memset(b, 0, sizeof(*b));
	int i = find_sec(e, ".BTF");
	size_t n = 0;
	const unsigned char *d = i > 0 ? sec_data(e, (unsigned)i, &n) : NULL;
	if (!d || n < 24 || d[0] != 0x9f || d[1] != 0xeb)
		return bad(e, "object has maps but no usable .BTF");
	uint32_t hdr = rd32(d + 4), toff = rd32(d + 8), tlen = rd32(d + 12);
	uint32_t soff = rd32(d + 16), slen = rd32(d + 20);
	if (hdr < 24 || hdr > n || toff > n - hdr || tlen > n - hdr - toff || soff > n - hdr ||
	    slen > n - hdr - soff)
		return bad(e, ".BTF header out of bounds");
	b->types = d + hdr + toff;
	b->types_len = tlen;
	b->strs = d + hdr + soff;
	b->strs_len = slen;
	b->off = malloc(sizeof(*b->off) * (tlen / 12 + 2));
	if (!b->off)
		return bad(e, "out of memory");
	b->n = 1; /* id 0 is void */
	for (uint32_t p = 0; p + 12 <= tlen;) {
		uint32_t info = rd32(b->types + p + 4);
		int64_t x = btf_extra((info >> 24) & 0x1f, info & 0xffff);
		if (x < 0 || (uint64_t)x > tlen - p - 12)
			return bad(e, ".BTF type %u malformed", b->n);
		b->off[b->n++] = p;
		p += 12 + (uint32_t)x;
	}
	return 0;
}

static const char *btf_str(const struct btf *b, uint32_t off)
{
	if (off >= b->strs_len || !memchr(b->strs + off, 0, b->strs_len - off))
		return "";
	return (const char *)b->strs + off;
}

/* Type id t's header, with typedefs and qualifiers skipped. */
static const unsigned char *btf_type(const struct btf *b, uint32_t t)
{
	for (int hops = 0; t && t < b->n && hops < 32; hops++) {
		const unsigned char *p = b->types + b->off[t];
		uint32_t kind = (rd32(p + 4) >> 24) & 0x1f;
		if (kind < 8 || kind > 11)
			return p;
		t = rd32(p + 8);
	}
	return NULL;
}

/* The map definition of the ".maps" variable name. */
static int btf_map_def(struct elf_in *e, const struct btf *b, const char *name, uint32_t v[4])
{
	static const char *const fields[] = { "type", "max_entries", "key_size", "value_size" };
	memset(v, 0, sizeof(uint32_t) * 4);
	for (uint32_t id = 1; id < b->n; id++) {
		const unsigned char *p = b->types + b->off[id];
		if (((rd32(p + 4) >> 24) & 0x1f) != 14 || strcmp(btf_str(b, rd32(p)), name))
			continue;
		const unsigned char *st = btf_type(b, rd32(p + 8));
		if (!st || ((rd32(st + 4) >> 24) & 0x1f) != 4)
			return bad(e, "map %s: its BTF is not a struct", name);
		uint32_t vlen = rd32(st + 4) & 0xffff;
		for (uint32_t k = 0; k < vlen; k++) {
			const unsigned char *m = st + 12 + 12 * k;
			const char *mn = btf_str(b, rd32(m));
			const unsigned char *ptr = btf_type(b, rd32(m + 4));
			const unsigned char *arr = ptr && ((rd32(ptr + 4) >> 24) & 0x1f) == 2
						   ? btf_type(b, rd32(ptr + 8)) : NULL;
			int f = -1;
			for (int j = 0; j < 4; j++)
				if (!strcmp(mn, fields[j]))
					f = j;
			if (f < 0 && !strcmp(mn, "map_flags"))
				continue;
			if (f < 0 || !arr || ((rd32(arr + 4) >> 24) & 0x1f) != 3)
				return bad(e, "map %s: member '%s' is not supported by the VM", name, mn);
			v[f] = rd32(arr + 12 + 8); /* btf_array.nelems */
		}
		return 0;
	}
	return bad(e, "map %s: no BTF definition", name);
}

static int load_maps(struct vm *vm, struct elf_in *e)
{
	int ms = find_sec(e, ".maps");
	if (ms < 0)
		return 0;
	struct btf b;
	int rc = btf_open(e, &b);
	vm->maps = calloc(e->nsyms + 1, sizeof(*vm->maps));
	if (!rc && !vm->maps)
		rc = bad(e, "out of memory");
	for (size_t i = 0; !rc && i < e->nsyms; i++) {
		const Elf64_Sym *s = &e->syms[i];
		if (s->st_shndx != (unsigned)ms || ELF64_ST_TYPE(s->st_info) != STT_OBJECT)
			continue;
		uint32_t v[4];
		rc = btf_map_def(e, &b, sym_name(e, s), v);
		if (!rc && umap_init(&vm->maps[vm->nmaps].u, sym_name(e, s), v[0], v[2], v[3], v[1],
				     e->err, e->errlen))
			rc = -1;
		if (!rc)
			vm->nmaps++;
	}
	free(b.off);
	return rc;
}

/* ---- programs and relocations ---- */

static int map_index(const struct vm *vm, const char *name)
{
	for (int i = 0; i < vm->nmaps; i++)
		if (!strcmp(vm->maps[i].u.name, name))
			return i;
	return -1;
}

static int relocate(struct vm *vm, struct elf_in *e, unsigned sec, struct vm_prog *p,
		    uint64_t start, unsigned flags)
{
	int ms = find_sec(e, ".maps");
	for (unsigned r = 1; r < e->nsh; r++) {
		const Elf64_Shdr *rs = &e->sh[r];
		if ((rs->sh_type != SHT_REL && rs->sh_type != SHT_RELA) || rs->sh_info != sec)
			continue;
		if (rs->sh_type == SHT_RELA || rs->sh_entsize != sizeof(Elf64_Rel) ||
		    rs->sh_offset % 8)
			return bad(e, "%s: unsupported relocation section", p->section);
		size_t n = 0;
		const Elf64_Rel *rel = (const void *)sec_data(e, r, &n);
		for (size_t k = 0; k < n / sizeof(*rel); k++) {
			uint64_t off = rel[k].r_offset;
			if (off < start || off >= start + (uint64_t)p->n * 8)
				continue; /* another function of the section */
			size_t si = ELF64_R_SYM(rel[k].r_info);
			if (off % 8 || si >= e->nsyms)
				return bad(e, "%s: malformed relocation", p->section);
			const Elf64_Sym *s = &e->syms[si];
			const char *name = sym_name(e, s);
			struct bpf_insn *in = &p->insns[(off - start) / 8];
			uint32_t type = ELF64_R_TYPE(rel[k].r_info);
			int kf = (flags & VM_LOAD_DRIVER) && s->st_shndx == SHN_UNDEF
					 ? gpux_kfunc_id(name) : -1;
			if (kf >= 0 && in->code == (BPF_JMP | BPF_CALL)) {
				/* served by the embedder (a simulator) */
				in->src = 0;
				in->imm = kf;
				continue;
			}
			if (type == R_BPF_64_32_ || in->code == (BPF_JMP | BPF_CALL))
				return bad(e, "%s: call to '%s' cannot run in the VM (%s)", p->section,
					   name, gpux_kfunc_id(name) >= 0 ? "kfuncs are for the driver"
					   : "not a gpu_ext kfunc");
			if (s->st_shndx == SHN_UNDEF)
				return bad(e, "%s: unresolved symbol '%s'", p->section, name);
			if (type != R_BPF_64_64_ || !bpf_is_lddw(in) || (ms >= 0 && s->st_shndx != (unsigned)ms))
				return bad(e, "%s: relocation against '%s' not supported by the VM",
					   p->section, name);
			int mi = map_index(vm, name);
			if (mi < 0)
				return bad(e, "%s: '%s' is not a map", p->section, name);
			in->src = BPF_PSEUDO_MAP_IDX;
			in->imm = mi;
			in[1].imm = 0;
		}
	}
	return 0;
}

/* the driver's programs: its hooks, and the kprobes that capture what
 * they read */
static bool driver_sec(const char *sec)
{
	return !strncmp(sec, "struct_ops/", 11) || !strncmp(sec, "kprobe/", 7);
}

static int load_progs(struct vm *vm, struct elf_in *e, unsigned flags)
{
	vm->progs = calloc(e->nsyms + 1, sizeof(*vm->progs));
	if (!vm->progs)
		return bad(e, "out of memory");
	for (size_t i = 0; i < e->nsyms; i++) {
		const Elf64_Sym *s = &e->syms[i];
		if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx >= e->nsh)
			continue;
		const char *sec = sec_name(e, s->st_shndx);
		bool ours = !strncmp(sec, HOST_SEC_PREFIX, strlen(HOST_SEC_PREFIX)) ||
			    ((flags & VM_LOAD_DRIVER) && driver_sec(sec));
		if (!ours || !(e->sh[s->st_shndx].sh_flags & SHF_EXECINSTR))
			continue;
		size_t n = 0;
		const unsigned char *d = sec_data(e, s->st_shndx, &n);
		if (!d || s->st_value % 8 || s->st_size % 8 || !s->st_size ||
		    s->st_value > n || s->st_size > n - s->st_value || s->st_size / 8 > 1000000)
			return bad(e, "%s: function '%s' out of its section", sec, sym_name(e, s));
		struct vm_prog *p = &vm->progs[vm->nprogs++];
		p->section = strdup(sec);
		p->name = strdup(sym_name(e, s));
		p->n = (int)(s->st_size / 8);
		p->off = s->st_value;
		p->insns = malloc(s->st_size);
		if (!p->section || !p->name || !p->insns)
			return bad(e, "out of memory");
		memcpy(p->insns, d + s->st_value, s->st_size);
		if (relocate(vm, e, s->st_shndx, p, s->st_value, flags))
			return -1;
	}
	return 0;
}

/* Programs in section, then offset, order: BEGIN probes run as written. */
static int prog_cmp(const void *a, const void *b)
{
	const struct vm_prog *x = a, *y = b;
	int c = strcmp(x->section, y->section);
	return c ? c : x->off < y->off ? -1 : x->off > y->off;
}

/* elf must be 8-byte aligned (vm_load copies it into malloc'd memory). */
int vm_elf_load(struct vm *vm, const unsigned char *elf, size_t len, unsigned flags,
		char *err, size_t errlen)
{
	struct elf_in e = { .p = elf, .len = len, .err = err, .errlen = errlen };
	vm->driver = (flags & VM_LOAD_DRIVER) != 0;
	if (read_headers(&e) || load_maps(vm, &e) || load_progs(vm, &e, flags))
		return -1;
	qsort(vm->progs, (size_t)vm->nprogs, sizeof(*vm->progs), prog_cmp);
	for (int i = 0; i < vm->nprogs; i++) {
		if (vm_check_prog(vm, &vm->progs[i], err, errlen))
			return -1;
		vm->progs[i].stack = vm_stack_depth(&vm->progs[i]);
	}
	return 0;
}
