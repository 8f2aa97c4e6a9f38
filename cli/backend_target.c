/* The traced program as a backend (backend.h): gdev: probes spliced into
 * its kernels and cuda: probes run by the runtime preloaded into it
 * (libgpux-rt.so), both through the session segment it inherits. The
 * controller polls the segment: printf records from the device rings and
 * the host regions, the device exit() flag, and at the end the map
 * snapshots the runtimes publish. */
#include "backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dev_print.h"
#include "map_base.h"
#include "attach_runtime.h"
#include "sess_host.h"
#include "traced_cmd.h"

#define POLL_NS 5000000L       /* how often the segment is looked at */
#define SNAPSHOT_WAIT_MS 1000 /* for the runtimes to answer snap_req */

struct target_backend {
	struct backend b;
	struct dev_session ds;
	struct sess_host sh;
	bool opened;
	int fd;       /* the segment, until ds owns it */
	int seg;      /* its number, for the command's environment */
	struct dev_msgs msgs;         /* the runtimes' messages */
	char rt[4096]; /* libgpux-rt.so */
	pid_t attached; /* -p: the process the runtime was loaded into */
};

static struct target_backend *tb(const struct backend *b)
{
	return (struct target_backend *)b;
}

/* Device maps are registered as themselves, cuda: maps (obj maps the
 * device does not have) after them, as nd + their obj index. */
static int register_maps(struct target_backend *t)
{
	struct run *r = t->b.r;
	int nd = t->ds.mod.nmaps;
	for (int i = 0; i < nd; i++)
		if (run_maps_add(r, &t->ds.hmaps[i], &t->b, i))
			return -1;
	for (int i = 0; t->sh.obj && i < r->obj.nmaps; i++)
		if (r->owner[i] == RUNNER_TARGET && t->sh.dev[i] < 0 &&
		    run_maps_add(r, sess_host_print_map(&t->sh, i), &t->b, nd + i))
			return -1;
	return 0;
}

/* -p: the runtime loaded into the running process, joining the session
 * (cli/attach_runtime.c). */
static int attach(struct target_backend *t, pid_t pid, struct diags *d)
{
	char env[GPUX_SESS_ENV_SIZE], err[512];
	uint32_t bound = 0;
	gpux_sess_env_format(env, (uint32_t)getpid(), t->seg, t->ds.h->token);
	if (attach_runtime(pid, t->rt, env, &bound, err, sizeof(err))) {
		diag_error_nospan(d, "%s", err);
		return -1;
	}
	t->attached = pid;
	if (!bound)
		fprintf(stderr, "gpux: WARNING: pid %d has no binding to the CUDA driver: nothing to "
			"trace there\n", (int)pid);
	return 0;
}

static int t_open(struct backend *b, struct diags *d)
{
	struct target_backend *t = tb(b);
	struct run *r = b->r;
	bool *remote = calloc((size_t)r->obj.nmaps + 1, sizeof(*remote));
	if (!remote) {
		diag_error_nospan(d, "out of memory");
		return -1;
	}
	for (int i = 0; i < r->obj.nmaps; i++)
		remote[i] = r->owner[i] == RUNNER_TARGET;
	int rc = sess_host_init(&t->sh, r->prog, r->have_obj ? &r->obj : NULL, &r->rs, remote, d);
	free(remote);
	if (rc)
		return -1;
	int fd = t->fd;
	t->fd = -1;
	t->opened = true;
	if (dev_session_open(&t->ds, r->prog, r->out, r->json, &t->sh, fd, d) ||
	    sess_host_open(&t->sh, &t->ds, d))
		return -1;
	t->sh.ds = &t->ds;
	t->ds.tap = &r->rs.tap;
	if (r->o->verbose) /* the runtime reports each module it patches */
		t->ds.h->flags |= GPUX_SESS_VERBOSE;
	if (r->o->no_cache)
		t->ds.h->flags |= GPUX_SESS_NO_CACHE;
	if (r->o->format == FMT_PERFETTO) /* the runtime sends each cuda: event whole */
		t->ds.h->flags |= GPUX_SESS_TIMELINE;
	/* -p with device probes: the process's modules are loaded already,
	 * so its kernels run instrumented namesakes, as in the REPL */
	if (r->o->pid && t->ds.nprobes)
		t->ds.h->flags |= GPUX_SESS_LIVE;
	if (dev_session_claim(t->ds.h)) {
		diag_error_nospan(d, "cannot make the session's token: %s", strerror(errno));
		return -1;
	}
	/* only then does the runtime launch a kernel of its own per context
	 * to match the clocks (one a uprobe on cuLaunchKernel would count) */
	if (t->ds.mod.reads_clock)
		t->ds.h->flags |= GPUX_SESS_CLOCK;
	dev_output_init(&t->ds);
	if (register_maps(t)) {
		diag_error_nospan(d, "out of memory");
		return -1;
	}
	return r->o->pid ? attach(t, (pid_t)r->o->pid, d) : 0;
}

static int t_child_env(struct backend *b)
{
	return spawn_runtime_env(tb(b)->seg, tb(b)->rt);
}

/* Attach points, counted as bpftrace counts probes: the device's, and
 * one per cuda: event of the user's probes (not the timeline's). */
static int t_attached(const struct backend *b)
{
	int n = (int)tb(b)->ds.nattach;
	for (const struct node *p = b->r->prog->probes; p; p = p->next)
		for (const struct node *a = p->u.probe.attach; a && !p->u.probe.timeline;
		     a = a->next)
			if (provider_in_target_vm(a->u.attach.prov))
				n += a->u.attach.nevents;
	return n;
}

void target_backend_kernel(struct backend *b, uint64_t id, char *buf, size_t len)
{
	dev_session_kernel(&tb(b)->ds, id, buf, len);
}

static int64_t t_wait_ns(const struct backend *b)
{
	(void)b;
	return POLL_NS;
}

/* What the runtimes had to say (a module they could not patch, a slot
 * they could not map), on gpux's stderr and, under -f json, as a
 * "warning" record: each distinct message once, however many processes
 * or contexts say it. */
static void read_msgs(struct target_backend *t)
{
	struct run *r = t->b.r;
	char text[DEV_MSG_SIZE];
	while (dev_msgs_next(&t->msgs, t->ds.h, t->ds.msgs_off, &t->ds.trust, text)) {
		fprintf(stderr, "gpux: %s\n", text);
		if (r->json) {
			fputs("{\"type\": \"warning\", \"data\": ", r->out);
			out_json_str(r->out, text, strlen(text));
			fputs("}\n", r->out);
		}
	}
}

static void t_drain(struct backend *b, struct diags *d)
{
	(void)d;
	read_msgs(tb(b));
	dev_ring_drain(&tb(b)->ds);
	sess_host_drain(&tb(b)->sh);
}

static bool t_ending(struct backend *b)
{
	return __atomic_load_n(&tb(b)->ds.h->exit, __ATOMIC_ACQUIRE) != 0;
}

/* snap_req, then until every slot that was live has a newer snapshot
 * or is done, the child has left, or the time is up; then stop, which
 * the runtimes read as "publish nothing more". True if reaped. */
static bool t_settle(struct backend *b, pid_t pid, int *status)
{
	struct dev_session *ds = &tb(b)->ds;
	struct sess_host *sh = &tb(b)->sh;
	uint64_t before[GPUX_SESS_MAX_SLOTS], dumps[GPUX_SESS_MAX_HOSTS] = { 0 };
	sess_host_dumps(sh, dumps);
	uint32_t n;
	dev_session_snap_ask(ds, before, &n);
	bool gone = false;
	for (long t = 0; t <= SNAPSHOT_WAIT_MS; t += POLL_NS / 1000000) {
		if ((gone = spawn_reaped(pid, status)))
			break;
		if (dev_session_snapped(ds, before, n) && sess_host_dumped_since(sh, dumps))
			break;
		dev_ring_drain(ds);
		sess_host_drain(sh);
		spawn_sleep_ms(POLL_NS / 1000000);
	}
	__atomic_store_n(&ds->h->stop, 1, __ATOMIC_RELEASE);
	return gone;
}

static int t_map_read(struct backend *b, int idx, struct out_entries *e)
{
	struct target_backend *t = tb(b);
	int nd = t->ds.mod.nmaps;
	if (idx >= nd)
		return sess_host_entries(&t->sh, idx - nd, e);
	int rc = dev_map_entries(&t->ds, idx, e);
	if (rc == 0)
		map_base_apply(&t->sh.bases, t->ds.hmaps[idx].name, e);
	return rc;
}

/* Maps being updated elsewhere are reset through a baseline. */
static int t_map_reset(struct backend *b, int idx, bool keep)
{
	struct target_backend *t = tb(b);
	int nd = t->ds.mod.nmaps;
	if (idx >= nd)
		return sess_host_reset(&t->sh, idx - nd, keep);
	struct out_entries e;
	int rc = dev_map_entries(&t->ds, idx, &e);
	if (rc == 0)
		rc = map_base_take(&t->sh.bases, t->ds.hmaps[idx].name, &e, keep);
	free(e.kv);
	return rc;
}

/* Warnings at the end; a segment the traced program tampered with
 * (sess_trust.h), seen now or before, makes the run's status 1. */
static void t_report(struct backend *b, FILE *err)
{
	struct target_backend *t = tb(b);
	read_msgs(t);
	uint32_t lost = dev_msgs_lost(t->ds.h, &t->ds.trust);
	if (lost)
		fprintf(err, "gpux: WARNING: %u more messages of the runtime were lost\n", lost);
	dev_report_drops(&t->ds, err);
	sess_host_report(&t->sh, err, b->r->o->verbose);
	/* blank maps alone would not say why (-p says so when attaching) */
	if (t->opened && b->r->cmd_left && !__atomic_load_n(&t->ds.h->cuda_seen, __ATOMIC_ACQUIRE))
		fprintf(err, "gpux: WARNING: no CUDA context or module was seen in the command (it "
			"never used CUDA, or ran where gpux's runtime was not loaded): its gdev: "
			"and cuda: probes had nothing to fire on\n");
	if (!dev_session_check(&t->ds))
		b->r->rs.failed = 1;
}

/* -p's end (the process left, Ctrl-C, exit()): a last snapshot of what
 * still runs, then stop, which turns the runtime's probes off there; its
 * driver calls go on through the runtime, untouched. */
static void t_detach(struct backend *b)
{
	struct target_backend *t = tb(b);
	if (!t->attached || !t->opened)
		return;
	uint64_t before[GPUX_SESS_MAX_SLOTS], dumps[GPUX_SESS_MAX_HOSTS] = { 0 };
	uint32_t n;
	sess_host_dumps(&t->sh, dumps);
	dev_session_snap_ask(&t->ds, before, &n);
	for (long ms = 0; ms <= SNAPSHOT_WAIT_MS && kill(t->attached, 0) == 0; ms += POLL_NS / 1000000) {
		if (dev_session_snapped(&t->ds, before, n) && sess_host_dumped_since(&t->sh, dumps))
			break;
		dev_ring_drain(&t->ds);
		sess_host_drain(&t->sh);
		spawn_sleep_ms(POLL_NS / 1000000);
	}
	__atomic_store_n(&t->ds.h->stop, 1, __ATOMIC_RELEASE);
}

static void t_close(struct backend *b)
{
	struct target_backend *t = tb(b);
	dev_msgs_free(&t->msgs);
	sess_host_close(&t->sh);
	if (t->opened)
		dev_session_close(&t->ds);
	if (t->fd >= 0)
		close(t->fd);
	free(t);
}

static const struct backend_ops target_ops = {
	.open = t_open,
	.child_env = t_child_env,
	.attached = t_attached,
	.wait_ns = t_wait_ns,
	.drain = t_drain,
	.ending = t_ending,
	.settle = t_settle,
	.detach = t_detach,
	.map_read = t_map_read,
	.map_reset = t_map_reset,
	.report = t_report,
	.close = t_close,
};

void target_backend_gpu_name(struct backend *b, uint32_t gpu, char *buf, size_t len)
{
	struct target_backend *t = tb(b);
	buf[0] = 0;
	if (t->opened && gpu < GPUX_SESS_MAX_GPUS) {
		char name[sizeof(t->ds.h->gpus[0].name)];
		memcpy(name, t->ds.h->gpus[gpu].name, sizeof(name)); /* the runtimes write it */
		if (sess_text(buf, len, name, sizeof(name)))
			buf[0] = 0;
	}
}

int target_backend_check(const struct run *r, struct diags *d)
{
	(void)d;
	if (!r->o->pid && !r->o->command && !r->o->cmd_argv) {
		fputs("gpux: ERROR: gdev: and cuda: probes need a CUDA program: use -c CMD "
		      "or -- CMD ARGS\n", stderr);
		return -1;
	}
	return 0;
}

struct backend *target_backend_new(struct run *r, struct diags *d)
{
	struct target_backend *t = calloc(1, sizeof(*t));
	if (!t) {
		diag_error_nospan(d, "out of memory");
		return NULL;
	}
	t->b = (struct backend){ &target_ops, r };
	t->ds.fd = -1;
	if (spawn_runtime_path(t->rt, sizeof(t->rt))) {
		free(t);
		return NULL;
	}
	if ((t->seg = t->fd = dev_session_fd()) < 0) {
		diag_error_nospan(d, "cannot create the session segment: %s", strerror(errno));
		free(t);
		return NULL;
	}
	return &t->b;
}
