/* The controller loop for device probes (session_run.h).
 *
 * Every 5 ms: drain the printf rings, reap the child, look at the
 * device exit() flag and at our own signals. When the child leaves by
 * itself its runtime has written its final snapshot. When we end it
 * (exit(), SIGINT/SIGTERM), we ask every live slot for a fresh snapshot
 * first (snap_req), wait a bounded time for it, then set stop and send
 * SIGTERM to the child and its descendants, escalating to SIGKILL if the
 * child does not go. */
#include "session_run.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "dev_output.h"
#include "map_place.h"
#include "output.h"
#include "sess_host.h"
#include "spawn.h"

#define POLL_MS 5
#define SNAPSHOT_WAIT_MS 1000 /* for the runtimes to answer snap_req */
#define TERM_WAIT_MS 2000     /* between SIGTERM and SIGKILL */

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

bool session_wanted(const struct program *prog)
{
	for (const struct node *p = prog->probes; p; p = p->next)
		if (p->u.probe.place & PLACE_DEVICE)
			return true;
	return sess_host_wanted(prog);
}

static bool is_cuda(const struct node *probe)
{
	for (const struct node *a = probe->u.probe.attach; a; a = a->next)
		if (strcmp(a->u.attach.provider, "cuda"))
			return false;
	return true;
}

/* What this build cannot do yet, said before anything starts. */
static int refuse(const struct program *prog, const struct options *o, struct diags *diags)
{
	for (const struct node *p = prog->probes; p; p = p->next)
		if (p->u.probe.place != PLACE_DEVICE && !is_cuda(p) && !map_place_vm_probe(p)) {
			diag_error(diags, p->u.probe.attach ? p->u.probe.attach->span : p->span,
				   "gdev: and cuda: probes with kernel probes in one program are "
				   "not supported yet");
			return -1;
		}
	if (o->pid) {
		fputs("gpux: ERROR: attaching to a running process is not supported for "
		      "gdev: and cuda: probes\n", stderr);
		return -1;
	}
	if (!o->command && !o->cmd_argv) {
		fputs("gpux: ERROR: gdev: and cuda: probes need a CUDA program: use -c CMD "
		      "or -- CMD ARGS\n", stderr);
		return -1;
	}
	return 0;
}

static void sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ ms / 1000, ms % 1000 * 1000000 }, NULL);
}

/* Reaps the child if it has left: true, with its status. A child that
 * is not ours any more (ECHILD) counts as gone. */
static bool reaped(pid_t pid, int *status)
{
	pid_t r;
	while ((r = waitpid(pid, status, WNOHANG)) < 0 && errno == EINTR)
		;
	if (r < 0)
		*status = 0;
	return r != 0;
}

static bool wait_child(pid_t pid, int *status, long ms)
{
	for (long t = 0; t <= ms; t += POLL_MS) {
		if (reaped(pid, status))
			return true;
		sleep_ms(POLL_MS);
	}
	return false;
}

/* snap_req, then until every slot that was live has a newer snapshot
 * or is done, the child has left, or the time is up. True if reaped. */
static bool fresh_snapshots(struct dev_session *ds, struct sess_host *sh, pid_t pid,
			    int *status)
{
	uint64_t before[GPUX_SESS_MAX_SLOTS], dumps[GPUX_SESS_MAX_HOSTS] = { 0 };
	sess_host_dumps(sh, dumps);
	uint32_t n = dev_session_slots(ds);
	for (uint32_t i = 0; i < n; i++)
		before[i] = __atomic_load_n(&dev_session_slot(ds, i)->snapshots, __ATOMIC_ACQUIRE);
	__atomic_fetch_add(&ds->h->snap_req, 1, __ATOMIC_RELEASE);
	for (long t = 0; t <= SNAPSHOT_WAIT_MS; t += POLL_MS) {
		if (reaped(pid, status))
			return true;
		bool all = true;
		for (uint32_t i = 0; i < n; i++) {
			struct gpux_sess_slot *s = dev_session_slot(ds, i);
			all &= __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != GPUX_SLOT_LIVE ||
			       __atomic_load_n(&s->snapshots, __ATOMIC_ACQUIRE) != before[i];
		}
		if (all && sess_host_dumped_since(sh, dumps))
			return false;
		dev_ring_drain(ds);
		sess_host_drain(sh);
		sleep_ms(POLL_MS);
	}
	return false;
}

/* Ends the child and what it started (the program itself, under -c):
 * stop, SIGTERM, then SIGKILL if the child stays. */
static void end_child(struct dev_session *ds, struct sess_host *sh, pid_t pid, int *status)
{
	if (fresh_snapshots(ds, sh, pid, status))
		return;
	__atomic_store_n(&ds->h->stop, 1, __ATOMIC_RELEASE);
	spawn_signal_tree(pid, SIGTERM);
	if (wait_child(pid, status, TERM_WAIT_MS))
		return;
	spawn_signal_tree(pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}

/* Until the child leaves or we end it; true if we ended it. A Ctrl-C
 * reaches the child too (our foreground process group): if it is gone
 * by the time we look, it is still our signal that ended it. */
static bool main_loop(struct dev_session *ds, struct sess_host *sh, pid_t pid, int *status,
		      const sigset_t *open, struct diags *diags)
{
	for (;;) {
		dev_ring_drain(ds);
		sess_host_drain(sh);
		if (reaped(pid, status))
			return interrupted || sh->rs.exited;
		if (__atomic_load_n(&ds->h->exit, __ATOMIC_ACQUIRE) || interrupted || sh->rs.exited) {
			end_child(ds, sh, pid, status);
			return true;
		}
		int64_t wait = POLL_MS * 1000000L, due = sh->have_obj ? vm_exec_wait_ns(&sh->x) : -1;
		struct timespec ts = { 0, due >= 0 && due < wait ? due : wait };
		ppoll(NULL, 0, &ts, open);
		if (sh->have_obj)
			vm_exec_due(&sh->x, diags); /* interval probes */
	}
}

/* Host attach points, counted as bpftrace counts probes: one per cuda:
 * event, one per BEGIN, END or interval. */
static int host_attach_count(const struct program *prog)
{
	int n = 0;
	for (const struct node *p = prog->probes; p; p = p->next)
		for (const struct node *a = p->u.probe.attach; a; a = a->next)
			if (!strcmp(a->u.attach.provider, "cuda"))
				n += a->u.attach.nevents;
			else if (map_place_vm_probe(p))
				n++;
	return n;
}

static int exit_status(int status, bool ended)
{
	if (ended)
		return 0; /* as bpftrace: exit() and Ctrl-C are a normal end */
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		const char *abbrev = sigabbrev_np(sig);
		fprintf(stderr, "gpux: program killed by signal %d (SIG%s); maps as of its "
			"last snapshot\n", sig, abbrev ? abbrev : "?");
		return 128 + sig;
	}
	return 1;
}

/* BEGIN runs before the program starts (an exit() there means it never
 * does), interval probes in the main loop, END once it has ended and
 * before the maps are printed. */
static int run(struct dev_session *ds, struct sess_host *sh, const struct options *o,
	       const char *rt, struct diags *diags)
{
	struct spawn_signals old;
	sigset_t open;
	spawn_signals_catch(&old, &open, on_signal);
	interrupted = 0;
	if (o->verbose)
		ds->h->flags |= GPUX_SESS_VERBOSE;
	if (!o->quiet)
		out_attached(ds->out, ds->json, (int)ds->nattach + host_attach_count(ds->prog));
	int rc = 1, status = 0;
	if (sh->have_obj && vm_exec_section(&sh->x, "gpux/begin", diags)) {
		spawn_signals_restore(&old);
		return 1;
	}
	bool started = !sh->rs.exited;
	pid_t pid = started ? spawn_traced(o, ds->fd, rt, &old) : 0;
	if (pid > 0 || !started) {
		bool ended = started ? main_loop(ds, sh, pid, &status, &open, diags) : true;
		dev_ring_drain(ds);
		sess_host_drain(sh);
		bool by_exit = sh->rs.exited;
		sh->rs.exited = false; /* END sees its own records, not a second exit() */
		if (sh->have_obj)
			vm_exec_section(&sh->x, "gpux/end", diags);
		int maps = dev_print_maps(ds, sh);
		dev_report_drops(ds, stderr);
		sess_host_report(sh, stderr);
		rc = exit_status(status, ended);
		if (by_exit && !interrupted)
			rc = sh->rs.status & 0xff;
		if (maps || sh->rs.failed) {
			if (maps)
				fputs("gpux: ERROR: out of memory printing the maps\n", stderr);
			rc = 1;
		}
	}
	/* unblocked first: a second Ctrl-C still pending goes to our handler
	 * instead of ending gpux after the maps */
	spawn_signals_restore(&old);
	return rc;
}

int session_run(struct program *prog, const struct options *o, FILE *out,
		struct diags *diags)
{
	if (refuse(prog, o, diags))
		return 1;
	struct sess_host sh;
	memset(&sh, 0, sizeof(sh));
	bool host = sess_host_any(prog);
	if (host && sess_host_compile(&sh, prog, o, diags)) {
		sess_host_close(&sh);
		return 1;
	}
	struct dev_session ds;
	if (dev_session_open(&ds, prog, out, o->format == FMT_JSON, host ? &sh : NULL, diags)) {
		sess_host_close(&sh);
		return 1;
	}
	if (host && sess_host_open(&sh, &ds, diags)) {
		sess_host_close(&sh);
		dev_session_close(&ds);
		return 1;
	}
	sh.ds = &ds;
	if (o->verbose) /* the runtime reports each module it patches */
		ds.h->flags |= GPUX_SESS_VERBOSE;
	char rt[4096];
	int rc = 1;
	if (spawn_runtime_path(rt, sizeof(rt)) == 0) {
		dev_output_init(&ds);
		rc = run(&ds, &sh, o, rt, diags);
	}
	sess_host_close(&sh);
	dev_session_close(&ds);
	return rc;
}
