/* --export in the run (run_export.h). */
#include "run_export.h"

#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "export_loader.h"

int run_export_open(struct run *r, struct diags *d)
{
	const struct options *o = r->o;
	if (!o->nexports)
		return 0;
	const struct export_net *net = export_module_open(d);
	if (!net)
		return -1;
	struct export_cfg c = {
		.net = net,
		.specs = o->exports,
		.nspecs = o->nexports,
		.interval_ms = o->export_interval_ms,
		.max_series = o->export_max_series,
		.info = o->quiet ? NULL : stderr,
	};
	char err[512];
	if (exporter_open(&r->ex, &c, err, sizeof(err))) {
		diag_error_nospan(d, "%s", err);
		return -1;
	}
	return 0;
}

int run_export_fds(const struct run *r, struct pollfd *fds, int max)
{
	int fd = r->ex ? exporter_fd(r->ex) : -1;
	if (fd < 0 || max < 1)
		return 0;
	fds[0] = (struct pollfd){ .fd = fd, .events = POLLIN };
	return 1;
}

int64_t run_export_wait_ns(const struct run *r)
{
	return r->ex ? exporter_wait_ns(r->ex) : -1;
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(const struct run_map *const *)a)->name,
		      (*(const struct run_map *const *)b)->name);
}

void run_export_tick(struct run *r, bool final)
{
	if (!r->ex || !exporter_due(r->ex, final))
		return;
	/* in name order, as the maps print */
	const struct run_map **v = malloc(((size_t)r->nmaps + 1) * sizeof(*v));
	for (int i = 0; v && i < r->nmaps; i++)
		v[i] = &r->maps[i];
	if (v && r->nmaps > 1)
		qsort(v, (size_t)r->nmaps, sizeof(*v), by_name);
	for (int i = 0; v && i < r->nmaps; i++) {
		const struct run_map *m = v[i];
		struct out_entries e = { 0 };
		/* a map that cannot be read now is left out of this snapshot */
		if (m->b->ops->map_read(m->b, m->idx, &e) == 0 && exporter_add(r->ex, m->hm, &e))
			fprintf(stderr, "gpux: WARNING: out of memory exporting @%s\n", m->name);
		free(e.kv);
	}
	free(v);
	if (exporter_publish(r->ex) || !v)
		fprintf(stderr, "gpux: WARNING: out of memory exporting the maps\n");
}

void run_export_close(struct run *r)
{
	exporter_close(r->ex, stderr);
	r->ex = NULL;
}
