/* The kernel as a backend (backend.h): uprobes, uretprobes and
 * tracepoints, loaded and attached by libbpf inside libgpux-host.so
 * (host_loader.h), their records read from the ring buffer. */
#include "backend.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host_loader.h"

struct kernel_backend {
	struct backend b;
	const struct host_api *api;
	struct kattach *l;
	bool detached;
	bool iter_said; /* said it failed, or where it is pinned */
};

static struct kernel_backend *kb(const struct backend *b)
{
	return (struct kernel_backend *)b;
}

/* A FUNC+argN watchpoint's address: set it (while the probes run), then
 * let the process its setup probe stopped go on, whatever came of it. */
static void k_watch_set(void *ctx, int prog, uint64_t addr, bool resume_only)
{
	struct kernel_backend *k = ctx;
	struct run *r = k->b.r;
	if (prog < 0 || prog >= r->obj.nprogs || r->obj.progs[prog].attach != ATTACH_WATCHPOINT ||
	    !r->obj.progs[prog].at.watch.deferred)
		return;
	const struct host_prog *hp = &r->obj.progs[prog];
	int e = resume_only || k->detached || !k->l ? 0 : k->api->kattach_watch(k->l, prog, addr);
	if (e == -ESRCH) {
		/* the process has gone meanwhile: nothing left to watch */
	} else if (e == -ENOSPC) {
		fprintf(stderr, "gpux: %s: cannot watch 0x%llx: the process has no debug register "
			"left\n", hp->probe, (unsigned long long)addr);
	} else if (e) {
		fprintf(stderr, "gpux: %s: cannot watch 0x%llx: %s\n", hp->probe,
			(unsigned long long)addr, strerror(-e));
		r->rs.failed = 1;
	}
	if (!hp->at.watch.async && hp->at.watch.pid > 0)
		kill(hp->at.watch.pid, SIGCONT);
}

static void k_watch_unset(void *ctx, uint64_t addr)
{
	struct kernel_backend *k = ctx;
	if (k->l && !k->detached)
		k->api->kattach_unwatch(k->l, addr);
}

static int k_open(struct backend *b, struct diags *d)
{
	struct kernel_backend *k = kb(b);
	struct run *r = b->r;
	char err[4352];
	/* with a command, uprobes see every process, as bpftrace's do */
	int pid = r->child ? 0 : (int)r->o->pid;
	r->rs.watch = (struct rec_watch){ k_watch_set, k_watch_unset, k };
	if (k->api->kattach_open(&r->obj, pid, rec_handle, &r->rs, &k->l, err, sizeof(err))) {
		struct span at;
		if (k->api->kattach_refused(&at))
			diag_hint(diag_error(d, at, "%s", err),
				  "GPUX_VERIFIER_LOG=1 prints the verifier's whole log");
		else if (k->api->kattach_unattached(&at))
			diag_error(d, at, "%s", err);
		else
			diag_error_nospan(d, "%s", err);
		return -1;
	}
	return run_maps_add_owned(r, b, RUNNER_KERNEL, d);
}

struct kattach *kernel_backend_live(struct backend *b)
{
	return kb(b)->l;
}

static int k_attached(const struct backend *b)
{
	return kb(b)->l ? kb(b)->api->kattach_attached(kb(b)->l) : 0;
}

static int k_fds(struct backend *b, struct pollfd *fds, int max)
{
	int fd = kb(b)->l ? kb(b)->api->kattach_fd(kb(b)->l) : -1;
	if (fd < 0 || max < 1)
		return 0;
	fds[0] = (struct pollfd){ .fd = fd, .events = POLLIN };
	return 1;
}

/* An iterator is read on, between the loop's looks at signals, until
 * it has visited everything. */
static int64_t k_wait_ns(const struct backend *b)
{
	const struct kernel_backend *k = kb(b);
	return k->l && !k->detached &&
	       k->api->kattach_iter_state(k->l, NULL, 0) == KATTACH_ITERATING ? 0 : -1;
}

/* An iterator's run ends the run when it has visited everything (or
 * could not), as exit() would; a pinned one at once, saying where. */
static bool k_ending(struct backend *b)
{
	struct kernel_backend *k = kb(b);
	char err[4096];
	enum kattach_iter_state st = k->l ? k->api->kattach_iter_state(k->l, err, sizeof(err))
					  : KATTACH_NO_ITER;
	if ((st == KATTACH_ITER_FAILED || st == KATTACH_ITER_PINNED) && !k->iter_said) {
		if (st == KATTACH_ITER_PINNED) {
			fprintf(b->r->out, "Program pinned to %s\n", err); /* bpftrace's words */
		} else {
			fprintf(stderr, "gpux: %s\n", err);
			b->r->rs.failed = 1;
		}
		k->iter_said = true;
	}
	return st == KATTACH_ITER_DONE || st == KATTACH_ITER_FAILED || st == KATTACH_ITER_PINNED;
}

#define LAST_DRAIN_MS 500

void kernel_records_drain(struct run *r, const struct host_api *api, struct kattach *l,
			  bool detached)
{
	if (!l)
		return;
	if (!detached) {
		api->kattach_consume(l);
		return;
	}
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (api->kattach_consume(l) == 1) {
		if (!r->stopped)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >=
		    LAST_DRAIN_MS) {
			r->dropped_at_stop = true;
			return;
		}
	}
}

static void k_drain(struct backend *b, struct diags *d)
{
	(void)d;
	kernel_records_drain(b->r, kb(b)->api, kb(b)->l, kb(b)->detached);
}

static void k_detach(struct backend *b)
{
	if (kb(b)->l)
		kb(b)->api->kattach_detach(kb(b)->l);
	kb(b)->detached = true; /* records still waiting only resume processes */
}

static int k_map_read(struct backend *b, int idx, struct out_entries *e)
{
	const struct host_map *hm = &b->r->obj.maps[idx];
	*e = (struct out_entries){ NULL, 0, hm->key_size, hm->value_size };
	return kb(b)->api->kattach_map_read(kb(b)->l, idx, &e->kv, &e->n);
}

static int k_map_reset(struct backend *b, int idx, bool keep)
{
	struct kernel_backend *k = kb(b);
	return keep ? k->api->kattach_map_zero(k->l, idx) : k->api->kattach_map_clear(k->l, idx);
}

static int k_map_write(struct backend *b, int idx, const void *key, const void *value)
{
	return kb(b)->api->kattach_map_write(kb(b)->l, idx, key, value);
}

static void k_close(struct backend *b)
{
	if (kb(b)->l)
		kb(b)->api->kattach_close(kb(b)->l);
	free(b);
}

static const struct backend_ops kernel_ops = {
	.open = k_open,
	.attached = k_attached,
	.fds = k_fds,
	.wait_ns = k_wait_ns,
	.drain = k_drain,
	.ending = k_ending,
	.detach = k_detach,
	.map_read = k_map_read,
	.map_reset = k_map_reset,
	.map_write = k_map_write,
	.close = k_close,
};

/* Said after what the build lacks (kernel_backend_new): root would not
 * help there. */
static int need_root(const struct run *r, struct diags *d)
{
	if (geteuid() != 0) {
		diag_error(d, run_first_attach(r->prog, RUNNER_KERNEL)->span,
			   "attaching this probe needs root: gpux, as bpftrace, only runs "
			   "uprobes and tracepoints as the root user");
		return -1;
	}
	return 0;
}

struct backend *kernel_backend_new(struct run *r, struct diags *d)
{
	const struct host_api *api = host_module_open(d);
	if (!api)
		return NULL;
	if (!api->kattach_open) {
		diag_error_nospan(d, "this build cannot attach probes: libgpux-host.so was "
				  "built without libbpf");
		return NULL;
	}
	if (need_root(r, d))
		return NULL;
	struct kernel_backend *k = calloc(1, sizeof(*k));
	if (!k) {
		diag_error_nospan(d, "out of memory");
		return NULL;
	}
	k->b = (struct backend){ &kernel_ops, r };
	k->api = api;
	return &k->b;
}
