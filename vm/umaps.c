/* Hash and array maps of the userspace VM (umaps.h). Hash maps chain
 * element slots off a power-of-two bucket table; slots come from a free
 * list, so deletes need no tombstones and values never move. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umaps.h"

static bool is_hash(const struct umap *m)
{
	return m->type == BPF_M_HASH || m->type == BPF_M_PERCPU_HASH;
}

static bool is_array(const struct umap *m)
{
	return m->type == BPF_M_ARRAY || m->type == BPF_M_PERCPU_ARRAY;
}

static int fail(char *err, size_t errlen, const char *name, const char *what)
{
	snprintf(err, errlen, "map %s: %s", name, what);
	return -1;
}

static int ring_init(struct umap *m, char *err, size_t errlen)
{
	if (m->max_entries < 64 || m->max_entries > UMAP_MAX_BYTES || m->max_entries % 8)
		return fail(err, errlen, m->name, "ring buffer size must be 64 bytes..256 MiB, a multiple of 8");
	m->values = calloc(1, m->max_entries);
	return m->values ? 0 : fail(err, errlen, m->name, "out of memory");
}

int umap_init(struct umap *m, const char *name, uint32_t type, uint32_t key_size,
	      uint32_t value_size, uint32_t max_entries, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	m->name = strdup(name);
	if (!m->name)
		return fail(err, errlen, name, "out of memory");
	m->type = type;
	m->key_size = key_size;
	m->value_size = value_size;
	m->max_entries = max_entries;
	if (type == BPF_M_RINGBUF)
		return ring_init(m, err, errlen);
	if (type == BPF_M_STACK_TRACE)
		return 0;
	if (!is_hash(m) && !is_array(m))
		return fail(err, errlen, name, "map type not supported by the VM");
	if (!key_size || key_size > UMAP_MAX_KEY || !value_size || value_size > UMAP_MAX_VALUE ||
	    !max_entries || max_entries > UMAP_MAX_ENTRIES)
		return fail(err, errlen, name, "key, value or max_entries out of the VM's limits");
	if (is_array(m) && key_size != 4)
		return fail(err, errlen, name, "array maps need 4-byte keys");
	m->stride = (value_size + 7) & ~7u;
	uint64_t bytes = (uint64_t)m->stride * max_entries +
			 (is_hash(m) ? (uint64_t)(key_size + 9) * max_entries * 2 : 0);
	if (bytes > UMAP_MAX_BYTES)
		return fail(err, errlen, name, "needs more than 256 MiB");
	m->values = calloc(max_entries, m->stride);
	if (!m->values)
		return fail(err, errlen, name, "out of memory");
	if (is_array(m)) {
		m->count = max_entries;
		return 0;
	}
	m->nbuckets = 1;
	while (m->nbuckets < max_entries)
		m->nbuckets <<= 1;
	m->keys = calloc(max_entries, key_size);
	m->heads = malloc(sizeof(*m->heads) * m->nbuckets);
	m->next = malloc(sizeof(*m->next) * max_entries);
	m->used = calloc(max_entries, 1);
	if (!m->keys || !m->heads || !m->next || !m->used)
		return fail(err, errlen, name, "out of memory");
	umap_clear(m);
	return 0;
}

void umap_destroy(struct umap *m)
{
	free(m->name);
	if (!m->dstate) { /* a device table is its binder's */
		free(m->values);
		free(m->keys);
	}
	free(m->heads);
	free(m->next);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

/* Keys are small packed structs, mostly 8-byte words (64-byte strings
 * among them): hashed a word at a time, a cuda: event's key in a few
 * multiplies rather than one per byte. */
static uint32_t hash_key(const void *key, uint32_t n)
{
	const unsigned char *p = key;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
	for (; n >= 8; n -= 8, p += 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (n) {
		w = 0;
		memcpy(&w, p, n);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
	}
	h ^= h >> 29;
	h *= 0xc4ceb9fe1a85ec53ull;
	return (uint32_t)(h ^ (h >> 32));
}

/* The slot holding key, with the link that points at it. */
static int32_t find(struct umap *m, const void *key, int32_t **link)
{
	int32_t *l = &m->heads[hash_key(key, m->key_size) & (m->nbuckets - 1)];
	if (m->key_size == 8) { /* @m and single integer keys: no memcmp call */
		uint64_t k, o;
		memcpy(&k, key, 8);
		while (*l >= 0 && (memcpy(&o, m->keys + (size_t)*l * 8, 8), o != k))
			l = &m->next[*l];
	} else {
		while (*l >= 0 && memcmp(m->keys + (size_t)*l * m->key_size, key, m->key_size))
			l = &m->next[*l];
	}
	if (link)
		*link = l;
	return *l;
}

static unsigned char *value_at(struct umap *m, uint32_t slot)
{
	return m->values + (size_t)slot * m->stride;
}

void *umap_lookup(struct umap *m, const void *key)
{
	if (m->dstate)
		return umap_dev_lookup(m, key);
	if (is_array(m)) {
		uint32_t i;
		memcpy(&i, key, 4);
		return i < m->max_entries ? value_at(m, i) : NULL;
	}
	if (!is_hash(m))
		return NULL;
	int32_t s = find(m, key, NULL);
	return s >= 0 ? value_at(m, (uint32_t)s) : NULL;
}

int umap_update(struct umap *m, const void *key, const void *value, uint64_t flags)
{
	if (flags > UMAP_EXIST)
		return -EINVAL;
	if (m->dstate)
		return umap_dev_update(m, key, value, flags);
	if (is_array(m)) {
		uint32_t i;
		memcpy(&i, key, 4);
		if (i >= m->max_entries)
			return -E2BIG;
		if (flags == UMAP_NOEXIST)
			return -EEXIST; /* every element of an array exists */
		memmove(value_at(m, i), value, m->value_size);
		return 0;
	}
	if (!is_hash(m))
		return -EINVAL;
	int32_t *link;
	int32_t s = find(m, key, &link);
	if (s >= 0) {
		if (flags == UMAP_NOEXIST)
			return -EEXIST;
		memmove(value_at(m, (uint32_t)s), value, m->value_size);
		return 0;
	}
	if (flags == UMAP_EXIST)
		return -ENOENT;
	if (m->free_head < 0) {
		m->drops++;
		return -E2BIG;
	}
	s = m->free_head;
	m->free_head = m->next[s];
	m->next[s] = -1;
	*link = s;
	m->used[s] = 1;
	memcpy(m->keys + (size_t)s * m->key_size, key, m->key_size);
	memmove(value_at(m, (uint32_t)s), value, m->value_size);
	m->count++;
	return 0;
}

int umap_delete(struct umap *m, const void *key)
{
	if (m->dstate)
		return umap_dev_delete(m, key);
	if (!is_hash(m))
		return -EINVAL;
	int32_t *link;
	int32_t s = find(m, key, &link);
	if (s < 0)
		return -ENOENT;
	*link = m->next[s];
	m->used[s] = 0;
	m->next[s] = m->free_head;
	m->free_head = s;
	m->count--;
	return 0;
}

void umap_clear(struct umap *m)
{
	if (m->dstate) {
		umap_dev_clear(m);
		return;
	}
	if (is_array(m)) {
		memset(m->values, 0, (size_t)m->stride * m->max_entries);
		return;
	}
	if (!is_hash(m))
		return;
	for (uint32_t b = 0; b < m->nbuckets; b++)
		m->heads[b] = -1;
	/* the free list in slot order, so a cleared map refills in order */
	for (uint32_t s = 0; s < m->max_entries; s++)
		m->next[s] = s + 1 < m->max_entries ? (int32_t)s + 1 : -1;
	m->free_head = 0;
	memset(m->used, 0, m->max_entries);
	m->count = 0;
}

void umap_zero(struct umap *m)
{
	if (m->dstate) {
		umap_dev_zero(m);
		return;
	}
	if (is_hash(m) || is_array(m))
		memset(m->values, 0, (size_t)m->stride * m->max_entries);
}

int umap_foreach(struct umap *m, int (*cb)(void *arg, const void *key, const void *value),
		 void *arg)
{
	if (m->dstate)
		return umap_dev_foreach(m, cb, arg);
	for (uint32_t s = 0; (is_hash(m) || is_array(m)) && s < m->max_entries; s++) {
		int rc;
		if (is_array(m))
			rc = cb(arg, &s, value_at(m, s));
		else if (m->used[s])
			rc = cb(arg, m->keys + (size_t)s * m->key_size, value_at(m, s));
		else
			continue;
		if (rc)
			return rc;
	}
	return 0;
}
