#include "types.h"

#include "session.h"

#include <stdio.h>
#include <string.h>

static const char *const agg_names[] = {
	[AGG_NONE] = "none",   [AGG_COUNT] = "count", [AGG_SUM] = "sum",
	[AGG_AVG] = "avg",     [AGG_MIN] = "min",     [AGG_MAX] = "max",
	[AGG_STATS] = "stats", [AGG_HIST] = "hist",   [AGG_LHIST] = "lhist",
};

const char *agg_name(enum agg_kind k)
{
	return agg_names[k];
}

int agg_merge(enum agg_kind k, bool additive)
{
	switch (k) {
	case AGG_MIN: return GPUX_MERGE_MIN;
	case AGG_MAX: return GPUX_MERGE_MAX;
	case AGG_NONE: return additive ? GPUX_MERGE_ADD : GPUX_MERGE_LAST;
	default: return GPUX_MERGE_ADD;
	}
}

const char *type_str(struct type t, char *buf, size_t len)
{
	switch (t.kind) {
	case TY_NONE:
		snprintf(buf, len, "none");
		break;
	case TY_INT:
		snprintf(buf, len, "%sint%u", t.is_signed ? "" : "u", t.bits);
		break;
	case TY_STR:
		snprintf(buf, len, "string");
		break;
	case TY_USERNAME:
		snprintf(buf, len, "username");
		break;
	case TY_BUF:
		snprintf(buf, len, "buffer");
		break;
	case TY_TIMESTAMP:
		snprintf(buf, len, "timestamp");
		break;
	case TY_INET:
		snprintf(buf, len, "inet");
		break;
	case TY_MACADDR:
		snprintf(buf, len, "macaddr");
		break;
	case TY_ERRNO:
		snprintf(buf, len, "strerror");
		break;
	case TY_CGROUP_PATH:
		snprintf(buf, len, "cgroup_path");
		break;
	case TY_STACK:
		snprintf(buf, len, "%s", t.user ? "ustack" : "kstack");
		break;
	case TY_KSYM:
		snprintf(buf, len, "ksym");
		break;
	case TY_USYM:
		snprintf(buf, len, "usym");
		break;
	case TY_DIM3:
		snprintf(buf, len, "dim3");
		break;
	case TY_PTR:
		snprintf(buf, len, "%s *", t.name ? t.name : "void");
		break;
	case TY_AGG:
		snprintf(buf, len, "%s", agg_name(t.agg));
		break;
	case TY_VOID:
		snprintf(buf, len, "void");
		break;
	case TY_POINTER: {
		char ib[64];
		snprintf(buf, len, "%s *", t.inner ? type_str(*t.inner, ib, sizeof(ib)) : "void");
		break;
	}
	case TY_RECORD:
		snprintf(buf, len, "%s", t.rec ? t.rec->name : "struct");
		break;
	case TY_ARRAY: {
		char ib[64];
		snprintf(buf, len, "%s[%u]", t.inner ? type_str(*t.inner, ib, sizeof(ib)) : "?",
			 t.count);
		break;
	}
	case TY_TUPLE: {
		size_t n = 0;
		char eb[64];
		n += (size_t)snprintf(buf, len, "(");
		for (int i = 0; t.tuple && i < t.tuple->n && n < len; i++)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "," : "",
					      type_str(t.tuple->elem[i], eb, sizeof(eb)));
		if (n < len)
			snprintf(buf + n, len - n, ")");
		break;
	}
	}
	return buf;
}

bool type_is_bytes(struct type t)
{
	return t.kind == TY_STR || t.kind == TY_TUPLE || t.kind == TY_BUF || t.kind == TY_INET ||
	       t.kind == TY_USYM || t.kind == TY_RECORD || t.kind == TY_ARRAY;
}

const struct record_field *record_field(const struct record *r, const char *name)
{
	for (int i = 0; r && i < r->nfields; i++)
		if (r->fields[i].name && !strcmp(r->fields[i].name, name))
			return &r->fields[i];
	return NULL;
}

unsigned type_mem_size(struct type t)
{
	switch (t.kind) {
	case TY_INT:
		return t.bits / 8;
	case TY_RECORD:
		return t.rec ? t.rec->size : 0;
	case TY_ARRAY:
		return t.inner ? t.count * type_mem_size(*t.inner) : 0;
	case TY_STR:
		return t.count;
	default:
		return 8;
	}
}

void type_widen_strs(struct type into, struct type from)
{
	if (into.kind != TY_TUPLE || from.kind != TY_TUPLE || !into.tuple || !from.tuple ||
	    into.tuple == from.tuple || into.tuple->n != from.tuple->n)
		return;
	for (int i = 0; i < into.tuple->n; i++) {
		if (into.tuple->str_size && from.tuple->str_size &&
		    from.tuple->str_size[i] > into.tuple->str_size[i])
			into.tuple->str_size[i] = from.tuple->str_size[i];
		type_widen_strs(into.tuple->elem[i], from.tuple->elem[i]);
	}
}

bool type_prints_as_text(struct type t)
{
	return t.kind == TY_USERNAME || t.kind == TY_TIMESTAMP || t.kind == TY_MACADDR ||
	       t.kind == TY_ERRNO || t.kind == TY_CGROUP_PATH;
}

struct record_field record_bit_field(const char *name, struct type t, unsigned bit,
				     unsigned width)
{
	unsigned sh = bit % 8, sz = 1;
	while (sz < 8 && sh + width > sz * 8)
		sz *= 2;
	return (struct record_field){ .name = name, .type = t, .offset = bit / 8,
				      .bit_shift = (uint8_t)sh, .bit_width = (uint8_t)width,
				      .bit_bytes = (uint8_t)sz };
}

unsigned tuple_size(struct type t)
{
	if (t.kind == TY_STR)
		return TUPLE_STR_SIZE;
	if (t.kind == TY_RECORD || t.kind == TY_ARRAY)
		return (type_mem_size(t) + 7) & ~7u;
	if (t.kind == TY_USYM)
		return USYM_SIZE;
	if (t.kind != TY_TUPLE || !t.tuple)
		return 8;
	return tuple_off(t, t.tuple->n);
}

unsigned tuple_off(struct type t, int i)
{
	unsigned off = 0;
	for (int k = 0; k < i && t.tuple && k < t.tuple->n; k++)
		off += tuple_size(t.tuple->elem[k]);
	return off;
}

bool type_equal(struct type a, struct type b)
{
	if (a.kind != b.kind)
		return false;
	switch (a.kind) {
	case TY_INT:
		return a.bits == b.bits && a.is_signed == b.is_signed;
	case TY_AGG:
		return a.agg == b.agg;
	case TY_STACK:
		return a.user == b.user && a.stack_mode == b.stack_mode && a.limit == b.limit;
	case TY_PTR:
		return (a.name == b.name) ||
		       (a.name && b.name && !strcmp(a.name, b.name));
	case TY_POINTER:
		if (!a.inner || !b.inner)
			return a.inner == b.inner;
		return type_equal(*a.inner, *b.inner);
	case TY_RECORD:
		return a.rec == b.rec;
	case TY_ARRAY:
		return a.count == b.count && a.inner && b.inner && type_equal(*a.inner, *b.inner);
	case TY_TUPLE:
		if (!a.tuple || !b.tuple || a.tuple->n != b.tuple->n)
			return a.tuple == b.tuple;
		for (int i = 0; i < a.tuple->n; i++)
			if (!type_compatible(a.tuple->elem[i], b.tuple->elem[i]))
				return false;
		return true;
	default:
		return true;
	}
}

bool type_compatible(struct type a, struct type b)
{
	if (a.kind == TY_INT && b.kind == TY_INT)
		return true;
	return type_equal(a, b);
}

bool type_from_cast_name(const char *name, struct type *out)
{
	static const struct {
		const char *name;
		uint8_t bits;
		bool is_signed;
	} casts[] = {
		{ "int8", 8, true },    { "int16", 16, true },
		{ "int32", 32, true },  { "int64", 64, true },
		{ "uint8", 8, false },  { "uint16", 16, false },
		{ "uint32", 32, false }, { "uint64", 64, false },
		{ "s8", 8, true },      { "s16", 16, true },
		{ "s32", 32, true },    { "s64", 64, true },
		{ "u8", 8, false },     { "u16", 16, false },
		{ "u32", 32, false },   { "u64", 64, false },
	};
	for (size_t i = 0; i < sizeof(casts) / sizeof(casts[0]); i++)
		if (!strcmp(casts[i].name, name)) {
			*out = TYPE_INT(casts[i].bits, casts[i].is_signed);
			return true;
		}
	return false;
}
