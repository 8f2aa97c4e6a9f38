#include "ptx_scan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_ident0(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       c == '$' || c == '%';
}

static bool is_ident(char c)
{
	return is_ident0(c) || (c >= '0' && c <= '9');
}

/* Past a comment or string starting at i, or i itself if none. */
static size_t skip_lexeme(const char *s, size_t len, size_t i)
{
	if (s[i] == '/' && i + 1 < len && s[i + 1] == '/') {
		while (i < len && s[i] != '\n')
			i++;
		return i;
	}
	if (s[i] == '/' && i + 1 < len && s[i + 1] == '*') {
		i += 2;
		while (i + 1 < len && !(s[i] == '*' && s[i + 1] == '/'))
			i++;
		return i + 1 < len ? i + 2 : len;
	}
	if (s[i] == '"') {
		for (i++; i < len && s[i] != '"' && s[i] != '\n'; i++)
			if (s[i] == '\\' && i + 1 < len)
				i++;
		return i < len ? i + 1 : len;
	}
	return i;
}

static void skip_space(struct ptx_scan *sc)
{
	while (sc->pos < sc->len) {
		char c = sc->s[sc->pos];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
		    c == '\f' || c == '\v') {
			sc->pos++;
			continue;
		}
		size_t j = skip_lexeme(sc->s, sc->len, sc->pos);
		if (j == sc->pos || c == '"')
			return;
		sc->pos = j;
	}
}

static bool word_at(const struct ptx_scan *sc, const char *w)
{
	size_t n = strlen(w);
	if (sc->len - sc->pos < n || memcmp(sc->s + sc->pos, w, n))
		return false;
	return sc->pos + n == sc->len || !is_ident(sc->s[sc->pos + n]);
}

/* Directives that end at the end of their line, without ';'. */
static bool line_directive(const struct ptx_scan *sc)
{
	static const char *const words[] = { ".version", ".target",
					     ".address_size", ".file", ".loc" };
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (word_at(sc, words[i]))
			return true;
	return false;
}

static size_t label_end(const struct ptx_scan *sc)
{
	size_t i = sc->pos;
	if (!is_ident0(sc->s[i]))
		return 0;
	while (i < sc->len && is_ident(sc->s[i]))
		i++;
	while (i < sc->len && (sc->s[i] == ' ' || sc->s[i] == '\t'))
		i++;
	if (i < sc->len && sc->s[i] == ':' &&
	    !(i + 1 < sc->len && sc->s[i + 1] == ':'))
		return i + 1;
	return 0;
}

int ptx_scan_next(struct ptx_scan *sc, struct ptx_tok *t, char *err,
		  size_t errlen)
{
	skip_space(sc);
	t->start = sc->pos;
	if (sc->pos >= sc->len) {
		t->kind = PTX_END;
		t->end = sc->pos;
		return 0;
	}
	char c = sc->s[sc->pos];
	if (c == '{' || c == '}') {
		t->kind = c == '{' ? PTX_OPEN : PTX_CLOSE;
		t->end = ++sc->pos;
		return 0;
	}
	if (line_directive(sc)) {
		while (sc->pos < sc->len && sc->s[sc->pos] != '\n')
			sc->pos++;
		t->kind = PTX_LINE;
		t->end = sc->pos;
		return 0;
	}
	size_t le = label_end(sc);
	if (le) {
		t->kind = PTX_LABEL;
		t->end = sc->pos = le;
		return 0;
	}
	/* A statement. '{' inside one is a vector operand or an initializer,
	 * except after a directive without '=' (function or section head). */
	bool directive = c == '.', assign = false;
	int paren = 0, brace = 0;
	size_t i = sc->pos;
	while (i < sc->len) {
		size_t j = skip_lexeme(sc->s, sc->len, i);
		if (j != i) {
			i = j;
			continue;
		}
		c = sc->s[i];
		if (c == '(')
			paren++;
		else if (c == ')')
			paren--;
		else if (c == '=')
			assign = true;
		else if (c == '{' && paren == 0 && brace == 0 && directive &&
			 !assign) {
			t->kind = PTX_HEAD;
			t->end = sc->pos = i;
			return 0;
		} else if (c == '{')
			brace++;
		else if (c == '}' && --brace < 0)
			break;
		else if (c == ';' && paren == 0 && brace == 0) {
			t->kind = PTX_STMT;
			t->end = sc->pos = i + 1;
			return 0;
		}
		i++;
	}
	snprintf(err, errlen, "line %u: unterminated statement",
		 ptx_line_of(sc->s, sc->pos));
	return -1;
}

int ptx_scan_skip_block(struct ptx_scan *sc, char *err, size_t errlen)
{
	skip_space(sc);
	size_t i = sc->pos;
	int depth = 0;
	while (i < sc->len) {
		size_t j = skip_lexeme(sc->s, sc->len, i);
		if (j != i) {
			i = j;
			continue;
		}
		if (sc->s[i] == '{')
			depth++;
		else if (sc->s[i] == '}' && --depth <= 0) {
			sc->pos = i + 1;
			return 0;
		}
		i++;
	}
	snprintf(err, errlen, "line %u: unterminated block",
		 ptx_line_of(sc->s, sc->pos));
	return -1;
}

size_t ptx_clean(const char *s, size_t n, char *out)
{
	size_t o = 0, i = 0;
	bool space = false;
	while (i < n) {
		size_t j = skip_lexeme(s, n, i);
		if (j != i && s[i] != '"') {
			space = true;
			i = j;
			continue;
		}
		char c = s[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			space = true;
			i++;
			continue;
		}
		if (space && o)
			out[o++] = ' ';
		space = false;
		size_t end = j != i ? j : i + 1; /* strings stay whole */
		while (i < end)
			out[o++] = s[i++];
	}
	out[o] = 0;
	return o;
}

const char *ptx_clean_tok(const char *s, const struct ptx_tok *t, char **buf, size_t *cap)
{
	size_t n = t->end - t->start;
	if (n + 1 > *cap) {
		char *p = realloc(*buf, n + 1);
		if (!p)
			return NULL;
		*buf = p;
		*cap = n + 1;
	}
	ptx_clean(s + t->start, n, *buf);
	return *buf;
}

bool ptx_has_word(const char *s, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = strstr(s, w); p; p = strstr(p + 1, w))
		if ((p == s || p[-1] == ' ') && (p[n] == ' ' || p[n] == '(' || !p[n]))
			return true;
	return false;
}

unsigned ptx_line_of(const char *s, size_t off)
{
	unsigned line = 1;
	for (size_t i = 0; i < off; i++)
		line += s[i] == '\n';
	return line;
}

bool ptx_glob(const char *pat, const char *str)
{
	/* The classic one-star backtrack: a later '*' supersedes an
	 * earlier one, so the work stays quadratic at worst. */
	const char *star = NULL, *resume = NULL;
	while (*str) {
		if (*pat == '*') {
			star = ++pat;
			resume = str;
		} else if (*pat == '?' || *pat == *str) {
			pat++;
			str++;
		} else if (star) {
			pat = star;
			str = ++resume;
		} else {
			return false;
		}
	}
	while (*pat == '*')
		pat++;
	return !*pat;
}

void ptx_buf_put(struct ptx_buf *b, const char *s, size_t n)
{
	if (b->full || b->oom)
		return;
	if (b->len + n + 1 > b->max) {
		b->full = true;
		return;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

void ptx_buf_printf(struct ptx_buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n < sizeof(tmp)) {
		ptx_buf_put(b, tmp, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		b->oom = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	ptx_buf_put(b, big, (size_t)n);
	free(big);
}

char *ptx_func_name(const char *h, bool *is_kernel)
{
	*is_kernel = ptx_has_word(h, ".entry");
	const char *p = strstr(h, *is_kernel ? ".entry" : ".func");
	p += *is_kernel ? 6 : 5;
	while (*p == ' ')
		p++;
	if (*p == '(') {
		int depth = 0;
		for (; *p; p++) {
			depth += (*p == '(') - (*p == ')');
			if (!depth)
				break;
		}
		if (*p)
			p++;
		while (*p == ' ')
			p++;
	}
	size_t n = strcspn(p, " (;");
	if (!n)
		return NULL;
	return strndup(p, n);
}
