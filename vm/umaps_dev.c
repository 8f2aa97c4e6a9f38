/* VM hash maps on a device map's table (umaps.h): the layout, the key
 * hash (abi/gpux_dev.h) and the insert protocol of the device helpers
 * (codegen/ptx/helpers.cu, slot_get), so that a cuda: program and a
 * gdev: probe share one table: state words EMPTY -> BUSY (the inserter
 * writes the key) -> FULL, DEAD after a delete and never reused; lookups
 * stop at the first EMPTY. The runtime keeps the table in host memory
 * and copies the slots an operation touched to each context's device
 * table (rt_push.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpux_dev.h"
#include "umaps.h"

int umap_bind_dev(struct umap *m, void *table, uint32_t key_size, uint32_t value_size,
		  uint32_t max_entries, char *err, size_t errlen)
{
	if (m->type != BPF_M_HASH || m->key_size != key_size || m->value_size != value_size ||
	    m->max_entries != max_entries || key_size % 8 || value_size % 8 ||
	    (max_entries & (max_entries - 1))) {
		snprintf(err, errlen, "map %s: its layout is not the device map's", m->name);
		return -1;
	}
	free(m->values);
	free(m->keys);
	free(m->heads);
	free(m->next);
	free(m->used);
	m->heads = m->next = NULL;
	m->used = NULL;
	unsigned char *t = table;
	m->dstate = (uint32_t *)t;
	m->keys = t + GPUX_SHARD_KEYS(max_entries);
	m->values = t + GPUX_SHARD_VALUES(max_entries, key_size);
	m->stride = value_size;
	m->count = 0;
	return 0;
}

/* The slot of key, claiming an EMPTY one for it when insert is set; -1
 * when absent (or, inserting, when the table is full). */
static int64_t slot_of(struct umap *m, const void *key, bool insert, bool *fresh)
{
	uint32_t cap = m->max_entries, ks = m->key_size;
	uint64_t h = gpux_key_hash(key, ks / 8);
	*fresh = false;
	for (uint32_t probe = 0; probe < cap; probe++) {
		uint32_t i = (uint32_t)(h + probe) & (cap - 1);
		unsigned char *k = m->keys + (size_t)i * ks;
		uint32_t s = __atomic_load_n(&m->dstate[i], __ATOMIC_ACQUIRE);
		if (s == GPUX_SLOT_EMPTY) {
			if (!insert)
				return -1;
			uint32_t want = GPUX_SLOT_EMPTY;
			if (__atomic_compare_exchange_n(&m->dstate[i], &want, GPUX_SLOT_BUSY, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				memcpy(k, key, ks);
				memset(m->values + (size_t)i * m->stride, 0, m->value_size);
				__atomic_store_n(&m->dstate[i], GPUX_SLOT_FULL, __ATOMIC_RELEASE);
				*fresh = true;
				m->count++;
				return i;
			}
			s = want;
		}
		/* a device lane writes this key: it finishes at once */
		while (s == GPUX_SLOT_BUSY)
			s = __atomic_load_n(&m->dstate[i], __ATOMIC_ACQUIRE);
		if (s == GPUX_SLOT_FULL && !memcmp(k, key, ks))
			return i;
	}
	if (insert)
		m->drops++;
	return -1;
}

static void touched(struct umap *m, int64_t i)
{
	if (m->touch && i >= 0)
		m->touch(m->touch_arg, (uint32_t)i);
}

void *umap_dev_lookup(struct umap *m, const void *key)
{
	bool fresh;
	int64_t i = slot_of(m, key, false, &fresh);
	touched(m, i);
	return i < 0 ? NULL : m->values + (size_t)i * m->stride;
}

int umap_dev_update(struct umap *m, const void *key, const void *value, uint64_t flags)
{
	bool fresh;
	int64_t i = slot_of(m, key, false, &fresh);
	if (i >= 0 && flags == UMAP_NOEXIST)
		return -EEXIST;
	if (i < 0 && flags == UMAP_EXIST)
		return -ENOENT;
	if (i < 0 && (i = slot_of(m, key, true, &fresh)) < 0)
		return -E2BIG;
	memmove(m->values + (size_t)i * m->stride, value, m->value_size);
	touched(m, i);
	return 0;
}

int umap_dev_delete(struct umap *m, const void *key)
{
	bool fresh;
	int64_t i = slot_of(m, key, false, &fresh);
	if (i < 0)
		return -ENOENT;
	__atomic_store_n(&m->dstate[i], GPUX_SLOT_DEAD, __ATOMIC_RELEASE);
	m->count--;
	touched(m, i);
	return 0;
}

/* clear(): every slot EMPTY again. A device lane inserting meanwhile may
 * lose its update, as with any clear racing an update. */
void umap_dev_clear(struct umap *m)
{
	for (uint32_t i = 0; i < m->max_entries; i++) {
		bool was = __atomic_load_n(&m->dstate[i], __ATOMIC_RELAXED) != GPUX_SLOT_EMPTY;
		__atomic_store_n(&m->dstate[i], GPUX_SLOT_EMPTY, __ATOMIC_RELEASE);
		if (was)
			touched(m, i);
	}
	memset(m->values, 0, (size_t)m->stride * m->max_entries);
	m->count = 0;
}

void umap_dev_zero(struct umap *m)
{
	for (uint32_t i = 0; i < m->max_entries; i++)
		if (__atomic_load_n(&m->dstate[i], __ATOMIC_RELAXED) == GPUX_SLOT_FULL) {
			memset(m->values + (size_t)i * m->stride, 0, m->value_size);
			touched(m, i);
		}
}

int umap_dev_foreach(struct umap *m, int (*cb)(void *arg, const void *key, const void *value),
		     void *arg)
{
	for (uint32_t i = 0; i < m->max_entries; i++) {
		if (__atomic_load_n(&m->dstate[i], __ATOMIC_ACQUIRE) != GPUX_SLOT_FULL)
			continue;
		int rc = cb(arg, m->keys + (size_t)i * m->key_size, m->values + (size_t)i * m->stride);
		if (rc)
			return rc;
	}
	return 0;
}
