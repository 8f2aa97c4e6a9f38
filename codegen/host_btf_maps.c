/* The maps' BTF, written by gpux into the object LLVM emitted. libbpf
 * and the VM read a map's definition from BTF: a VAR of the ".maps"
 * DATASEC whose type is a struct of pointers to int arrays, each array's
 * element count the value (libbpf's __uint()). LLVM's BPF backend would
 * write them from debug info, but it adds each BTF string by a linear
 * search of all before it, and re-adds every variable's name at every
 * function: 25,000 maps took it 6 s. Here the types go after LLVM's and
 * the strings after LLVM's, deduplicated through a table, and the
 * object's sections after .BTF move down. */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host_priv.h"

enum { K_INT = 1, K_PTR = 2, K_ARRAY = 3, K_STRUCT = 4, K_VAR = 14, K_DATASEC = 15 };

struct hbtf_map {
	struct hbtf_map *next;
	const char *sym;
	const char *const *names;
	uint32_t vals[8];
	int n;
};

struct buf {
	unsigned char *p;
	size_t len, cap;
	bool oom;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		unsigned char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void put32(struct buf *b, uint32_t v)
{
	put(b, &v, 4); /* BPF objects are little-endian, as this host */
}

struct writer {
	struct hctx *h;
	struct buf types, strs;
	uint32_t str_base; /* LLVM's string bytes */
	uint32_t next_id;  /* the next type's id */
	struct hindex str_ix, ptr_ix, def_ix;
};

static uint32_t str_off(struct writer *w, const char *s)
{
	uintptr_t o = (uintptr_t)hl_index_get(&w->str_ix, s);
	if (o)
		return (uint32_t)(o - 1);
	uint32_t off = w->str_base + (uint32_t)w->strs.len;
	put(&w->strs, s, strlen(s) + 1);
	hl_index_put(&w->str_ix, &w->h->obj->arena, s, (void *)(uintptr_t)(off + 1));
	return off;
}

static uint32_t type(struct writer *w, const char *name, uint32_t kind, uint32_t vlen,
		     uint32_t size_or_type)
{
	put32(&w->types, name ? str_off(w, name) : 0);
	put32(&w->types, kind << 24 | vlen);
	put32(&w->types, size_or_type);
	return w->next_id++;
}

/* int (*)[v]: one per value */
static uint32_t ptr_to_array(struct writer *w, uint32_t v, uint32_t int_id, uint32_t idx_id)
{
	const char *key = arena_printf(&w->h->obj->arena, "%u", v);
	uintptr_t id = (uintptr_t)hl_index_get(&w->ptr_ix, key);
	if (id)
		return (uint32_t)id;
	uint32_t arr = type(w, NULL, K_ARRAY, 0, 0);
	put32(&w->types, int_id);
	put32(&w->types, idx_id);
	put32(&w->types, v);
	uint32_t ptr = type(w, NULL, K_PTR, 0, arr);
	hl_index_put(&w->ptr_ix, &w->h->obj->arena, key, (void *)(uintptr_t)ptr);
	return ptr;
}

/* struct { int (*names[i])[vals[i]]; ... }: one per distinct definition */
static uint32_t def_struct(struct writer *w, const struct hbtf_map *m, uint32_t int_id,
			   uint32_t idx_id)
{
	struct arena *a = &w->h->obj->arena;
	const char *key = "";
	for (int i = 0; i < m->n; i++)
		key = arena_printf(a, "%s%s=%u;", key, m->names[i], m->vals[i]);
	uintptr_t id = (uintptr_t)hl_index_get(&w->def_ix, key);
	if (id)
		return (uint32_t)id;
	uint32_t ptr[8];
	for (int i = 0; i < m->n; i++)
		ptr[i] = ptr_to_array(w, m->vals[i], int_id, idx_id);
	uint32_t st = type(w, NULL, K_STRUCT, (uint32_t)m->n, (uint32_t)m->n * 8);
	for (int i = 0; i < m->n; i++) {
		put32(&w->types, str_off(w, m->names[i]));
		put32(&w->types, ptr[i]);
		put32(&w->types, (uint32_t)i * 64); /* bit offset */
	}
	hl_index_put(&w->def_ix, a, key, (void *)(uintptr_t)st);
	return st;
}

void hl_btf_map_note(struct hctx *h, const char *sym, const uint32_t *vals,
		     const char *const *names, int n)
{
	struct hbtf_map *m = arena_zalloc(&h->obj->arena, sizeof(*m));
	m->sym = sym;
	m->names = names;
	m->n = n < 8 ? n : 8;
	memcpy(m->vals, vals, sizeof(*vals) * (size_t)m->n);
	*(h->btf_maps_tail ? &h->btf_maps_tail->next : &h->btf_maps) = m;
	h->btf_maps_tail = m;
}

/* Bytes after the 12 of a type of this kind and vlen (LLVM's .BTF). */
static int64_t extra(uint32_t kind, uint32_t vlen)
{
	switch (kind) {
	case 1: case 14: case 17: return 4;             /* INT, VAR, DECL_TAG */
	case 3: return 12;                              /* ARRAY */
	case 4: case 5: case 15: case 19: return 12 * (int64_t)vlen;
	case 6: case 13: return 8 * (int64_t)vlen;      /* ENUM, FUNC_PROTO */
	case 2: case 7: case 8: case 9: case 10: case 11: case 12: case 16: case 18:
		return 0;
	default: return -1;
	}
}

struct btf_hdr {
	uint16_t magic;
	uint8_t version, flags;
	uint32_t hdr_len, type_off, type_len, str_off, str_len;
};

/* The new .BTF: LLVM's types, ours, LLVM's strings, ours. */
static int new_btf(struct hctx *h, const unsigned char *old, size_t size, struct buf *out)
{
	struct btf_hdr hd;
	if (size < sizeof(hd))
		return -1;
	memcpy(&hd, old, sizeof(hd));
	if (hd.magic != 0xeB9F || hd.hdr_len != sizeof(hd) ||
	    (uint64_t)hd.hdr_len + hd.type_off + hd.type_len > size ||
	    (uint64_t)hd.hdr_len + hd.str_off + hd.str_len > size)
		return -1;
	const unsigned char *types = old + hd.hdr_len + hd.type_off;
	uint32_t ntypes = 0;
	for (uint32_t off = 0; off < hd.type_len; ntypes++) {
		uint32_t info;
		if (off + 12 > hd.type_len)
			return -1;
		memcpy(&info, types + off + 4, 4);
		int64_t x = extra(info >> 24 & 0x1f, info & 0xffff);
		if (x < 0)
			return -1;
		off += 12 + (uint32_t)x;
	}
	struct writer w = { .h = h, .str_base = hd.str_len, .next_id = ntypes + 1,
			    .str_ix = { .str = true }, .ptr_ix = { .str = true },
			    .def_ix = { .str = true } };
	uint32_t int_id = type(&w, "int", K_INT, 0, 4);
	put32(&w.types, 1u << 24 | 32); /* signed, 32 bits */
	uint32_t idx_id = type(&w, "__ARRAY_SIZE_TYPE__", K_INT, 0, 4);
	put32(&w.types, 32);
	uint32_t first_var = 0, nvars = 0;
	struct buf vars = { 0 };
	for (const struct hbtf_map *m = h->btf_maps; m; m = m->next) {
		uint32_t st = def_struct(&w, m, int_id, idx_id);
		uint32_t var = type(&w, m->sym, K_VAR, 0, st);
		put32(&w.types, 1); /* global, allocated */
		first_var = first_var ? first_var : var;
		put32(&vars, var);
		put32(&vars, 0);    /* offset and section size: libbpf */
		put32(&vars, (uint32_t)m->n * 8);
		nvars++;
	}
	/* (vlen is 16 bits: sema caps maps far below that) */
	type(&w, ".maps", K_DATASEC, nvars, 0);
	if (!vars.oom)
		put(&w.types, vars.p, vars.len);
	free(vars.p);
	bool oom = vars.oom || w.types.oom || w.strs.oom;
	struct btf_hdr nh = hd;
	nh.type_off = 0;
	nh.type_len = hd.type_len + (uint32_t)w.types.len;
	nh.str_off = nh.type_len;
	nh.str_len = hd.str_len + (uint32_t)w.strs.len;
	if (!oom) {
		put(out, &nh, sizeof(nh));
		put(out, types, hd.type_len);
		put(out, w.types.p, w.types.len);
		put(out, old + hd.hdr_len + hd.str_off, hd.str_len);
		put(out, w.strs.p, w.strs.len);
	}
	free(w.types.p);
	free(w.strs.p);
	return oom || out->oom ? -1 : 0;
}

/* Replace section .BTF of the object by its new bytes; what follows it
 * in the file moves down by a multiple of 8, keeping its alignment. */
int hl_btf_maps_write(struct hctx *h)
{
	struct host_obj *o = h->obj;
	if (!h->btf_maps)
		return 0;
	Elf64_Ehdr eh;
	if (o->size < sizeof(eh))
		return -1;
	memcpy(&eh, o->elf, sizeof(eh));
	if (eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    eh.e_shoff + (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > o->size ||
	    eh.e_shstrndx >= eh.e_shnum)
		return -1;
	Elf64_Shdr *sh = (Elf64_Shdr *)(void *)(o->elf + eh.e_shoff);
	const Elf64_Shdr *names = &sh[eh.e_shstrndx];
	int btf = -1;
	for (int i = 0; i < eh.e_shnum; i++)
		if (names->sh_offset + sh[i].sh_name < o->size &&
		    !strcmp((const char *)o->elf + names->sh_offset + sh[i].sh_name, ".BTF"))
			btf = i;
	if (btf < 0 || sh[btf].sh_offset + sh[btf].sh_size > o->size)
		return -1;
	struct buf nb = { 0 };
	if (new_btf(h, o->elf + sh[btf].sh_offset, sh[btf].sh_size, &nb)) {
		free(nb.p);
		return -1;
	}
	uint64_t at = sh[btf].sh_offset, end = at + sh[btf].sh_size;
	uint64_t shift = (nb.len - sh[btf].sh_size + 7) & ~(uint64_t)7;
	unsigned char *ne = calloc(1, o->size + shift);
	if (!ne) {
		free(nb.p);
		return -1;
	}
	memcpy(ne, o->elf, at);
	memcpy(ne + at, nb.p, nb.len);
	memcpy(ne + end + shift, o->elf + end, o->size - end);
	free(nb.p);
	Elf64_Ehdr *neh = (Elf64_Ehdr *)(void *)ne;
	if (neh->e_shoff >= end)
		neh->e_shoff += shift;
	Elf64_Shdr *nsh = (Elf64_Shdr *)(void *)(ne + neh->e_shoff);
	for (int i = 0; i < neh->e_shnum; i++)
		if (i != btf && nsh[i].sh_type != SHT_NOBITS && nsh[i].sh_offset >= end)
			nsh[i].sh_offset += shift;
	nsh[btf].sh_size = nb.len;
	free(o->elf);
	o->elf = ne;
	o->size += shift;
	return 0;
}
