/* The controller loop (run.h). One run: compile the host probes once,
 * fork the command held before its exec, let each backend load and
 * attach its probes, run BEGIN, release the command, then wait on every
 * backend's descriptors and timers, the command and our signals. At the
 * end: settle the traced program's state, detach, end the command if it
 * still runs, take the last records, run END, print every map in name
 * order. Signals are blocked except inside ppoll, so none is lost
 * between a check and the wait. */
#include "run.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "compile.h"
#include "host_loader.h"
#include "out_syms.h"
#include "progress.h"
#include "run_export.h"
#include "run_timeline.h"
#include "traced_cmd.h"

#define MAX_WAIT_NS 1000000000L /* records are consumed even if a wakeup is lost */
#define POLL_PID_NS 10000000L   /* watching a process without a pidfd */
#define TERM_WAIT_MS 2000       /* between SIGTERM and SIGKILL */
#define MAX_FDS 8

static volatile sig_atomic_t interrupted, usr1;

/* SIGCHLD only ends the wait: the loop reaps. */
static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		usr1 = 1;
	else if (sig != SIGCHLD)
		interrupted = 1;
}

/* ---- records' map actions, routed to the map's holder ---- */

static int rec_print(void *ctx, int map, uint64_t top, uint64_t div)
{
	struct run *r = ctx;
	const struct run_map *m = run_maps_obj(r, map);
	return m ? run_maps_print(r, m, top, div) : 0;
}

static void rec_reset(struct run *r, int map, bool keep)
{
	const struct run_map *m = run_maps_obj(r, map);
	if (m && m->b->ops->map_reset(m->b, m->idx, keep))
		r->rs.failed = 1;
}

static void rec_clear(void *ctx, int map)
{
	rec_reset(ctx, map, false);
}

static void rec_zero(void *ctx, int map)
{
	rec_reset(ctx, map, true);
}

/* ---- the command ---- */

static int child_env(void *arg)
{
	struct run *r = arg;
	for (int k = 0; k <= RUNNER_DRIVER; k++)
		if (r->be[k] && r->be[k]->ops->child_env && r->be[k]->ops->child_env(r->be[k]))
			return -1;
	return 0;
}

/* Ends a command still running: SIGTERM to it and what it started (under
 * -c the program is the shell's child), then SIGKILL after a while. */
static void end_child(pid_t pid, int *status)
{
	spawn_signal_tree(pid, SIGTERM);
	for (long t = 0; t < TERM_WAIT_MS; t += 5) {
		if (spawn_reaped(pid, status))
			return;
		spawn_sleep_ms(5);
	}
	spawn_signal_tree(pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}

/* ---- the loop ---- */

#define EACH_BACKEND(r, b)                                      \
	for (int k_ = 0; k_ <= RUNNER_DRIVER; k_++)             \
		for (struct backend *b = (r)->be[k_]; b; b = NULL)

static bool ending(struct run *r)
{
	EACH_BACKEND(r, b)
		if (b->ops->ending && b->ops->ending(b))
			return true;
	return r->rs.exited || r->rs.failed || interrupted;
}

static void drain_all(struct run *r, struct diags *d)
{
	EACH_BACKEND(r, b)
		if (b->ops->drain)
			b->ops->drain(b, d);
	fflush(r->out);
}

/* Until the run should end; true if the process watched (the command,
 * or -p's) left by itself, with the command's status. *left: the command
 * was reaped (by itself or not: a Ctrl-C reaches it too). */
static bool loop(struct run *r, int pidfd, int *status, bool *left, const sigset_t *open,
		 struct diags *d)
{
	struct pollfd fds[MAX_FDS + 2];
	int nfd = 0;
	EACH_BACKEND(r, b)
		if (b->ops->fds)
			nfd += b->ops->fds(b, fds + nfd, MAX_FDS - nfd);
	nfd += run_export_fds(r, fds + nfd, 1);
	int pi = nfd;
	if (pidfd >= 0)
		fds[nfd++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	for (;;) {
		drain_all(r, d);
		run_export_tick(r, false);
		run_timeline_tick(r, false);
		if (r->child > 0 && spawn_reaped(r->child, status)) {
			*left = true;
			return !interrupted && !r->rs.exited;
		}
		if (ending(r))
			return false;
		if (usr1) {
			usr1 = 0;
			if (run_maps_print_all(r, false))
				r->rs.failed = 1;
		}
		int64_t wait = r->poll_pid ? POLL_PID_NS : MAX_WAIT_NS;
		EACH_BACKEND(r, b) {
			int64_t w = b->ops->wait_ns ? b->ops->wait_ns(b) : -1;
			if (w >= 0 && w < wait)
				wait = w;
		}
		int64_t xw = run_export_wait_ns(r);
		if (xw >= 0 && xw < wait)
			wait = xw;
		if ((xw = run_timeline_wait_ns(r)) >= 0 && xw < wait)
			wait = xw;
		struct timespec ts = { (time_t)(wait / 1000000000), (long)(wait % 1000000000) };
		int n = ppoll(fds, (nfds_t)nfd, &ts, open);
		/* ppoll hands a signal over only when it cut the wait short: with
		 * records always waiting it never does, so open the mask a moment */
		if (n > 0) {
			sigset_t held;
			sigprocmask(SIG_SETMASK, open, &held);
			sigprocmask(SIG_SETMASK, &held, NULL);
		}
		if (n < 0 && errno != EINTR) {
			diag_error_nospan(d, "waiting for events: %s", strerror(errno));
			r->rs.failed = 1;
			return false;
		}
		bool pid_gone = r->child > 0 ? false
			      : pidfd >= 0 ? n > 0 && fds[pi].revents != 0
			      : r->poll_pid && kill((pid_t)r->o->pid, 0) && errno == ESRCH;
		if (pid_gone) {
			drain_all(r, d);
			return true; /* -p's process is gone */
		}
	}
}

static int status_of(const struct run *r, int status, bool gone)
{
	if (!gone || !r->child)
		return 0; /* as bpftrace: exit(), Ctrl-C and -p's end are a normal end */
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		const char *abbrev = sigabbrev_np(sig);
		if (r->be[RUNNER_TARGET])
			fprintf(stderr, "gpux: program killed by signal %d (SIG%s); maps as of its "
				"last snapshot\n", sig, abbrev ? abbrev : "?");
		return 128 + sig;
	}
	return 1;
}

/* From attaching to the printed maps; the command is held in *go. */
static int run_attached(struct run *r, int *go, const sigset_t *open, struct diags *d)
{
	int attached = 0;
	/* the traced program's first, the kernel's and the driver's last:
	 * attached probes fire at once, and their records may name any map;
	 * the driver's share the kernel's maps */
	static const enum runner order[] = { RUNNER_TARGET, RUNNER_GPUX, RUNNER_KERNEL,
					     RUNNER_DRIVER };
	for (int k = 0; k < 4; k++)
		if (r->be[order[k]] && r->be[order[k]]->ops->open(r->be[order[k]], d))
			return 1;
	if (run_export_open(r, d) || run_timeline_open(r, d))
		return 1;
	EACH_BACKEND(r, b)
		attached += b->ops->attached ? b->ops->attached(b) : 0;
	/* our command's end wakes us with SIGCHLD; -p's through a pidfd, or
	 * without pidfds (old kernels, valgrind) by looking more often */
	pid_t watch = r->child > 0 ? 0 : (pid_t)r->o->pid;
	int pidfd = watch > 0 ? (int)syscall(SYS_pidfd_open, watch, 0) : -1;
	r->poll_pid = watch > 0 && pidfd < 0 && errno == ENOSYS;
	if (watch > 0 && pidfd < 0 && !r->poll_pid) {
		diag_error_nospan(d, "cannot watch process %d: %s", (int)watch, strerror(errno));
		return 1;
	}
	/* a timeline of nothing but the trace's own probes attaches none of
	 * the user's */
	progress_stop();
	if (!r->o->quiet && !(r->tl && !attached))
		out_attached(r->out, r->json, attached);
	fflush(r->out);
	/* bpftrace's runtime test engine waits for this line before it runs
	 * a test's AFTER command (its suites run against gpux as they are);
	 * bpftrace prints it before BEGIN's output */
	if (getenv("__BPFTRACE_NOTIFY_PROBES_ATTACHED"))
		fputs("__BPFTRACE_NOTIFY_PROBES_ATTACHED\n", stderr);
	struct backend *vm = r->be[RUNNER_GPUX];
	/* BEGIN after attaching, before the command runs, as bpftrace; an
	 * exit() there means it never runs */
	if (vm && vm->ops->begin(vm, d))
		r->rs.failed = 1;
	int status = 0;
	bool gone = false, left = false, started = !r->rs.exited && !r->rs.failed;
	if (r->child > 0 && started) {
		spawn_release(*go);
		*go = -1;
	}
	if (started)
		gone = loop(r, pidfd, &status, &left, open, d);
	r->stopped = interrupted;
	/* ending it ourselves: its state first, while it still runs */
	if (r->child > 0 && started && !left)
		EACH_BACKEND(r, b)
			if (!left && b->ops->settle)
				left = b->ops->settle(b, r->child, &status);
	EACH_BACKEND(r, b)
		if (b->ops->detach)
			b->ops->detach(b);
	if (r->child > 0 && started && !left)
		end_child(r->child, &status);
	r->cmd_left = r->child > 0 && started && left;
	if (r->child > 0 && started)
		r->reaped = true;
	if (pidfd >= 0)
		close(pidfd);
	drain_all(r, d);
	if (r->dropped_at_stop)
		fputs("gpux: WARNING: stopped with records still waiting; those left after "
		      "half a second were dropped (their probes fired faster than gpux could "
		      "act on them)\n", stderr);
	bool by_exit = r->rs.exited;
	int exit_status = r->rs.status;
	if (vm) {
		r->rs.exited = false; /* END sees its own records, not a second exit() */
		vm->ops->end(vm, d);
	}
	run_export_tick(r, true);
	run_timeline_tick(r, true);
	/* a timeline of no maps ends without map printing's blank lines */
	int rc = r->tl && !r->nmaps ? 0 : run_maps_print_all(r, true) ? 1 : 0;
	EACH_BACKEND(r, b)
		if (b->ops->report)
			b->ops->report(b, stderr);
	if (rc || r->rs.failed)
		return 1;
	if (by_exit && !interrupted)
		return exit_status & 0xff;
	if (r->rs.exited) /* exit() in END */
		return r->rs.status & 0xff;
	return status_of(r, status, gone);
}

static bool uses(const struct program *prog, enum runner rn)
{
	return run_first_attach(prog, rn) != NULL;
}

static bool has_host(const struct program *prog)
{
	for (const struct node *p = prog->probes; p; p = p->next)
		if (p->u.probe.place & (PLACE_HOST | PLACE_DRIVER))
			return true;
	return false;
}

/* Refusals, before anything starts. */
static int check(struct run *r, struct diags *d)
{
	if (uses(r->prog, RUNNER_DRIVER) && driver_backend_check(r, d))
		return -1;
	if (uses(r->prog, RUNNER_TARGET) && target_backend_check(r, d))
		return -1;
	return 0;
}

static int make_backends(struct run *r, struct diags *d)
{
	if (uses(r->prog, RUNNER_TARGET) && !(r->be[RUNNER_TARGET] = target_backend_new(r, d)))
		return -1;
	if (uses(r->prog, RUNNER_KERNEL) && !(r->be[RUNNER_KERNEL] = kernel_backend_new(r, d)))
		return -1;
	if (uses(r->prog, RUNNER_DRIVER) && !(r->be[RUNNER_DRIVER] = driver_backend_new(r, d)))
		return -1;
	return 0;
}

/* A stack's frames, for printing: from the kernel's stack maps. */
static int run_stack(void *arg, unsigned limit, uint32_t id, uint64_t *ips)
{
	struct run *r = arg;
	const struct host_api *api = host_module_open(NULL);
	struct kattach *l = r->be[RUNNER_KERNEL] ? kernel_backend_live(r->be[RUNNER_KERNEL])
						   : NULL;
	return l && api && api->kattach_stack ? api->kattach_stack(l, limit, id, ips) : -1;
}

static void syms_source(struct run *r)
{
	struct out_syms_src src = { run_stack, r, host_symtab_load, host_symtab_free };
	out_syms_set(&src);
}

int run_program(struct program *prog, const struct options *o, FILE *out,
		struct diags *diags)
{
	struct run r = { .prog = prog, .o = o, .out = out, .json = o->format == FMT_JSON };
	r.rs = (struct rec_state){ .out = out, .json = r.json, .obj = &r.obj, .src = &prog->src };
	r.rs.maps = (struct rec_maps){ rec_print, rec_clear, rec_zero, &r };
	if (check(&r, diags)) {
		compile_driver_abis_free(&r.abis);
		return 1;
	}
	struct spawn_signals old;
	sigset_t open;
	spawn_signals_catch(&old, &open, on_signal);
	interrupted = usr1 = 0;
	int rc = 1, go = -1, status;
	bool cmd = o->command || o->cmd_argv;
	if (make_backends(&r, diags))
		goto out;
	if (cmd && (r.child = spawn_held(o, &old, &go, child_env, &r)) < 0) {
		r.child = 0;
		goto out;
	}
	/* compiled once the command exists: cpid is its pid */
	struct options co = *o;
	co.cpid = cmd ? (long)r.child : -1;
	if (has_host(prog)) {
		if (compile_host_obj(prog, &co, &r.abis, &r.obj, diags))
			goto out;
		r.have_obj = true;
		syms_source(&r);
		if (run_place(&r, diags) || !(r.be[RUNNER_GPUX] = gpux_backend_new(&r, diags)))
			goto out;
	}
	rc = run_attached(&r, &go, &open, diags);
out:
	if (go >= 0)
		close(go); /* the held child exits without running anything */
	if (r.child > 0 && !r.reaped)
		while (waitpid(r.child, &status, 0) < 0 && errno == EINTR)
			;
	run_export_close(&r);
	if (run_timeline_close(&r))
		rc = 1;
	for (int k = RUNNER_DRIVER; k >= 0; k--)
		if (r.be[k])
			r.be[k]->ops->close(r.be[k]);
	run_maps_free(&r);
	out_syms_end();
	free(r.owner);
	free(r.vm_reads);
	free(r.vm_writes);
	if (r.have_obj)
		host_obj_free(&r.obj);
	compile_driver_abis_free(&r.abis);
	fflush(out);
	/* unblocked last: a second Ctrl-C still pending goes to our handler
	 * instead of ending gpux after the maps */
	spawn_signals_restore(&old);
	return rc;
}
