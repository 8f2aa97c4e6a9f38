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

void out_cvalue(FILE *out, bool json, struct type t, const unsigned char *p)
{
	if (t.kind == TY_RECORD && t.rec) {
		fputs("{ ", out);
		for (int i = 0; i < t.rec->nfields; i++) {
			const struct record_field *f = &t.rec->fields[i];
			if (i)
				fputs(", ", out);
			if (json)
				fprintf(out, "\"%s\": ", f->name ? f->name : "");
			else
				fprintf(out, ".%s = ", f->name ? f->name : "");
			out_cvalue(out, json, f->type, p + f->offset);
		}
		fputs(" }", out);
		return;
	}
	if (t.kind == TY_ARRAY && t.inner) {
		unsigned es = type_mem_size(*t.inner);
		if (t.inner->kind == TY_INT && t.inner->bits == 8) {
			/* a char array: a string */
			size_t n = strnlen((const char *)p, t.count);
			if (json)
				out_json_str(out, (const char *)p, n);
			else
				fwrite(p, 1, n, out);
			return;
		}
		fputc('[', out);
		for (unsigned i = 0; i < t.count; i++) {
			if (i)
				fputc(',', out);
			out_cvalue(out, json, *t.inner, p + (size_t)i * es);
		}
		fputc(']', out);
		return;
	}
	out_int_at(out, t, p);
}

void out_ckey(FILE *out, struct type t, const unsigned char *p)
{
	if (t.kind == TY_RECORD && t.rec) {
		fputc('{', out);
		for (int i = 0; i < t.rec->nfields; i++) {
			const struct record_field *f = &t.rec->fields[i];
			fprintf(out, "%s.%s=", i ? "," : "", f->name ? f->name : "");
			out_ckey(out, f->type, p + f->offset);
		}
		fputc('}', out);
		return;
	}
	if (t.kind == TY_POINTER) {
		uint64_t u;
		memcpy(&u, p, 8);
		fprintf(out, "0x%llx", (unsigned long long)u);
		return;
	}
	if (t.kind == TY_ARRAY && t.inner && !(t.inner->kind == TY_INT && t.inner->bits == 8)) {
		unsigned es = type_mem_size(*t.inner);
		fputc('[', out);
		for (unsigned i = 0; i < t.count; i++) {
			if (i)
				fputc(',', out);
			out_ckey(out, *t.inner, p + (size_t)i * es);
		}
		fputc(']', out);
		return;
	}
	out_cvalue(out, false, t, p);
}
