/* Lookups the host lowering makes once per use in a program: a map by
 * its map_info or name, a $variable by name, a variable's string size.
 * A list walked per use costs uses x entries, which a program of 25,000
 * maps turns into seconds: an open-addressing table in the compile's
 * arena instead, keyed by pointer or by string. */
#include <stdint.h>
#include <string.h>

#include "host_priv.h"

static uint64_t hash_of(const void *key, bool str)
{
	uint64_t x = 1469598103934665603ull; /* FNV-1a */
	if (str) {
		for (const unsigned char *s = key; *s; s++)
			x = (x ^ *s) * 1099511628211ull;
		return x;
	}
	x = (uint64_t)(uintptr_t)key;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull; /* murmur3's finalizer */
	return x ^ (x >> 33);
}

static bool same(const void *a, const void *b, bool str)
{
	return str ? !strcmp(a, b) : a == b;
}

static struct hindex_ent *slot_of(struct hindex_ent *e, unsigned cap, const void *key,
				  bool str)
{
	unsigned i = (unsigned)hash_of(key, str) & (cap - 1);
	while (e[i].key && !same(e[i].key, key, str))
		i = (i + 1) & (cap - 1);
	return &e[i];
}

void *hl_index_get(const struct hindex *ix, const void *key)
{
	if (!ix->n)
		return NULL;
	struct hindex_ent *e = slot_of(ix->e, ix->cap, key, ix->str);
	return e->key ? e->val : NULL;
}

void hl_index_put(struct hindex *ix, struct arena *a, const void *key, void *val)
{
	if (2 * (ix->n + 1) > ix->cap) {
		/* at most half full; the old array stays in the arena */
		unsigned cap = ix->cap ? 2 * ix->cap : 64;
		struct hindex_ent *e = arena_zalloc(a, sizeof(*e) * cap);
		for (unsigned i = 0; i < ix->cap; i++)
			if (ix->e[i].key)
				*slot_of(e, cap, ix->e[i].key, ix->str) = ix->e[i];
		ix->e = e;
		ix->cap = cap;
	}
	struct hindex_ent *e = slot_of(ix->e, ix->cap, key, ix->str);
	if (!e->key)
		ix->n++;
	e->key = key;
	e->val = val;
}
