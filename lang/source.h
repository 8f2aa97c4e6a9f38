/* A program's text and name, and the span type every AST node carries. */
#ifndef GPUX_SOURCE_H
#define GPUX_SOURCE_H

#include <stddef.h>

/* Lines and columns count from 1; last_column is one past the last
 * character, as bison and bpftrace print them ("1:12-16" is 4 chars). */
struct span {
	int first_line, first_column;
	int last_line, last_column;
};

/* Where a file begins in a program made of several given together. */
struct source_file {
	const char *name;
	int first_line; /* its line 1 is this line of the whole text */
};

struct source {
	const char *name; /* "stdin" for -e, else the path given */
	const char *text; /* NUL-terminated copy */
	size_t len;
	/* several files, one after the other in text (NULL: one, named name) */
	const struct source_file *files;
	int nfiles;
};

/* The file holding line `line` of the whole text and the line there. */
const char *source_where(const struct source *src, int line, int *local);

/* Pointer to the start of line `line` (1-based) and its length without the
 * newline; NULL if the line does not exist. */
const char *source_line(const struct source *src, int line, size_t *len);

/* The exact text a single-line span covers, or NULL for a multi-line one. */
const char *source_span_text(const struct source *src, struct span sp,
			     size_t *len);

struct span span_join(struct span a, struct span b);

/* A whole file ("-" is stdin) in a malloc'd, NUL-terminated buffer; NULL
 * with errno set on failure. Programs over 64 MiB are refused (EFBIG). */
char *source_read_file(const char *path, size_t *len);

#endif
