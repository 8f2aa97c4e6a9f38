/* Declarations of the C definitions: specifiers, declarators, struct,
 * union and enum bodies and typedefs, and their x86-64 layout. */
#include <string.h>

#include "cdecl_priv.h"

static bool spec_type(struct cparser *p, struct type *out);

static unsigned type_align(struct type t)
{
	switch (t.kind) {
	case TY_INT:
		return t.bits / 8;
	case TY_RECORD:
		return t.rec && t.rec->align ? t.rec->align : 1;
	case TY_ARRAY:
		return t.inner ? type_align(*t.inner) : 1;
	default:
		return 8;
	}
}

static bool is_qualifier(const struct cparser *p)
{
	static const char *const q[] = {
		"const", "volatile", "restrict", "__restrict", "__restrict__",
		"__const", "__volatile__", "static", "extern", "inline", "__inline",
		"__inline__", "__extension__", "register", "auto", "_Atomic",
		"_Noreturn", "__signed__", "_Thread_local", "__thread",
	};
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
		if (cp_is(p, q[i]))
			return true;
	return false;
}

/* __attribute__((...)), __asm__(...), alignas(...): skipped; packed is
 * noted. */
static bool skip_attribute(struct cparser *p, bool *packed)
{
	if (!(cp_is(p, "__attribute__") || cp_is(p, "__attribute") || cp_is(p, "__asm__") ||
	      cp_is(p, "__asm") || cp_is(p, "asm") || cp_is(p, "_Alignas") ||
	      cp_is(p, "__declspec")))
		return false;
	cp_next(p);
	if (!cp_is(p, "("))
		return true;
	int depth = 0;
	do {
		if (cp_is(p, "("))
			depth++;
		else if (cp_is(p, ")"))
			depth--;
		else if (packed && (cp_is(p, "packed") || cp_is(p, "__packed__")))
			*packed = true;
		cp_next(p);
	} while (depth > 0 && p->tok.kind != CT_EOF);
	return true;
}

static void skip_noise(struct cparser *p, bool *packed)
{
	while (is_qualifier(p) || skip_attribute(p, packed))
		if (is_qualifier(p))
			cp_next(p);
}

struct decl {
	const char *name;
	struct type type;
	struct span span;
	bool bitfield;
	int64_t bits; /* a bit-field's width */
};

/* '*'s, a name (or none), '[N]'s; function pointers "(*f)(...)" are
 * pointers. */
static struct decl declarator(struct cparser *p, struct type base)
{
	struct decl d = { .type = base, .span = p->tok.span };
	while (cp_accept(p, "*")) {
		struct type *in = arena_alloc(p->arena, sizeof(*in));
		*in = d.type;
		d.type = (struct type){ .kind = TY_POINTER, .inner = in };
		skip_noise(p, NULL);
	}
	if (cp_is(p, "(")) {
		/* (*name)(params) or (*name)[N]: a pointer either way */
		cp_next(p);
		while (cp_accept(p, "*") || is_qualifier(p))
			;
		if (p->tok.kind == CT_IDENT) {
			d.name = cp_text(p);
			d.span = p->tok.span;
			cp_next(p);
		}
		while (cp_is(p, "[") || cp_is(p, "("))
			cp_skip_group(p);
		if (!cp_accept(p, ")"))
			cp_error(p, "expected ')' in a declarator%s", "");
		if (cp_is(p, "(") || cp_is(p, "["))
			cp_skip_group(p);
		static const struct type void_t = { .kind = TY_VOID };
		d.type = (struct type){ .kind = TY_POINTER, .inner = &void_t };
		return d;
	}
	if (p->tok.kind == CT_IDENT && !is_qualifier(p)) {
		d.name = cp_text(p);
		d.span = p->tok.span;
		cp_next(p);
	}
	/* int a[2][3]: an array of 2 arrays of 3 */
	unsigned dims[8];
	int nd = 0;
	while (cp_accept(p, "[")) {
		int64_t n = cp_is(p, "]") ? 0 : cp_const_expr(p);
		if (n < 0 || n > (1 << 24))
			cp_error(p, "array size %s out of range", "");
		if (nd < 8)
			dims[nd++] = (unsigned)(n < 0 ? 0 : n);
		if (!cp_accept(p, "]"))
			cp_error(p, "expected ']'%s", "");
	}
	for (int i = nd - 1; i >= 0; i--) {
		struct type *in = arena_alloc(p->arena, sizeof(*in));
		*in = d.type;
		d.type = (struct type){ .kind = TY_ARRAY, .inner = in, .count = dims[i] };
	}
	skip_noise(p, NULL);
	if (cp_accept(p, ":")) {
		d.bits = cp_const_expr(p);
		d.bitfield = true;
	}
	skip_noise(p, NULL);
	return d;
}

static void push_field(struct cparser *p, struct record *r, struct record_field f, int *cap)
{
	if (r->nfields == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		struct record_field *nf = arena_alloc(p->arena, sizeof(*nf) * (size_t)*cap);
		if (r->nfields)
			memcpy(nf, r->fields, sizeof(*nf) * (size_t)r->nfields);
		r->fields = nf;
	}
	r->fields[r->nfields++] = f;
}

static void add_field(struct cparser *p, struct record *r, const char *name,
		      struct type t, int *cap)
{
	unsigned align = type_align(t);
	unsigned off = r->is_union ? 0 : (r->size + align - 1) / align * align;
	if (!name && t.kind == TY_RECORD && t.rec) {
		/* an anonymous member: its fields are the parent's */
		for (int i = 0; i < t.rec->nfields; i++) {
			struct record_field f = t.rec->fields[i];
			f.offset += off;
			push_field(p, r, f, cap);
		}
	} else {
		push_field(p, r, (struct record_field){ .name = name, .type = t, .offset = off }, cap);
	}
	unsigned end = off + type_mem_size(t);
	if (end > r->size)
		r->size = end;
	if (align > r->align)
		r->align = align;
}

/* A bit-field of width bits at *bitpos (the record's next free bit), as
 * the x86-64 System V ABI lays it out: in the current unit of its type
 * when it fits there, else from the next; width 0 only ends the unit. */
static void add_bitfield(struct cparser *p, struct record *r, const struct decl *d,
			 unsigned *bitpos, int *cap)
{
	struct type t = d->type;
	unsigned ubits = 8 * type_mem_size(t);
	if (t.kind != TY_INT || d->bits < 0 || d->bits > ubits) {
		cp_error(p, "bit-field '%s' needs an integer type as wide as its width",
			 d->name ? d->name : "");
		return;
	}
	unsigned w = (unsigned)d->bits, pos = r->is_union ? 0 : *bitpos;
	if (w == 0 || pos / ubits != (pos + w - 1) / ubits)
		pos = (pos + ubits - 1) / ubits * ubits;
	if (w && d->name)
		push_field(p, r, record_bit_field(d->name, t, pos, w), cap);
	pos += w;
	if (!r->is_union)
		*bitpos = pos;
	unsigned end = (pos + 7) / 8, align = type_align(t);
	if (end > r->size)
		r->size = end;
	if (d->name && align > r->align)
		r->align = align;
}

/* { fields } of a struct or union, laid out. */
static void record_body(struct cparser *p, struct record *r)
{
	if (r->defined) {
		cp_error(p, "'%s' is defined twice", r->name);
		cp_skip_group(p);
		return;
	}
	cp_next(p); /* '{' */
	bool was_bad = p->bad;
	p->bad = false;
	bool packed = false;
	int cap = 0;
	unsigned bitpos = 0; /* after a bit-field: the next free bit */
	r->size = 0;
	r->align = 1;
	while (!cp_is(p, "}") && p->tok.kind != CT_EOF && !p->bad) {
		struct type base;
		if (!spec_type(p, &base))
			break;
		do {
			struct decl d = declarator(p, base);
			if (d.bitfield)
				add_bitfield(p, r, &d, &bitpos, &cap);
			else if (d.type.kind == TY_RECORD &&
				 (d.type.rec == r || !cdefs_complete(p->cdefs->prog, d.type.rec)))
				cp_error(p, "field of incomplete type '%s'", d.type.rec ? d.type.rec->name : "");
			else
				add_field(p, r, d.name, d.type, &cap);
			if (!d.bitfield)
				bitpos = 8 * r->size;
		} while (!p->bad && cp_accept(p, ","));
		/* the last field's ';' may be left out, as C compilers allow */
		if (!p->bad && !cp_accept(p, ";") && !cp_is(p, "}"))
			cp_error(p, "expected ';' after a field%s", "");
	}
	bool ok = !p->bad;
	if (!ok)
		while (!cp_is(p, "}") && p->tok.kind != CT_EOF)
			cp_is(p, "{") ? cp_skip_group(p) : cp_next(p);
	cp_accept(p, "}");
	skip_noise(p, &packed);
	if (packed) {
		/* packed: fields back to back */
		unsigned off = 0;
		for (int i = 0; i < r->nfields && !r->is_union; i++) {
			r->fields[i].offset = off;
			off += type_mem_size(r->fields[i].type);
		}
		r->align = 1;
		if (!r->is_union)
			r->size = off;
	}
	r->size = (r->size + r->align - 1) / r->align * r->align;
	r->defined = ok;
	p->bad = was_bad || !ok;
}

static void enum_body(struct cparser *p)
{
	cp_next(p); /* '{' */
	int64_t next = 0;
	while (p->tok.kind == CT_IDENT && !p->bad) {
		const char *name = cp_text(p);
		cp_next(p);
		skip_noise(p, NULL);
		if (cp_accept(p, "="))
			next = cp_const_expr(p);
		struct ctype_name *n = cdefs_name_add(p->cdefs, p->arena, CN_ENUM_CONST, name);
		n->value = next++;
		if (!cp_accept(p, ","))
			break;
	}
	if (!cp_accept(p, "}"))
		cp_error(p, "expected '}' to end the enum%s", "");
}

/* Integer keywords: how many of each, then the type they make. */
static bool int_keywords(struct cparser *p, struct type *out)
{
	int is_unsigned = 0, is_signed = 0, nlong = 0, nshort = 0, nchar = 0, nint = 0,
	    nbool = 0, nfloat = 0, any = 0;
	for (;; any++) {
		if (cp_is(p, "unsigned"))
			is_unsigned++;
		else if (cp_is(p, "signed") || cp_is(p, "__signed__"))
			is_signed++;
		else if (cp_is(p, "long"))
			nlong++;
		else if (cp_is(p, "short"))
			nshort++;
		else if (cp_is(p, "char"))
			nchar++;
		else if (cp_is(p, "int"))
			nint++;
		else if (cp_is(p, "_Bool"))
			nbool++;
		else if (cp_is(p, "float") || cp_is(p, "double") || cp_is(p, "__int128"))
			nfloat++;
		else if (is_qualifier(p))
			;
		else
			break;
		cp_next(p);
	}
	if (!is_unsigned && !is_signed && !nlong && !nshort && !nchar && !nint && !nbool &&
	    !nfloat)
		return false;
	if (nfloat) {
		/* no floating point in the language: the bytes, as an array */
		static const struct type byte = { .kind = TY_INT, .bits = 8 };
		unsigned n = nlong ? 16 : 8;
		*out = (struct type){ .kind = TY_ARRAY, .inner = &byte, .count = n };
		return true;
	}
	unsigned bits = nbool || nchar ? 8 : nshort ? 16 : nlong ? 64 : 32;
	*out = TYPE_INT(bits, !is_unsigned && !nbool);
	return true;
}

/* Declaration specifiers: the base type of what follows. */
static bool spec_type(struct cparser *p, struct type *out)
{
	skip_noise(p, NULL);
	if (int_keywords(p, out)) {
		skip_noise(p, NULL);
		return true;
	}
	if (cp_is(p, "void")) {
		cp_next(p);
		*out = TYPE_VOID;
		skip_noise(p, NULL);
		return true;
	}
	if (cp_is(p, "struct") || cp_is(p, "union")) {
		bool is_union = cp_is(p, "union");
		cp_next(p);
		skip_noise(p, NULL);
		const char *tag = NULL;
		if (p->tok.kind == CT_IDENT) {
			tag = cp_text(p);
			cp_next(p);
		}
		struct record *r;
		if (tag) {
			r = cdefs_record_ref(p->cdefs->prog, is_union, tag);
		} else {
			r = arena_zalloc(p->arena, sizeof(*r));
			r->name = is_union ? "union (anonymous)" : "struct (anonymous)";
			r->is_union = is_union;
		}
		if (cp_is(p, "{"))
			record_body(p, r);
		else if (!tag)
			cp_error(p, "expected a name or '{' after %s", is_union ? "union" : "struct");
		*out = (struct type){ .kind = TY_RECORD, .rec = r };
		skip_noise(p, NULL);
		return true;
	}
	if (cp_is(p, "enum")) {
		cp_next(p);
		skip_noise(p, NULL);
		if (p->tok.kind == CT_IDENT)
			cp_next(p);
		if (cp_is(p, "{"))
			enum_body(p);
		*out = TYPE_INT(32, false);
		skip_noise(p, NULL);
		return true;
	}
	if (p->tok.kind == CT_IDENT) {
		const char *name = cp_text(p);
		if (cdefs_typedef(p->cdefs, name, out)) {
			cp_next(p);
			skip_noise(p, NULL);
			return true;
		}
		cp_error(p, "unknown type name '%s'", name);
		return false;
	}
	cp_error(p, "expected a type%s", "");
	return false;
}

/* One top-level declaration, through its ';' (or the end of a part). */
static void declaration(struct cparser *p)
{
	p->bad = false;
	if (cp_accept(p, ";"))
		return;
	bool is_typedef = false;
	skip_noise(p, NULL);
	if (cp_accept(p, "typedef"))
		is_typedef = true;
	bool defines = cp_is(p, "struct") || cp_is(p, "union") || cp_is(p, "enum");
	if (!is_typedef && !defines && !p->in_header) {
		cp_error(p, "expected a struct, union or enum definition%s", "");
	}
	struct type base;
	if (!p->bad && spec_type(p, &base)) {
		while (!p->bad && !cp_is(p, ";") && p->tok.kind != CT_EOF) {
			struct decl d = declarator(p, base);
			if (cp_is(p, "(")) {
				/* a function's prototype or body: nothing to keep */
				p->bad = true;
				break;
			}
			if (is_typedef && d.name && !p->bad) {
				struct ctype_name *n = cdefs_name_add(p->cdefs, p->arena, CN_TYPEDEF, d.name);
				n->type = d.type;
			}
			if (cp_accept(p, "="))
				while (!cp_is(p, ",") && !cp_is(p, ";") && p->tok.kind != CT_EOF)
					cp_is(p, "{") || cp_is(p, "(") ? cp_skip_group(p) : cp_next(p);
			if (!cp_accept(p, ","))
				break;
		}
	}
	/* recover at the next ';' outside braces, or after a function body */
	while (!cp_is(p, ";") && p->tok.kind != CT_EOF) {
		if (cp_is(p, "{")) {
			cp_skip_group(p);
			if (p->bad)
				return;
			continue;
		}
		if (cp_is(p, "(") || cp_is(p, "["))
			cp_skip_group(p);
		else
			cp_next(p);
		if (!p->bad && !p->in_header)
			cp_error(p, "expected ';'%s", "");
	}
	cp_accept(p, ";");
}

void cdecl_parse_all(struct cparser *p)
{
	cp_next(p);
	while (p->tok.kind != CT_EOF) {
		bool strict = !p->in_header;
		declaration(p);
		if (p->bad && strict)
			return; /* one located error for the script's own text */
	}
}
