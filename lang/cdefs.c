/* The script's C definitions: where the lexer's pieces are kept, the
 * names they define, and the build that reads them (through the system
 * C preprocessor when headers are included: cdefs_cpp.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "cdecl_priv.h"

struct cdefs *cdefs_of(struct program *prog)
{
	if (!prog->cdefs) {
		prog->cdefs = arena_zalloc(&prog->arena, sizeof(*prog->cdefs));
		prog->cdefs->prog = prog;
	}
	return prog->cdefs;
}

struct record *cdefs_record_ref(struct program *prog, bool is_union, const char *tag)
{
	struct cdefs *c = cdefs_of(prog);
	const char *key = arena_printf(&prog->arena, "%s %s", is_union ? "union" : "struct", tag);
	struct ctype_name *n = cdefs_name_find(c, CN_RECORD, key);
	if (!n) {
		n = cdefs_name_add(c, &prog->arena, CN_RECORD, key);
		n->rec = arena_zalloc(&prog->arena, sizeof(*n->rec));
		n->rec->name = key;
		n->rec->is_union = is_union;
	}
	return n->rec;
}

bool cdefs_complete(struct program *prog, const struct record *r)
{
	if (!r || r->defined)
		return r != NULL;
	const struct kernel_types *k = prog->kernel_types;
	/* the record is the arena's, named in prog's definitions: the
	 * kernel's layout fills it in place, so every use sees it */
	return k && k->complete && k->complete(prog, (struct record *)r) && r->defined;
}

const struct macro *cdefs_macro(const struct cdefs *c, const char *name)
{
	for (const struct macro *m = c ? c->macros : NULL; m; m = m->next)
		if (!strcmp(m->name, name))
			return m;
	return NULL;
}

struct ctype_name *cdefs_name_add(struct cdefs *c, struct arena *a,
				  enum cname_kind kind, const char *name)
{
	struct ctype_name *n = arena_zalloc(a, sizeof(*n));
	n->kind = kind;
	n->name = name;
	n->next = c->names;
	c->names = n;
	return n;
}

struct ctype_name *cdefs_name_find(const struct cdefs *c, enum cname_kind kind,
				   const char *name)
{
	for (struct ctype_name *n = c ? c->names : NULL; n; n = n->next)
		if (n->kind == kind && !strcmp(n->name, name))
			return n;
	return NULL;
}

const struct record *cdefs_record(const struct cdefs *c, const char *kw, const char *tag)
{
	char key[256];
	snprintf(key, sizeof(key), "%s %s", kw, tag);
	struct ctype_name *n = cdefs_name_find(c, CN_RECORD, key);
	return n ? n->rec : NULL;
}

/* Integer type names every script may use without a header, as
 * bpftrace offers them from the kernel's types. */
static const struct {
	const char *name;
	uint8_t bits;
	bool is_signed;
} builtin_typedefs[] = {
	{ "int8_t", 8, true },    { "int16_t", 16, true },   { "int32_t", 32, true },
	{ "int64_t", 64, true },  { "uint8_t", 8, false },   { "uint16_t", 16, false },
	{ "uint32_t", 32, false }, { "uint64_t", 64, false }, { "u8", 8, false },
	{ "u16", 16, false },     { "u32", 32, false },      { "u64", 64, false },
	{ "s8", 8, true },        { "s16", 16, true },       { "s32", 32, true },
	{ "s64", 64, true },      { "__u8", 8, false },      { "__u16", 16, false },
	{ "__u32", 32, false },   { "__u64", 64, false },    { "__s8", 8, true },
	{ "__s16", 16, true },    { "__s32", 32, true },     { "__s64", 64, true },
	{ "size_t", 64, false },  { "ssize_t", 64, true },   { "uintptr_t", 64, false },
	{ "intptr_t", 64, true }, { "pid_t", 32, true },     { "uid_t", 32, false },
	{ "gid_t", 32, false },   { "off_t", 64, true },     { "bool", 8, false },
	{ "loff_t", 64, true },   { "dev_t", 32, false },    { "ino_t", 64, false },
};

bool cdefs_typedef(const struct cdefs *c, const char *name, struct type *out)
{
	struct ctype_name *n = cdefs_name_find(c, CN_TYPEDEF, name);
	if (n) {
		*out = n->type;
		return true;
	}
	for (size_t i = 0; i < sizeof(builtin_typedefs) / sizeof(builtin_typedefs[0]); i++)
		if (!strcmp(builtin_typedefs[i].name, name)) {
			*out = TYPE_INT(builtin_typedefs[i].bits, builtin_typedefs[i].is_signed);
			return true;
		}
	return false;
}

bool cdefs_enum_value(const struct cdefs *c, const char *name, int64_t *out)
{
	struct ctype_name *n = cdefs_name_find(c, CN_ENUM_CONST, name);
	if (n) {
		*out = n->value;
		return true;
	}
	const struct macro *m = NULL;
	for (m = c ? c->header_macros : NULL; m; m = m->next)
		if (!strcmp(m->name, name))
			break;
	if (!m || m->function_like || c->eval_depth >= 16)
		return false;
	/* the body, read as a constant expression to its end */
	struct arena a;
	arena_init(&a);
	struct cparser p = { .arena = &a, .cdefs = (struct cdefs *)c, .in_header = true };
	p.src[p.nsrc++] = (struct cp_source){ m->body, m->body + strlen(m->body), NULL };
	((struct cdefs *)c)->eval_depth++;
	cp_next(&p);
	int64_t v = p.tok.kind == CT_EOF ? 0 : cp_const_expr(&p);
	((struct cdefs *)c)->eval_depth--;
	bool ok = !p.bad && p.tok.kind == CT_EOF && m->body[0];
	arena_free(&a);
	if (ok)
		*out = v;
	return ok;
}

struct macro *cdefs_parse_define(struct arena *a, const char *line, size_t len,
				 bool *is_define)
{
	const char *q = memchr(line, '#', len), *e = line + len;
	*is_define = false;
	if (!q)
		return NULL;
	for (q++; q < e && (*q == ' ' || *q == '\t'); q++)
		;
	if (e - q < 7 || strncmp(q, "define", 6) || (q[6] != ' ' && q[6] != '\t'))
		return NULL;
	*is_define = true;
	for (q += 7; q < e && (*q == ' ' || *q == '\t'); q++)
		;
	const char *n = q;
	while (q < e && (*q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
			 (*q >= '0' && *q <= '9')))
		q++;
	if (q == n)
		return NULL;
	struct macro *m = arena_zalloc(a, sizeof(*m));
	m->name = arena_strndup(a, n, (size_t)(q - n));
	m->function_like = q < e && *q == '(';
	/* the body, continuation lines joined */
	char *body = arena_alloc(a, (size_t)(e - q) + 1), *w = body;
	for (const char *r = q; r < e; r++) {
		if (r[0] == '\\' && r + 1 < e && r[1] == '\n') {
			*w++ = ' ';
			r++;
			continue;
		}
		*w++ = *r;
	}
	*w = '\0';
	m->body = body;
	return m;
}

/* ---- reading the parts ---- */

static void parse_text(struct program *prog, struct diags *d, const char *text,
		       size_t len, struct span at, bool header)
{
	struct cparser p = {
		.arena = &prog->arena, .diags = d, .cdefs = prog->cdefs,
		.line = at.first_line, .col = at.first_column, .base_line = at.first_line,
		.bol = true, .in_header = header,
	};
	p.src[p.nsrc++] = (struct cp_source){ text, text + len, NULL };
	cdecl_parse_all(&p);
}

void cdefs_add(struct program *prog, struct diags *d, const char *text)
{
	cdefs_of(prog);
	parse_text(prog, d, text, strlen(text), (struct span){ 1, 1, 1, 1 }, true);
}

int cdefs_build(struct program *prog, struct diags *d)
{
	/* --include FILE: the preprocessor reads it before the script, which
	 * may have no C of its own */
	if (prog->ninclude_files && !prog->text_only)
		cdefs_of(prog)->includes = true;
	struct cdefs *c = prog->cdefs;
	if (!c || (!c->parts && !c->includes))
		return 0;
	if (c->includes && prog->text_only) {
		diag_error(d, c->parts->span, "#include and conditionals are not read here");
		return -1;
	}
	if (c->includes) {
		size_t len = 0;
		char *text = cdefs_run_cpp(prog, d, &len);
		if (!text)
			return -1;
		char *copy = arena_strndup(&prog->arena, text, len);
		free(text);
		parse_text(prog, d, copy, len, (struct span){ 1, 1, 1, 1 }, true);
		return 0;
	}
	for (struct cpart *cp = c->parts; cp; cp = cp->next)
		if (!cp->directive)
			parse_text(prog, d, cp->text, cp->len, cp->span, false);
	return 0;
}
