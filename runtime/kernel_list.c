/* Scans PTX for .entry and .func definitions. Not a parser: it tracks
 * comments, strings, braces and parentheses, which is all it takes to
 * find names at top level. */
#include "kernel_list.h"

#include <stdlib.h>
#include <string.h>

#include "fatbin.h"

void gpux_names_free(struct gpux_names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->name[i]);
	free(l->name);
	free(l->kind);
	memset(l, 0, sizeof(*l));
}

int gpux_names_has(const struct gpux_names *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->name[i], s))
			return 1;
	return 0;
}

int gpux_names_add(struct gpux_names *l, const char *s, size_t len, int kind)
{
	char *copy;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		char **nn = realloc(l->name, cap * sizeof(*nn));
		int *nk;

		if (!nn)
			return GPUX_FB_ENOMEM;
		l->name = nn;
		nk = realloc(l->kind, cap * sizeof(*nk));
		if (!nk)
			return GPUX_FB_ENOMEM;
		l->kind = nk;
		l->cap = cap;
	}
	copy = malloc(len + 1);
	if (!copy)
		return GPUX_FB_ENOMEM;
	memcpy(copy, s, len);
	copy[len] = 0;
	if (gpux_names_has(l, copy)) {
		free(copy);
		return GPUX_FB_OK;
	}
	l->name[l->n] = copy;
	l->kind[l->n++] = kind;
	return GPUX_FB_OK;
}

static int ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       c == '$' || c == '%';
}

static int ident_char(char c)
{
	return ident_start(c) || (c >= '0' && c <= '9');
}

/* Skips blanks and comments; returns the next significant position. */
static const char *skip_space(const char *p)
{
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (p[0] == '/' && p[1] == '/') {
			while (*p && *p != '\n')
				p++;
		} else if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			p = e ? e + 2 : p + strlen(p);
		} else {
			return p;
		}
	}
}

/* Skips a balanced (...) group, e.g. a .func's return parameters. */
static const char *skip_parens(const char *p)
{
	int depth = 0;

	do {
		p = skip_space(p);
		if (!*p)
			return p;
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		p++;
	} while (depth > 0);
	return p;
}

/* After the name: a definition reaches '{' before ';'. */
static int is_definition(const char *p)
{
	int depth = 0;

	for (p = skip_space(p); *p; p = skip_space(p + 1)) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		else if (depth <= 0 && *p == '{')
			return 1;
		else if (depth <= 0 && *p == ';')
			return 0;
	}
	return 0;
}

static int directive(const char *p, const char *word)
{
	size_t n = strlen(word);

	return !strncmp(p, word, n) && !ident_char(p[n]);
}

int gpux_ptx_names(const char *ptx, struct gpux_names *out)
{
	const char *p = ptx;
	int depth = 0, kind, rc;

	while (*(p = skip_space(p))) {
		if (*p == '"') {
			for (p++; *p && *p != '"' && *p != '\n'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (*p == '"')
				p++;
			continue;
		}
		if (*p == '{' || *p == '}') {
			depth += *p == '{' ? 1 : -1;
			p++;
			continue;
		}
		if (depth == 0 && *p == '.' &&
		    (directive(p, ".entry") || directive(p, ".func"))) {
			const char *name;

			kind = p[1] == 'e' ? GPUX_SYM_ENTRY : GPUX_SYM_FUNC;
			p = skip_space(p + (kind == GPUX_SYM_ENTRY ? 6 : 5));
			if (*p == '(')
				p = skip_space(skip_parens(p));
			name = p;
			while (ident_char(*p))
				p++;
			if (p > name && ident_start(*name) && is_definition(p)) {
				rc = gpux_names_add(out, name, (size_t)(p - name),
						    kind);
				if (rc)
					return rc;
			}
			continue;
		}
		if (ident_char(*p) || *p == '.') {
			while (ident_char(*p) || *p == '.')
				p++;
		} else {
			p++;
		}
	}
	return GPUX_FB_OK;
}
