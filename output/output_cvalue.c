/* Values of the script's C types, printed as bpftrace prints them:
 * records as { .a = 1, .b = x } (JSON: { "a": 1, "b": "x" }), arrays as
 * [1,2,3], pointers as decimal addresses. The bytes are in C layout. */
#include <string.h>

#include "output.h"

static void out_int_at(FILE *out, struct type t, const unsigned char *p)
{
	unsigned n = t.kind == TY_INT ? t.bits / 8 : 8;
	uint64_t u = 0;
	memcpy(&u, p, n); /* little-endian: the low bytes */
	if (t.kind == TY_INT && t.is_signed && n < 8 && (u >> (n * 8 - 1)) & 1)
		u |= ~0ULL << (n * 8);
	if (t.kind == TY_INT && t.is_signed)
		fprintf(out, "%lld", (long long)u);
	else
		fprintf(out, "%llu", (unsigned long long)u);
}

/* How a value is written: bpftrace's text, its JSON, or the text of a
 * map key (records without spaces, pointers in hex). */
enum style { TEXT, JSON, KEY };

static void cvalue(FILE *out, enum style st, struct type t, const unsigned char *p)
{
	if (t.kind == TY_RECORD && t.rec) {
		fputs(st == KEY ? "{" : "{ ", out);
		for (int i = 0; i < t.rec->nfields; i++) {
			const struct record_field *f = &t.rec->fields[i];
			const char *name = f->name ? f->name : "";
			if (i)
				fputs(st == KEY ? "," : ", ", out);
			fprintf(out, st == JSON ? "\"%s\": " : st == KEY ? ".%s=" : ".%s = ", name);
			cvalue(out, st, f->type, p + f->offset);
		}
		fputs(st == KEY ? "}" : " }", out);
		return;
	}
	if (t.kind == TY_ARRAY && t.inner) {
		unsigned es = type_mem_size(*t.inner);
		if (t.inner->kind == TY_INT && t.inner->bits == 8 && t.inner->is_signed) {
			/* a char array: a string (unsigned bytes print as numbers) */
			size_t n = strnlen((const char *)p, t.count);
			if (st == JSON)
				out_json_str(out, (const char *)p, n);
			else
				fwrite(p, 1, n, out);
			return;
		}
		fputc('[', out);
		for (unsigned i = 0; i < t.count; i++) {
			if (i)
				fputc(',', out);
			cvalue(out, st, *t.inner, p + (size_t)i * es);
		}
		fputc(']', out);
		return;
	}
	if (t.kind == TY_POINTER && st == KEY) {
		uint64_t u;
		memcpy(&u, p, 8);
		fprintf(out, "0x%llx", (unsigned long long)u);
		return;
	}
	out_int_at(out, t, p);
}

void out_cvalue(FILE *out, bool json, struct type t, const unsigned char *p)
{
	cvalue(out, json ? JSON : TEXT, t, p);
}

void out_ckey(FILE *out, struct type t, const unsigned char *p)
{
	cvalue(out, KEY, t, p);
}
