/* cuda: maps keyed by 'kernel' (sess_host.h): the traced processes key
 * them by name-table id (codegen: host_map.kernel_id_keys), and each
 * process numbers the kernels it meets, so one kernel may have an id per
 * process. Before folding, every id becomes the first id seen with the
 * same name (its canonical id); to print, each id becomes its name in
 * DEV_STR_SIZE bytes, as gdev: keys print, so the maps of both providers
 * join by kernel. */
#include "sess_host.h"

#include <stdlib.h>
#include <string.h>

static bool has_ids(const struct host_map *hm)
{
	return hm->kernel_id_keys != 0;
}

int sess_kid_init(struct sess_host *sh)
{
	const struct host_obj *o = sh->obj;
	sh->views = calloc((size_t)o->nmaps + 1, sizeof(*sh->views));
	if (!sh->views)
		return -1;
	for (int i = 0; i < o->nmaps; i++) {
		const struct host_map *hm = &o->maps[i];
		if (!has_ids(hm) || !sh->remote[i])
			continue;
		struct host_map *v = &sh->views[i];
		*v = *hm;
		struct host_key *k = calloc((size_t)hm->nkeys + 1, sizeof(*k));
		if (!k)
			return -1;
		unsigned off = 0;
		for (int j = 0; j < hm->nkeys; j++) {
			k[j] = hm->keys[j];
			k[j].offset = off;
			if (hm->kernel_id_keys & (1u << j))
				k[j].size = DEV_STR_SIZE;
			off += k[j].size;
		}
		v->keys = k;
		v->key_size = (off ? off : 8) + (hm->bucket ? 8 : 0);
	}
	if (!(sh->canon = calloc(GPUX_SESS_MAX_NAMES, sizeof(*sh->canon))))
		return -1;
	return 0;
}

void sess_kid_free(struct sess_host *sh)
{
	for (int i = 0; sh->views && sh->obj && i < sh->obj->nmaps; i++)
		free((void *)sh->views[i].keys);
	free(sh->views);
	free(sh->canon);
	free(sh->cids);
	sh->views = NULL;
	sh->canon = NULL;
	sh->cids = NULL;
	sh->ncids = sh->capcids = 0;
}

const struct host_map *sess_host_print_map(const struct sess_host *sh, int map)
{
	return sh->views && sh->views[map].keys ? &sh->views[map] : &sh->obj->maps[map];
}

/* The first id seen with id's name (ids past the table stay as they
 * are: they print as numbers). */
static uint64_t canonical(struct sess_host *sh, uint64_t id)
{
	if (id >= GPUX_SESS_MAX_NAMES)
		return id;
	if (sh->canon[id])
		return sh->canon[id] - 1;
	char name[DEV_STR_SIZE], other[DEV_STR_SIZE];
	dev_session_kernel(sh->ds, id, name, sizeof(name));
	uint64_t c = id;
	for (size_t i = 0; i < sh->ncids; i++) {
		dev_session_kernel(sh->ds, sh->cids[i], other, sizeof(other));
		if (!strcmp(name, other)) {
			c = sh->cids[i];
			break;
		}
	}
	if (c == id) {
		if (sh->ncids == sh->capcids) {
			size_t cap = sh->capcids ? 2 * sh->capcids : 64;
			uint64_t *v = realloc(sh->cids, cap * sizeof(*v));
			if (!v)
				return id; /* not merged: printed twice, never lost */
			sh->cids = v;
			sh->capcids = cap;
		}
		sh->cids[sh->ncids++] = id;
	}
	sh->canon[id] = (uint32_t)c + 1;
	return c;
}

void sess_kid_canon(struct sess_host *sh, const struct host_map *hm, unsigned char *key)
{
	for (int j = 0; j < hm->nkeys && has_ids(hm); j++)
		if ((hm->kernel_id_keys & (1u << j)) && hm->keys[j].offset + 8 <= hm->key_size) {
			uint64_t id;
			memcpy(&id, key + hm->keys[j].offset, 8);
			id = canonical(sh, id);
			memcpy(key + hm->keys[j].offset, &id, 8);
		}
}

int sess_kid_widen(struct sess_host *sh, int map, struct out_entries *e)
{
	const struct host_map *hm = &sh->obj->maps[map], *v = sess_host_print_map(sh, map);
	if (v == hm || !e->n)
		return 0;
	size_t ks = v->key_size, es = ks + e->vs;
	unsigned char *kv = calloc(e->n, es);
	if (!kv)
		return -1;
	for (size_t i = 0; i < e->n; i++) {
		const unsigned char *src = e->kv + i * (e->ks + e->vs);
		unsigned char *dst = kv + i * es;
		for (int j = 0; j < hm->nkeys; j++) {
			const unsigned char *from = src + hm->keys[j].offset;
			if (hm->kernel_id_keys & (1u << j)) {
				uint64_t id;
				memcpy(&id, from, 8);
				dev_session_kernel(sh->ds, id, (char *)dst + v->keys[j].offset,
						   DEV_STR_SIZE);
			} else {
				memcpy(dst + v->keys[j].offset, from, hm->keys[j].size);
			}
		}
		if (hm->bucket) /* the bucket index ends the key */
			memcpy(dst + ks - 8, src + e->ks - 8, 8);
		memcpy(dst + ks, src + e->ks, e->vs);
	}
	free(e->kv);
	e->kv = kv;
	e->ks = ks;
	return 0;
}
