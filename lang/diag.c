#include "diag.h"

#include <stdarg.h>
#include <string.h>

void diags_init(struct diags *d, struct arena *arena)
{
	memset(d, 0, sizeof(*d));
	d->arena = arena;
	d->tail = &d->head;
	d->max_errors = 50;
}

static struct diag *diag_add(struct diags *d, enum diag_level level,
			     const struct span *sp, const char *fmt, va_list ap)
{
	if (level == DIAG_ERROR && d->max_errors && d->errors >= d->max_errors)
		return NULL;
	char buf[1024];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	struct diag *dg = arena_zalloc(d->arena, sizeof(*dg));
	dg->level = level;
	if (sp) {
		dg->has_span = true;
		dg->span = *sp;
	}
	dg->msg = arena_strdup(d->arena, buf);
	dg->hint_tail = &dg->hints;
	dg->arena = d->arena;
	*d->tail = dg;
	d->tail = &dg->next;
	if (level == DIAG_ERROR)
		d->errors++;
	else
		d->warnings++;
	return dg;
}

struct diag *diag_error(struct diags *d, struct span sp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct diag *dg = diag_add(d, DIAG_ERROR, &sp, fmt, ap);
	va_end(ap);
	return dg;
}

struct diag *diag_error_nospan(struct diags *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct diag *dg = diag_add(d, DIAG_ERROR, NULL, fmt, ap);
	va_end(ap);
	return dg;
}

struct diag *diag_warning(struct diags *d, struct span sp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct diag *dg = diag_add(d, DIAG_WARNING, &sp, fmt, ap);
	va_end(ap);
	return dg;
}

void diag_hint(struct diag *dg, const char *fmt, ...)
{
	if (!dg)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	struct diag_hint *h = arena_zalloc(dg->arena, sizeof(*h));
	h->text = arena_strdup(dg->arena, buf);
	*dg->hint_tail = h;
	dg->hint_tail = &h->next;
}

bool diags_has_error_at(const struct diags *d, struct span sp)
{
	for (const struct diag *dg = d->head; dg; dg = dg->next)
		if (dg->level == DIAG_ERROR && dg->has_span &&
		    !memcmp(&dg->span, &sp, sizeof(sp)))
			return true;
	return false;
}

#define ECHO_MAX 400 /* bytes of a source line echoed whole */

static void print_one(const struct diag *dg, const struct source *src,
		      FILE *out)
{
	const char *level = dg->level == DIAG_ERROR ? "ERROR" : "WARNING";
	const struct span *sp = &dg->span;
	int first, last;
	const char *name = dg->has_span ? source_where(src, sp->first_line, &first) : src->name;
	if (!dg->has_span) {
		fprintf(out, "%s: %s: %s\n", src->name, level, dg->msg);
	} else if (sp->first_line != sp->last_line) {
		/* bpftrace prints a line range and no excerpt for these. */
		source_where(src, sp->last_line, &last);
		fprintf(out, "%s:%d-%d: %s: %s\n", name, first, last, level, dg->msg);
	} else {
		fprintf(out, "%s:%d:%d-%d: %s: %s\n", name, first, sp->first_column,
			sp->last_column, level, dg->msg);
		size_t len = 0;
		const char *line = source_line(src, sp->first_line, &len);
		if (line) {
			/* a line too long to read (a generated program's) is
			 * shown around the span, "..." where it is cut */
			size_t from = 0, to = len, a = (size_t)sp->first_column - 1;
			size_t b = (size_t)sp->last_column - 1;
			if (len > ECHO_MAX) {
				from = a > ECHO_MAX / 2 ? a - ECHO_MAX / 2 : 0;
				to = b < len - ECHO_MAX / 2 ? b + ECHO_MAX / 2 : len;
				if (to - from > 2 * ECHO_MAX)
					to = from + 2 * ECHO_MAX;
			}
			fprintf(out, "%s%.*s%s\n", from ? "..." : "", (int)(to - from), line + from,
				to < len ? "..." : "");
			if (from)
				fputs("   ", out);
			size_t col;
			for (col = from + 1; col < (size_t)sp->first_column; col++)
				fputc(line[col - 1] == '\t' && col <= len ? '\t' : ' ', out);
			/* a span may end past the line (end of file) */
			for (; col < (size_t)sp->last_column && (to == len || col <= to); col++)
				fputc('~', out);
			fputc('\n', out);
		}
	}
	for (const struct diag_hint *h = dg->hints; h; h = h->next)
		fprintf(out, "HINT: %s\n", h->text);
}

static bool show_warnings = true;

void diags_show_warnings(bool show)
{
	show_warnings = show;
}

void diags_print(const struct diags *d, const struct source *src, FILE *out)
{
	for (int pass = 0; pass < (show_warnings ? 2 : 1); pass++) {
		enum diag_level want = pass == 0 ? DIAG_ERROR : DIAG_WARNING;
		for (const struct diag *dg = d->head; dg; dg = dg->next)
			if (dg->level == want)
				print_one(dg, src, out);
	}
}
