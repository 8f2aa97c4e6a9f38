#include "source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *source_line(const struct source *src, int line, size_t *len)
{
	const char *p = src->text, *end = src->text + src->len;
	for (int l = 1; l < line; l++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return NULL;
		p = nl + 1;
	}
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	*len = (size_t)((nl ? nl : end) - p);
	return p;
}

const char *source_span_text(const struct source *src, struct span sp,
			     size_t *len)
{
	size_t llen;
	if (sp.first_line != sp.last_line)
		return NULL;
	const char *line = source_line(src, sp.first_line, &llen);
	if (!line || sp.first_column < 1 || sp.last_column < sp.first_column)
		return NULL;
	size_t b = (size_t)sp.first_column - 1, e = (size_t)sp.last_column - 1;
	if (e > llen)
		e = llen;
	if (b > e)
		b = e;
	*len = e - b;
	return line + b;
}

struct span span_join(struct span a, struct span b)
{
	struct span r = a;
	r.last_line = b.last_line;
	r.last_column = b.last_column;
	return r;
}

char *source_read_file(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (n + 1 >= cap) { /* room for the terminating NUL */
			char *nb = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;
			if (!nb) {
				free(buf);
				buf = NULL;
				errno = EFBIG;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
	}
	if (buf && ferror(f)) {
		free(buf);
		buf = NULL;
	}
	if (f != stdin)
		fclose(f);
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

const char *source_where(const struct source *src, int line, int *local)
{
	*local = line;
	const struct source_file *f = NULL;
	for (int i = 0; i < src->nfiles; i++)
		if (src->files[i].first_line <= line)
			f = &src->files[i];
	if (!f)
		return src->name;
	*local = line - f->first_line + 1;
	return f->name;
}
