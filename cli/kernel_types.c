/* struct program's kernel_types: the records a script names without
 * defining them ("struct sock"), laid out from the running kernel's BTF
 * as bpftrace takes them. A record is filled when first used by value or
 * through a field; the records it points to are only named until then,
 * so `(struct task_struct *)x` does not lay out the whole kernel.
 *
 * What the language has no type for is left out of a record, which
 * then has no field of that name (members of a kind BTF adds later).
 * Floats and integers over 64 bits are their bytes; a bit-field is
 * read from the smallest integer around it. Which address space a
 * pointer reads is not the record's to say: sema gives it the space of
 * what it was read through (lang/sema_memory.c). */
#include "kernel_types.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdefs.h"
#include "host_loader.h"
#include "kernel_btf.h"

struct kstate {
	struct kernel_btf *btf;
	bool tried;      /* opened, or failed to: not again */
	char why[256];   /* why not, where it failed */
	struct record **anon; /* anonymous records by BTF id */
	unsigned n;
};

static struct kstate *state_of(struct program *prog)
{
	struct kstate *s = prog->kernel_state;
	if (!s) {
		s = calloc(1, sizeof(*s));
		prog->kernel_state = s;
	}
	if (s && !s->tried) {
		s->tried = true;
		int rc = kernel_btf_open(&s->btf, s->why, sizeof(s->why));
		if (rc == -ENOSYS) {
			/* no libbpf.so.1 here: the one the host module carries
			 * (loaded anyway by a program with kernel probes) */
			const struct host_api *api = host_module_open(NULL);
			if (api && api->btf_lib) {
				kernel_btf_provide(api->btf_lib());
				rc = kernel_btf_open(&s->btf, s->why, sizeof(s->why));
			}
		}
		if (!rc) {
			s->n = kernel_btf_count(s->btf);
			s->anon = calloc(s->n, sizeof(*s->anon));
			if (!s->anon) {
				kernel_btf_close(s->btf);
				s->btf = NULL;
				snprintf(s->why, sizeof(s->why), "out of memory");
			}
		}
	}
	return s && s->btf ? s : NULL;
}

static const struct btf_type *peel(struct kstate *s, unsigned *id)
{
	for (int i = 0; i < 32; i++) {
		const struct btf_type *t = kernel_btf_type(s->btf, *id);
		if (!t)
			return NULL;
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			*id = t->type;
			continue;
		default:
			return t;
		}
	}
	return NULL;
}

static const struct type *boxed(struct program *prog, struct type t)
{
	struct type *b = arena_alloc(&prog->arena, sizeof(*b));
	*b = t;
	return b;
}

static struct type bytes(struct program *prog, unsigned n)
{
	return (struct type){ .kind = TY_ARRAY, .inner = boxed(prog, TYPE_INT(8, false)),
			      .count = n };
}

static bool fill(struct program *prog, struct kstate *s, struct record *r, unsigned id,
		 int depth);

/* The record of BTF type id (a struct or union), filled: a named one is
 * the program's record of that name (the script's, where it defines
 * one), an anonymous one the state's for id. */
static const struct record *record_of(struct program *prog, struct kstate *s, unsigned id,
				      const struct btf_type *t, int depth)
{
	bool is_union = BTF_INFO_KIND(t->info) == BTF_KIND_UNION;
	const char *name = kernel_btf_name(s->btf, t->name_off);
	struct record *r;
	if (*name) {
		r = cdefs_record_ref(prog, is_union, name);
	} else {
		if (!s->anon[id]) {
			s->anon[id] = arena_zalloc(&prog->arena, sizeof(*r));
			s->anon[id]->name = is_union ? "union (anonymous)" : "struct (anonymous)";
			s->anon[id]->is_union = is_union;
		}
		r = s->anon[id];
	}
	if (!r->defined && !fill(prog, s, r, id, depth + 1))
		return NULL;
	return r;
}

/* The language's type for BTF type id; TY_NONE where it has none. */
static struct type conv(struct program *prog, struct kstate *s, unsigned id, int depth)
{
	const struct btf_type *t = peel(s, &id);
	if (!t || depth > 64)
		return id == 0 ? TYPE_VOID : TYPE_NONE;
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT: {
		unsigned enc = *(const unsigned *)(t + 1);
		if (t->size > 8 || !t->size)
			return bytes(prog, t->size);
		/* char is signed on x86-64, and its arrays are strings */
		bool is_char = t->size == 1 && ((BTF_INT_ENCODING(enc) & BTF_INT_CHAR) ||
						 !strcmp(kernel_btf_name(s->btf, t->name_off), "char"));
		return TYPE_INT(t->size * 8, is_char || (BTF_INT_ENCODING(enc) & BTF_INT_SIGNED));
	}
	case BTF_KIND_ENUM:
	case 19 /* BTF_KIND_ENUM64 */:
		if (t->size > 8 || !t->size)
			return bytes(prog, t->size);
		return TYPE_INT(t->size * 8, BTF_INFO_KFLAG(t->info) != 0);
	case BTF_KIND_FLOAT:
		return bytes(prog, t->size);
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = (const void *)(t + 1);
		struct type el = conv(prog, s, a->type, depth + 1);
		if (el.kind == TY_NONE || el.kind == TY_VOID)
			return TYPE_NONE;
		return (struct type){ .kind = TY_ARRAY, .inner = boxed(prog, el), .count = a->nelems };
	}
	case BTF_KIND_PTR: {
		unsigned to = t->type;
		const struct btf_type *pt = peel(s, &to);
		struct type in = TYPE_VOID;
		if (pt && (BTF_INFO_KIND(pt->info) == BTF_KIND_STRUCT ||
			   BTF_INFO_KIND(pt->info) == BTF_KIND_UNION ||
			   BTF_INFO_KIND(pt->info) == BTF_KIND_FWD) &&
		    *kernel_btf_name(s->btf, pt->name_off)) {
			/* only named: filled when read through */
			bool u = BTF_INFO_KIND(pt->info) == BTF_KIND_UNION ||
				 (BTF_INFO_KIND(pt->info) == BTF_KIND_FWD && BTF_INFO_KFLAG(pt->info));
			in = (struct type){ .kind = TY_RECORD,
					    .rec = cdefs_record_ref(prog, u, kernel_btf_name(s->btf,
											pt->name_off)) };
		} else if (pt && BTF_INFO_KIND(pt->info) != BTF_KIND_FUNC_PROTO) {
			in = conv(prog, s, to, depth + 1);
			if (in.kind == TY_NONE)
				in = TYPE_VOID;
		}
		return (struct type){ .kind = TY_POINTER, .inner = boxed(prog, in) };
	}
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION: {
		const struct record *r = record_of(prog, s, id, t, depth);
		return r ? (struct type){ .kind = TY_RECORD, .rec = r } : TYPE_NONE;
	}
	default:
		return TYPE_NONE;
	}
}

static unsigned align_of(struct type t)
{
	switch (t.kind) {
	case TY_INT:
		return t.bits / 8;
	case TY_RECORD:
		return t.rec->align ? t.rec->align : 1;
	case TY_ARRAY:
		return t.inner ? align_of(*t.inner) : 1;
	default:
		return 8;
	}
}

struct fields {
	struct record_field *v;
	int n, cap;
};

static void push(struct program *prog, struct fields *f, struct record_field rf)
{
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 16;
		struct record_field *nv = arena_alloc(&prog->arena, sizeof(*nv) * (size_t)f->cap);
		if (f->n)
			memcpy(nv, f->v, sizeof(*nv) * (size_t)f->n);
		f->v = nv;
	}
	f->v[f->n++] = rf;
}

/* r as BTF's struct or union id lays it out: its members at their
 * offsets, an anonymous member's fields as r's own. */
static bool fill(struct program *prog, struct kstate *s, struct record *r, unsigned id,
		 int depth)
{
	const struct btf_type *t = kernel_btf_type(s->btf, id);
	if (!t || depth > 64)
		return false;
	const struct btf_member *m = (const void *)(t + 1);
	bool kflag = BTF_INFO_KFLAG(t->info);
	struct fields f = { 0 };
	unsigned align = 1;
	bool packed = false;
	for (unsigned i = 0; i < BTF_INFO_VLEN(t->info); i++, m++) {
		unsigned boff = kflag ? BTF_MEMBER_BIT_OFFSET(m->offset) : m->offset;
		unsigned bsize = kflag ? BTF_MEMBER_BITFIELD_SIZE(m->offset) : 0;
		unsigned mid = m->type;
		const struct btf_type *mt = peel(s, &mid);
		if (!kflag && mt && BTF_INFO_KIND(mt->info) == BTF_KIND_INT) {
			unsigned enc = *(const unsigned *)(mt + 1);
			if (BTF_INT_OFFSET(enc) || BTF_INT_BITS(enc) != mt->size * 8) {
				bsize = BTF_INT_BITS(enc);
				boff += BTF_INT_OFFSET(enc);
			}
		}
		const char *name = kernel_btf_name(s->btf, m->name_off);
		if (bsize || boff % 8) {
			/* a bit-field, of its declared type: read from the
			 * fewest bytes (1, 2, 4 or 8) that hold it */
			struct record_field bf =
				record_bit_field(name, conv(prog, s, m->type, depth), boff, bsize);
			if (*name && bf.type.kind == TY_INT && bsize &&
			    bf.bit_shift + bsize <= 8u * bf.bit_bytes)
				push(prog, &f, bf);
			continue;
		}
		struct type ft = conv(prog, s, m->type, depth);
		if (ft.kind == TY_NONE || ft.kind == TY_VOID)
			continue;
		unsigned off = boff / 8, a = align_of(ft);
		if (a > align)
			align = a;
		if (off % a)
			packed = true;
		if (!*name && ft.kind == TY_RECORD) {
			for (int j = 0; j < ft.rec->nfields; j++) {
				struct record_field nf = ft.rec->fields[j];
				nf.offset += off;
				push(prog, &f, nf);
			}
		} else if (*name) {
			push(prog, &f, (struct record_field){ .name = name, .type = ft, .offset = off });
		}
	}
	if (r->defined) /* filled meanwhile, through a record it holds */
		return true;
	r->is_union = BTF_INFO_KIND(t->info) == BTF_KIND_UNION;
	r->size = t->size;
	r->align = packed || (t->size % align) ? 1 : align;
	r->fields = f.v;
	r->nfields = f.n;
	r->defined = true;
	return true;
}

static bool available(struct program *prog)
{
	(void)prog;
	return kernel_btf_present();
}

static bool complete(struct program *prog, struct record *r)
{
	struct kstate *s = state_of(prog);
	if (!s || !r->name)
		return false;
	bool is_union = !strncmp(r->name, "union ", 6);
	const char *tag = is_union ? r->name + 6 : !strncmp(r->name, "struct ", 7) ? r->name + 7 : NULL;
	unsigned id = tag ? kernel_btf_find(s->btf, tag, is_union ? BTF_KIND_UNION : BTF_KIND_STRUCT)
			  : 0;
	return id && fill(prog, s, r, id, 0);
}

static bool enum_value(struct program *prog, const char *name, int64_t *out)
{
	struct kstate *s = state_of(prog);
	for (unsigned id = 1; s && id < s->n; id++) {
		const struct btf_type *t = kernel_btf_type(s->btf, id);
		unsigned kind = t ? BTF_INFO_KIND(t->info) : 0;
		if (kind == BTF_KIND_ENUM) {
			const struct btf_enum *e = (const void *)(t + 1);
			for (unsigned i = 0; i < BTF_INFO_VLEN(t->info); i++, e++)
				if (!strcmp(kernel_btf_name(s->btf, e->name_off), name)) {
					/* an unsigned enum's values are u32s */
					*out = BTF_INFO_KFLAG(t->info) ? (int64_t)e->val
								       : (int64_t)(uint32_t)e->val;
					return true;
				}
		} else if (kind == 19 /* BTF_KIND_ENUM64 */) {
			const struct { unsigned name_off, lo32, hi32; } *e = (const void *)(t + 1);
			for (unsigned i = 0; i < BTF_INFO_VLEN(t->info); i++, e++)
				if (!strcmp(kernel_btf_name(s->btf, e->name_off), name)) {
					*out = (int64_t)(((uint64_t)e->hi32 << 32) | e->lo32);
					return true;
				}
		}
	}
	return false;
}

static const char *why(struct program *prog)
{
	const struct kstate *s = prog->kernel_state;
	return s && !s->btf && s->why[0] ? s->why : NULL;
}

static void release(struct program *prog)
{
	struct kstate *s = prog->kernel_state;
	if (!s)
		return;
	kernel_btf_close(s->btf);
	free(s->anon);
	free(s);
	prog->kernel_state = NULL;
}

const struct kernel_types kernel_types_btf = {
	.available = available,
	.complete = complete,
	.enum_value = enum_value,
	.why = why,
	.release = release,
};
