/* Diagnostics are values: passes collect them with source spans and the
 * driver prints them once, errors before warnings, in bpftrace's format:
 *
 *   FILE:L:C1-C2: ERROR: message
 *   the source line
 *       ~~~~
 *   HINT: ...
 */
#ifndef GPUX_DIAG_H
#define GPUX_DIAG_H

#include <stdbool.h>
#include <stdio.h>

#include "arena.h"
#include "source.h"

enum diag_level { DIAG_ERROR, DIAG_WARNING };

struct diag_hint {
	struct diag_hint *next;
	const char *text;
};

struct diag {
	struct diag *next;
	enum diag_level level;
	bool has_span;
	struct span span;
	const char *msg;
	struct diag_hint *hints, **hint_tail;
	struct arena *arena; /* where hints are allocated */
};

struct diags {
	struct arena *arena;
	struct diag *head, **tail;
	int errors, warnings;
	int max_errors; /* stop collecting after this many (0: no limit) */
};

void diags_init(struct diags *d, struct arena *arena);

struct diag *diag_error(struct diags *d, struct span sp, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
struct diag *diag_error_nospan(struct diags *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
struct diag *diag_warning(struct diags *d, struct span sp, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Attach a HINT line; a NULL diagnostic (limit reached) is ignored. */
void diag_hint(struct diag *dg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* True if an error already sits at exactly this span: passes use it to
 * avoid piling a second message on one mistake. */
bool diags_has_error_at(const struct diags *d, struct span sp);

void diags_print(const struct diags *d, const struct source *src, FILE *out);
/* Whether diags_print prints warnings (--no-warnings: not); on at first. */
void diags_show_warnings(bool show);

#endif
