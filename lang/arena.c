#include "arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK 16384

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	max_align_t data[];
};

void arena_init(struct arena *a)
{
	a->head = NULL;
	a->total = 0;
}

void arena_free(struct arena *a)
{
	struct arena_block *b = a->head;
	while (b) {
		struct arena_block *next = b->next;
		free(b);
		b = next;
	}
	a->head = NULL;
	a->total = 0;
}

void *arena_alloc(struct arena *a, size_t size)
{
	size_t align = sizeof(max_align_t);
	size = (size + align - 1) & ~(align - 1);
	struct arena_block *b = a->head;
	if (!b || b->cap - b->used < size) {
		size_t cap = size > ARENA_BLOCK ? size : ARENA_BLOCK;
		b = malloc(sizeof(*b) + cap);
		if (!b) {
			fputs("gpux: out of memory\n", stderr);
			abort();
		}
		b->used = 0;
		b->cap = cap;
		b->next = a->head;
		a->head = b;
	}
	void *p = (char *)b->data + b->used;
	b->used += size;
	a->total += size;
	return p;
}

void *arena_zalloc(struct arena *a, size_t size)
{
	void *p = arena_alloc(a, size);
	memset(p, 0, size);
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *arena_printf(struct arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	char *p = arena_alloc(a, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}
