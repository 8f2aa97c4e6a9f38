/* The GPU driver as a backend (backend.h): gpu_mem: and gpu_sched:
 * probes as struct_ops programs that libbpf, inside libgpux-host.so,
 * loads against the gpu_ext driver's BTF and registers with it. Maps
 * only they use live in their object; maps kernel probes use too are the
 * kernel backend's, shared by descriptor (and its ring buffer then). */
#include "backend.h"

#include <stdlib.h>
#include <unistd.h>

#include "host_loader.h"

struct driver_backend {
	struct backend b;
	const struct host_api *api;
	struct kattach *l;
	bool detached;
};

static struct driver_backend *db(const struct backend *b)
{
	return (struct driver_backend *)b;
}

static int d_open(struct backend *b, struct diags *d)
{
	struct driver_backend *k = db(b);
	struct run *r = b->r;
	char err[4352];
	struct backend *kb = r->be[RUNNER_KERNEL];
	if (k->api->kattach_open_driver(&r->obj, kb ? kernel_backend_live(kb) : NULL, rec_handle,
				     &r->rs, &k->l, err, sizeof(err))) {
		struct span at = run_first_attach(r->prog, RUNNER_DRIVER)->span;
		bool verifier = k->api->kattach_refused(&at);
		struct diag *dg = diag_error(d, at, "%s", err);
		if (verifier)
			diag_hint(dg, "GPUX_VERIFIER_LOG=1 prints the verifier's whole log");
		return -1;
	}
	return run_maps_add_owned(r, b, RUNNER_DRIVER, d);
}

static int d_attached(const struct backend *b)
{
	return db(b)->l ? run_count_attach(b->r->prog, RUNNER_DRIVER) : 0;
}

static int d_fds(struct backend *b, struct pollfd *fds, int max)
{
	int fd = db(b)->l ? db(b)->api->kattach_fd(db(b)->l) : -1;
	if (fd < 0 || max < 1)
		return 0;
	fds[0] = (struct pollfd){ .fd = fd, .events = POLLIN };
	return 1;
}

static int64_t d_wait_ns(const struct backend *b)
{
	(void)b;
	return -1;
}

static void d_drain(struct backend *b, struct diags *d)
{
	(void)d;
	kernel_records_drain(b->r, db(b)->api, db(b)->l, db(b)->detached);
}

static void d_detach(struct backend *b)
{
	if (db(b)->l)
		db(b)->api->kattach_detach(db(b)->l);
	db(b)->detached = true;
}

static int d_map_read(struct backend *b, int idx, struct out_entries *e)
{
	const struct host_map *hm = &b->r->obj.maps[idx];
	*e = (struct out_entries){ NULL, 0, hm->key_size, hm->value_size };
	return db(b)->api->kattach_map_read(db(b)->l, idx, &e->kv, &e->n);
}

static int d_map_reset(struct backend *b, int idx, bool keep)
{
	struct driver_backend *k = db(b);
	return keep ? k->api->kattach_map_zero(k->l, idx) : k->api->kattach_map_clear(k->l, idx);
}

static int d_map_write(struct backend *b, int idx, const void *key, const void *value)
{
	return db(b)->api->kattach_map_write(db(b)->l, idx, key, value);
}

static void d_close(struct backend *b)
{
	if (db(b)->l)
		db(b)->api->kattach_close(db(b)->l);
	free(b);
}

static const struct backend_ops driver_ops = {
	.open = d_open,
	.attached = d_attached,
	.fds = d_fds,
	.wait_ns = d_wait_ns,
	.drain = d_drain,
	.detach = d_detach,
	.map_read = d_map_read,
	.map_reset = d_map_reset,
	.map_write = d_map_write,
	.close = d_close,
};

/* Most basic first: a build that cannot attach, a driver without
 * gpu_ext's hooks (binding, which the compile then uses), a libbpf that
 * cannot load a module's struct_ops, not being root. */
int driver_backend_check(struct run *r, struct diags *d)
{
	const struct node *at = run_first_attach(r->prog, RUNNER_DRIVER);
	const char *prov = at->u.attach.prov->name;
	const struct host_api *api = host_module_open(d);
	if (!api)
		return -1;
	if (!api->kattach_open_driver) {
		diag_error(d, at->span, "this build cannot attach %s probes: libgpux-host.so "
			   "was built without libbpf", prov);
		return -1;
	}
	if (compile_driver_abis(r->prog, true, &r->abis, d))
		return -1;
	char err[256];
	if (api->kattach_driver_check(err, sizeof(err))) {
		struct diag *dg = diag_error(d, at->span, "%s probes cannot be attached: %s",
					     prov, err);
		diag_hint(dg, "--dry-run checks them; --sim WORKLOAD runs them in the simulator");
		return -1;
	}
	if (geteuid() != 0) {
		diag_error(d, at->span, "attaching this probe needs root: the driver takes "
			   "struct_ops policies from the root user only");
		return -1;
	}
	return 0;
}

struct backend *driver_backend_new(struct run *r, struct diags *d)
{
	struct driver_backend *k = calloc(1, sizeof(*k));
	if (!k || !(k->api = host_module_open(d))) {
		free(k);
		if (!k)
			diag_error_nospan(d, "out of memory");
		return NULL;
	}
	k->b = (struct backend){ &driver_ops, r };
	return &k->b;
}
