/* A parser for the C declarations scripts and headers hold: struct,
 * union and enum definitions and typedefs, laid out as x86-64 does.
 * Headers hold much more (prototypes, inline functions, variables):
 * in lenient mode what is not a type definition is skipped, and a
 * definition that cannot be read leaves its type unusable rather than
 * failing the script. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdecl_priv.h"

/* ---- tokens ---- */

static bool is_id0(char ch)
{
	return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static bool is_id(char ch)
{
	return is_id0(ch) || (ch >= '0' && ch <= '9');
}

static void cp_push_text(struct cparser *p, const char *text, size_t len,
			 const struct macro *m)
{
	if (p->nsrc == CP_MAX_NEST)
		return;
	p->src[p->nsrc++] = (struct cp_source){ text, text + len, m };
}

static bool expanding(const struct cparser *p, const struct macro *m)
{
	for (int i = 0; i < p->nsrc; i++)
		if (p->src[i].macro == m)
			return true;
	return false;
}

/* Line markers of cpp's output: "# 12 "file" flags". A file named
 * <stdin> is the script's own text: strict again. */
static void line_marker(struct cparser *p, const char *s, const char *e)
{
	const char *q = s + 1;
	while (q < e && (*q == ' ' || *q == '\t'))
		q++;
	if (q >= e || *q < '0' || *q > '9')
		return;
	long line = strtol(q, NULL, 10);
	const char *name = memchr(q, '"', (size_t)(e - q));
	if (!name)
		return;
	p->in_header = strncmp(name, "\"<stdin>\"", 9) != 0;
	if (!p->in_header)
		p->line = p->base_line + (int)line - 1;
	p->col = 1;
	p->line--; /* the marker's own newline comes next */
}

void cp_next(struct cparser *p)
{
	for (;;) {
		if (p->nsrc == 0) {
			p->tok = (struct ctok){ CT_EOF, "", 0, p->tok.span };
			return;
		}
		struct cp_source *s = &p->src[p->nsrc - 1];
		const char *c = s->pos;
		if (c >= s->end) {
			p->nsrc--;
			continue;
		}
		bool outer = p->nsrc == 1;
		if (*c == '\n') {
			s->pos++;
			if (outer) {
				p->line++;
				p->col = 1;
				p->bol = true;
			}
			continue;
		}
		if (*c == ' ' || *c == '\t' || *c == '\r' || *c == '\f' || *c == '\v' ||
		    (*c == '\\' && c + 1 < s->end && c[1] == '\n')) {
			s->pos++;
			if (outer)
				p->col++;
			continue;
		}
		if (*c == '#' && outer && p->bol) {
			/* a directive or cpp line marker: to the end of the line */
			const char *e = memchr(c, '\n', (size_t)(s->end - c));
			if (!e)
				e = s->end;
			bool is_define;
			struct macro *m = p->in_header ? cdefs_parse_define(p->arena, c,
									    (size_t)(e - c),
									    &is_define)
						       : NULL;
			if (m) { /* a header's: its value may be asked for */
				m->next = p->cdefs->header_macros;
				p->cdefs->header_macros = m;
			}
			line_marker(p, c, e);
			s->pos = e;
			continue;
		}
		if (c[0] == '/' && c + 1 < s->end && (c[1] == '/' || c[1] == '*')) {
			bool line = c[1] == '/';
			const char *q = c + 2;
			while (q < s->end && !(line ? *q == '\n' :
					      (*q == '*' && q + 1 < s->end && q[1] == '/'))) {
				if (*q == '\n' && outer) {
					p->line++;
					p->col = 0;
				}
				q++;
			}
			q = line ? q : (q < s->end ? q + 2 : q);
			if (outer)
				p->col += (int)(q - c);
			s->pos = q;
			continue;
		}
		p->bol = false;
		const char *e = c + 1;
		enum ctok_kind k = CT_PUNCT;
		if (is_id0(*c)) {
			while (e < s->end && is_id(*e))
				e++;
			k = CT_IDENT;
		} else if (*c >= '0' && *c <= '9') {
			while (e < s->end && (is_id(*e) || *e == '.'))
				e++;
			k = CT_NUM;
		} else if (*c == '"' || *c == '\'') {
			while (e < s->end && *e != *c && *e != '\n')
				e += *e == '\\' ? 2 : 1;
			if (e < s->end && *e == *c)
				e++;
			if (e > s->end)
				e = s->end;
			k = CT_STR;
		} else if (*c == '.' && e + 1 < s->end && e[0] == '.' && e[1] == '.') {
			e += 2;
		} else if (e < s->end) {
			static const char two[] = "<<>><=>===!=->";
			for (size_t i = 0; i + 1 < sizeof(two); i += 2)
				if (c[0] == two[i] && e[0] == two[i + 1]) {
					e++;
					break;
				}
		}
		s->pos = e;
		struct span sp = p->use_span; /* a macro's tokens: where it was named */
		if (outer) {
			sp = (struct span){ p->line, p->col, p->line, p->col + (int)(e - c) };
			p->col += (int)(e - c);
		}
		char name[128];
		if (k == CT_IDENT && !p->in_header && e - c < (long)sizeof(name)) {
			snprintf(name, sizeof(name), "%.*s", (int)(e - c), c);
			const struct macro *m = cdefs_macro(p->cdefs, name);
			if (m && !m->function_like && !expanding(p, m)) {
				if (outer)
					p->use_span = sp;
				cp_push_text(p, m->body, strlen(m->body), m);
				continue;
			}
		}
		p->tok = (struct ctok){ k, c, (size_t)(e - c), sp };
		return;
	}
}

bool cp_is(const struct cparser *p, const char *s)
{
	size_t n = strlen(s);
	return p->tok.kind != CT_EOF && p->tok.kind != CT_STR && p->tok.len == n &&
	       !memcmp(p->tok.text, s, n);
}

bool cp_accept(struct cparser *p, const char *s)
{
	if (!cp_is(p, s))
		return false;
	cp_next(p);
	return true;
}

const char *cp_text(struct cparser *p)
{
	return arena_strndup(p->arena, p->tok.text, p->tok.len);
}

/* An error in the script's own text; in a header, the declaration is
 * just not usable (p->bad). */
void cp_error(struct cparser *p, const char *fmt, const char *arg)
{
	if (!p->bad && !p->in_header)
		diag_error(p->diags, p->tok.span, fmt, arg);
	p->bad = true;
}

/* Skip a balanced (...) or [...] group starting at the current token. */
void cp_skip_group(struct cparser *p)
{
	int depth = 0;
	do {
		if (cp_is(p, "(") || cp_is(p, "[") || cp_is(p, "{"))
			depth++;
		else if (cp_is(p, ")") || cp_is(p, "]") || cp_is(p, "}"))
			depth--;
		cp_next(p);
	} while (depth > 0 && p->tok.kind != CT_EOF);
}

/* ---- constant expressions: array sizes, enumerator values ---- */

static int64_t cexpr_cond(struct cparser *p);

static int64_t cexpr_primary(struct cparser *p)
{
	if (cp_accept(p, "(")) {
		int64_t v = cexpr_cond(p);
		if (!cp_accept(p, ")"))
			cp_error(p, "expected ')' in a constant expression%s", "");
		return v;
	}
	if (cp_accept(p, "-"))
		return -cexpr_primary(p);
	if (cp_accept(p, "+"))
		return cexpr_primary(p);
	if (cp_accept(p, "~"))
		return ~cexpr_primary(p);
	if (cp_accept(p, "!"))
		return !cexpr_primary(p);
	if (p->tok.kind == CT_NUM) {
		char *end = NULL;
		const char *t = cp_text(p);
		uint64_t v = strtoull(t, &end, 0);
		while (end && (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L'))
			end++;
		if (!end || *end)
			cp_error(p, "'%s' is not an integer constant", t);
		cp_next(p);
		return (int64_t)v;
	}
	if (p->tok.kind == CT_IDENT) {
		int64_t v = 0;
		const char *name = cp_text(p);
		if (!cdefs_enum_value(p->cdefs, name, &v))
			cp_error(p, "'%s' is not a constant here", name);
		cp_next(p);
		return v;
	}
	cp_error(p, "expected a constant%s", "");
	return 0;
}

static int64_t cexpr_binary(struct cparser *p, int level)
{
	static const char *const ops[][4] = {
		{ "|" }, { "^" }, { "&" }, { "==", "!=" }, { "<", ">", "<=", ">=" },
		{ "<<", ">>" }, { "+", "-" }, { "*", "/", "%" },
	};
	if (level == (int)(sizeof(ops) / sizeof(ops[0])))
		return cexpr_primary(p);
	int64_t v = cexpr_binary(p, level + 1);
	for (;;) {
		const char *op = NULL;
		for (int i = 0; i < 4 && ops[level][i]; i++)
			if (cp_is(p, ops[level][i]))
				op = ops[level][i];
		if (!op || p->bad)
			return v;
		cp_next(p);
		int64_t r = cexpr_binary(p, level + 1);
		switch (op[0] * 256 + op[1]) {
		case '|' * 256: v |= r; break;
		case '^' * 256: v ^= r; break;
		case '&' * 256: v &= r; break;
		case '=' * 256 + '=': v = v == r; break;
		case '!' * 256 + '=': v = v != r; break;
		case '<' * 256: v = v < r; break;
		case '>' * 256: v = v > r; break;
		case '<' * 256 + '=': v = v <= r; break;
		case '>' * 256 + '=': v = v >= r; break;
		case '<' * 256 + '<': v = r >= 0 && r < 64 ? (int64_t)((uint64_t)v << r) : 0; break;
		case '>' * 256 + '>': v = r >= 0 && r < 64 ? v >> r : 0; break;
		case '+' * 256: v = (int64_t)((uint64_t)v + (uint64_t)r); break;
		case '-' * 256: v = (int64_t)((uint64_t)v - (uint64_t)r); break;
		case '*' * 256: v = (int64_t)((uint64_t)v * (uint64_t)r); break;
		default:
			if (r == 0 || (v == INT64_MIN && r == -1)) {
				cp_error(p, "division by zero in a constant expression%s", "");
				return 0;
			}
			v = op[0] == '/' ? v / r : v % r;
		}
	}
}

static int64_t cexpr_cond(struct cparser *p)
{
	int64_t c = cexpr_binary(p, 0);
	if (!cp_accept(p, "?"))
		return c;
	int64_t a = cexpr_cond(p);
	if (!cp_accept(p, ":"))
		cp_error(p, "expected ':' in a constant expression%s", "");
	int64_t b = cexpr_cond(p);
	return c ? a : b;
}

int64_t cp_const_expr(struct cparser *p)
{
	return cexpr_cond(p);
}
