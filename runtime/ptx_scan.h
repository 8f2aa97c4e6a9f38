/* A statement-level scanner of PTX text (not a parser): it splits a
 * module into directives, statements, labels and braces, with offsets
 * into the text so the rewriter can copy everything it does not touch
 * verbatim. Linear in the input; never reads past len. */
#ifndef GPUX_PTX_SCAN_H
#define GPUX_PTX_SCAN_H

#include <stdbool.h>
#include <stddef.h>

enum ptx_tok_kind {
	PTX_END,   /* end of input */
	PTX_STMT,  /* up to and including ';' */
	PTX_HEAD,  /* a directive followed by a block: up to (not incl.) '{' */
	PTX_LABEL, /* "name:" */
	PTX_LINE,  /* .version/.target/.address_size/.file/.loc: to end of line */
	PTX_OPEN,  /* '{' */
	PTX_CLOSE, /* '}' */
};

struct ptx_tok {
	enum ptx_tok_kind kind;
	size_t start, end; /* [start, end) in the text */
};

struct ptx_scan {
	const char *s;
	size_t len, pos;
};

/* The next token; 0, or -1 with err set (unterminated statement). */
int ptx_scan_next(struct ptx_scan *sc, struct ptx_tok *t, char *err,
		  size_t errlen);

/* Past the block whose '{' is next (nested braces, comments, strings):
 * for blocks that are not PTX statements (.section debug data). */
int ptx_scan_skip_block(struct ptx_scan *sc, char *err, size_t errlen);

/* s[0..n) without comments, whitespace runs as one space, trimmed, into
 * out (n + 1 bytes). Returns the length. */
size_t ptx_clean(const char *s, size_t n, char *out);

/* Token t of s, ptx_clean()ed into *buf (grown as needed, *cap bytes):
 * *buf, or NULL when out of memory. */
const char *ptx_clean_tok(const char *s, const struct ptx_tok *t, char **buf, size_t *cap);

/* The function a cleaned head declares (".visible .func (.param .b32 r)
 * name(" or ".entry name("), malloc'd, *is_kernel for an .entry; NULL
 * when there is none. */
char *ptx_func_name(const char *h, bool *is_kernel);

/* Whether cleaned text s has the word w (a directive such as ".entry"),
 * followed by a space, '(' or its end. */
bool ptx_has_word(const char *s, const char *w);

/* 1-based line of offset off (for messages). */
unsigned ptx_line_of(const char *s, size_t off);

/* Glob with '*' and '?' in O(len(pat) * len(str)). */
bool ptx_glob(const char *pat, const char *str);

/* A growable text buffer that stops growing at max (sets full). */
struct ptx_buf {
	char *p;
	size_t len, cap, max;
	bool full, oom;
};

void ptx_buf_put(struct ptx_buf *b, const char *s, size_t n);
void ptx_buf_printf(struct ptx_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
