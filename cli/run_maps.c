/* The maps of a run, whoever holds them (backend.h): print(), clear()
 * and zero() records and the final print find a map's backend here. */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

int run_maps_add(struct run *r, const struct host_map *hm, struct backend *b, int idx)
{
	if (r->nmaps == r->capmaps) {
		int cap = r->capmaps ? 2 * r->capmaps : 16;
		struct run_map *v = realloc(r->maps, (size_t)cap * sizeof(*v));
		if (!v)
			return -1;
		r->maps = v;
		r->capmaps = cap;
	}
	r->maps[r->nmaps++] = (struct run_map){ hm->name, hm, b, idx };
	return 0;
}

int run_maps_add_owned(struct run *r, struct backend *b, enum runner rn, struct diags *d)
{
	for (int i = 0; i < r->obj.nmaps; i++)
		if (r->owner[i] == rn && run_maps_add(r, &r->obj.maps[i], b, i)) {
			diag_error_nospan(d, "out of memory");
			return -1;
		}
	return 0;
}

const struct run_map *run_maps_obj(const struct run *r, int i)
{
	if (i < 0 || i >= r->obj.nmaps)
		return NULL;
	for (int k = 0; k < r->nmaps; k++)
		if (!strcmp(r->maps[k].name, r->obj.maps[i].name))
			return &r->maps[k];
	return NULL;
}

int run_maps_print(struct run *r, const struct run_map *m, uint64_t top, uint64_t div)
{
	struct out_entries e = { 0 };
	int rc = m->b->ops->map_read(m->b, m->idx, &e);
	if (rc == 0)
		rc = out_map_entries(r->out, r->json, m->hm, &e, top, div);
	free(e.kv);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct run_map *)a)->name, ((const struct run_map *)b)->name);
}

int run_maps_print_all(struct run *r, bool at_exit)
{
	if (at_exit)
		fputs("\n\n", r->out);
	struct run_map *v = malloc(((size_t)r->nmaps + 1) * sizeof(*v));
	if (!v)
		return -1;
	if (r->nmaps)
		memcpy(v, r->maps, (size_t)r->nmaps * sizeof(*v));
	qsort(v, (size_t)r->nmaps, sizeof(*v), by_name);
	int rc = 0;
	for (int i = 0; i < r->nmaps; i++)
		if (run_maps_print(r, &v[i], 0, 0))
			rc = -1;
	free(v);
	fflush(r->out);
	return rc;
}

void run_maps_free(struct run *r)
{
	free(r->maps);
	r->maps = NULL;
	r->nmaps = r->capmaps = 0;
}
