/* Bump allocator: the AST, its strings and the diagnostics of one
 * compilation live in one arena and are released together. */
#ifndef GPUX_ARENA_H
#define GPUX_ARENA_H

#include <stddef.h>

struct arena_block;

struct arena {
	struct arena_block *head;
	size_t total; /* bytes handed out, for limits and stats */
};

void arena_init(struct arena *a);
void arena_free(struct arena *a);
/* Never returns NULL: out of memory is reported and aborts, as a compiler
 * cannot continue without its tree. */
void *arena_alloc(struct arena *a, size_t size);
void *arena_zalloc(struct arena *a, size_t size);
char *arena_strndup(struct arena *a, const char *s, size_t n);
char *arena_strdup(struct arena *a, const char *s);
char *arena_printf(struct arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
