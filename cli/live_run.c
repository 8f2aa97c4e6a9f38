/* Kernel probes (live_run.h). Signals are blocked except inside ppoll,
 * which waits on the ring buffer and on a pidfd of the traced process.
 * Probes are detached on every way out before the maps are read. */
#include "live_run.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compile.h"
#include "host_module.h"
#include "output.h"
#include "records.h"
#include "spawn.h"
#include "map_place.h"
#include "vm_exec.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static bool is_kernel(const char *pv)
{
	return !strcmp(pv, "uprobe") || !strcmp(pv, "uretprobe") || !strcmp(pv, "tracepoint");
}

bool live_wanted(const struct program *prog)
{
	for (const struct node *p = prog->probes; p; p = p->next)
		for (const struct node *a = p->u.probe.attach; a; a = a->next)
			if (is_kernel(a->u.attach.provider))
				return true;
	return false;
}

/* What gpux cannot do yet, said before anything starts. */
static int refuse(const struct program *prog, struct diags *diags)
{
	for (const struct node *p = prog->probes; p; p = p->next)
		for (const struct node *a = p->u.probe.attach; a; a = a->next) {
			if (is_kernel(a->u.attach.provider))
				continue;
			if (map_place_vm_probe(p) && !a->next && a == p->u.probe.attach)
				continue; /* BEGIN, END, interval: run in the VM beside */
			diag_error(diags, a->span, "%s probes together with uprobes or tracepoints "
				   "are not supported yet", a->u.attach.provider);
			return -1;
		}
	return 0;
}

/* Said after what the build lacks: root would not help there. */
static int need_root(const struct program *prog, struct diags *diags)
{
	if (geteuid() == 0)
		return 0;
	const struct node *first = NULL;
	for (const struct node *p = prog->probes; p && !first; p = p->next)
		for (const struct node *a = p->u.probe.attach; a && !first; a = a->next)
			if (is_kernel(a->u.attach.provider))
				first = a;
	diag_error(diags, first->span, "attaching this probe needs root: gpux, as "
		   "bpftrace, only runs uprobes and tracepoints as the root user");
	return -1;
}

struct live {
	const struct host_api *api;
	struct host_live *l;
	struct rec_state rs;
	struct vm_exec x;    /* BEGIN, END, interval; x.vm NULL if none */
	bool *in_kernel;     /* per map: the kernel's (map_place.h) */
	bool *vm_reads;      /* per map: a kernel map BEGIN/END/interval read */
	struct host_obj obj;
	bool compiled;
};

/* Compiled once the command exists (cpid is its pid), before attaching. */
static int prepare(struct live *s, struct program *prog, const struct options *o,
		   long cpid, struct diags *diags)
{
	struct options lo = *o;
	lo.cpid = cpid;
	if (compile_host_obj(prog, &lo, &s->obj, diags))
		return -1;
	s->compiled = true;
	s->in_kernel = calloc((size_t)s->obj.nmaps + 1, sizeof(*s->in_kernel));
	s->vm_reads = calloc((size_t)s->obj.nmaps + 1, sizeof(*s->vm_reads));
	if (!s->in_kernel || !s->vm_reads ||
	    map_place(prog, &s->obj, s->in_kernel, s->vm_reads,
		      "uprobes or tracepoints, which keep it in the kernel", diags))
		return -1;
	bool vm = false;
	for (const struct node *p = prog->probes; p; p = p->next)
		vm |= map_place_vm_probe(p);
	return vm ? vm_exec_open(&s->x, &s->obj, &s->rs, diags) : 0;
}

/* The kernel maps BEGIN/END/interval read, copied into the VM (per-CPU
 * values merged) just before one of them runs. */
static void sync_reads(struct live *s)
{
	for (int i = 0; s->x.vm && s->l && i < s->obj.nmaps; i++) {
		if (!s->vm_reads[i])
			continue;
		const struct host_map *hm = &s->obj.maps[i];
		struct vm_map *m = vm_map_by_name(s->x.vm, hm->sym);
		unsigned char *kv;
		size_t n;
		if (!m || s->api->live_map_read(s->l, i, &kv, &n))
			continue;
		vm_map_clear(s->x.vm, m);
		size_t w = hm->key_size + hm->value_size;
		for (size_t k = 0; k < n; k++)
			vm_map_update(s->x.vm, m, kv + k * w, kv + k * w + hm->key_size, 0);
		free(kv);
	}
}

static int k_print(void *ctx, int map, uint64_t top, uint64_t div)
{
	struct live *s = ctx;
	if (!s->in_kernel[map])
		return vm_exec_print(&s->x, map, top, div);
	const struct host_map *hm = &s->rs.obj->maps[map];
	unsigned char *kv;
	size_t n;
	if (s->api->live_map_read(s->l, map, &kv, &n))
		return -1;
	struct out_entries e = { kv, n, hm->key_size, hm->value_size };
	int rc = out_map_entries(s->rs.out, s->rs.json, hm, &e, top, div);
	free(kv);
	return rc;
}

static void k_clear(void *ctx, int map)
{
	struct live *s = ctx;
	if (s->in_kernel[map])
		s->api->live_map_clear(s->l, map);
	else
		vm_exec_clear(&s->x, map);
}

static void k_zero(void *ctx, int map)
{
	struct live *s = ctx;
	if (s->in_kernel[map])
		s->api->live_map_zero(s->l, map);
	else
		vm_exec_zero(&s->x, map);
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(const struct host_map *const *)a)->name,
		      (*(const struct host_map *const *)b)->name);
}

/* At exit: a blank line pair, then every map in name order. */
static int print_all(struct live *s)
{
	const struct host_obj *obj = s->rs.obj;
	fputs("\n\n", s->rs.out);
	const struct host_map **v = calloc((size_t)obj->nmaps + 1, sizeof(*v));
	if (!v)
		return -1;
	for (int i = 0; i < obj->nmaps; i++)
		v[i] = &obj->maps[i];
	if (obj->nmaps > 1)
		qsort(v, (size_t)obj->nmaps, sizeof(*v), by_name);
	int rc = 0;
	for (int i = 0; i < obj->nmaps; i++)
		if (k_print(s, (int)(v[i] - obj->maps), 0, 0))
			rc = -1;
	free(v);
	return rc;
}

static void sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ ms / 1000, ms % 1000 * 1000000 }, NULL);
}

/* Ends a command still running: SIGTERM to it and what it started, then
 * SIGKILL after 2 s. */
static void end_child(pid_t pid, int *status)
{
	spawn_signal_tree(pid, SIGTERM);
	for (int t = 0; t < 400; t++) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			return;
		sleep_ms(5);
	}
	spawn_signal_tree(pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}

/* Until exit(), a signal, or the process behind pidfd ending (true). */
static bool wait_loop(struct live *s, int pidfd, const sigset_t *open, struct diags *diags)
{
	struct pollfd fds[2];
	int nfd = 0, rfd = s->api->live_fd(s->l);
	if (rfd >= 0)
		fds[nfd++] = (struct pollfd){ .fd = rfd, .events = POLLIN };
	int pi = nfd;
	if (pidfd >= 0)
		fds[nfd++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	while (!s->rs.exited && !interrupted && !s->rs.failed) {
		/* at most a second: records are consumed even if a wakeup is
		 * lost; sooner when an interval probe is due */
		int64_t wait = s->x.vm ? vm_exec_wait_ns(&s->x) : -1;
		if (wait < 0 || wait > 1000000000)
			wait = 1000000000;
		struct timespec ts = { (time_t)(wait / 1000000000), (long)(wait % 1000000000) };
		int n = ppoll(fds, (nfds_t)nfd, &ts, open);
		if (n < 0 && errno != EINTR)
			return false;
		s->api->live_consume(s->l);
		if (s->x.vm && vm_exec_wait_ns(&s->x) == 0) {
			sync_reads(s);
			vm_exec_due(&s->x, diags);
		}
		fflush(s->rs.out);
		if (n > 0 && pidfd >= 0 && fds[pi].revents)
			return true;
	}
	return false;
}

static int child_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

static int run(struct live *s, struct program *prog, const struct options *o,
	       struct diags *diags)
{
	struct spawn_signals old;
	sigset_t open;
	spawn_signals_catch(&old, &open, on_signal);
	interrupted = 0;
	int rc = 1, go = -1, status = 0, pidfd = -1;
	bool cmd = o->command || o->cmd_argv;
	pid_t child = cmd ? spawn_held(o, &old, &go) : 0;
	char err[4352];
	if (cmd && child < 0)
		goto out;
	if (prepare(s, prog, o, cmd ? (long)child : -1, diags))
		goto out;
	if (s->api->live_open(&s->obj, cmd ? 0 : (int)o->pid, rec_handle, &s->rs, &s->l, err,
			      sizeof(err))) {
		diag_error_nospan(diags, "%s", err);
		goto out;
	}
	pid_t target = cmd ? child : (pid_t)o->pid;
	if (target > 0 && (pidfd = (int)syscall(SYS_pidfd_open, target, 0)) < 0) {
		diag_error_nospan(diags, "cannot watch process %d: %s", (int)target,
				  strerror(errno));
		goto out;
	}
	if (!o->quiet)
		out_attached(s->rs.out, s->rs.json,
			     s->api->live_attached(s->l) + (s->x.vm ? vm_prog_count(s->x.vm) : 0));
	fflush(s->rs.out);
	/* BEGIN after attaching, before the command runs, as bpftrace */
	if (s->x.vm) {
		sync_reads(s);
		vm_exec_section(&s->x, "gpux/begin", diags);
	}
	if (cmd) {
		spawn_release(go);
		go = -1;
	}
	bool gone = s->rs.exited || s->rs.failed ? false : wait_loop(s, pidfd, &open, diags);
	s->api->live_detach(s->l);
	bool reaped = false;
	if (cmd && gone)
		reaped = waitpid(child, &status, 0) == child;
	else if (cmd) {
		end_child(child, &status);
		reaped = true;
	}
	child = 0;
	s->api->live_consume(s->l);
	if (s->x.vm) {
		/* END sees its own records, but not a second exit() */
		bool exited = s->rs.exited;
		int status_exit = s->rs.status;
		s->rs.exited = false;
		sync_reads(s);
		vm_exec_section(&s->x, "gpux/end", diags);
		s->rs.exited |= exited;
		if (exited)
			s->rs.status = status_exit;
	}
	rc = print_all(s) ? 1 : 0;
	fflush(s->rs.out);
	if (rc == 0 && !s->rs.failed) {
		if (s->rs.exited)
			rc = s->rs.status & 0xff;
		else if (cmd && gone && reaped && !interrupted)
			rc = child_status(status);
	} else {
		rc = 1;
	}
out:
	if (go >= 0)
		close(go); /* the held child exits without running anything */
	if (child > 0)
		while (waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
	if (pidfd >= 0)
		close(pidfd);
	s->api->live_close(s->l);
	s->l = NULL;
	spawn_signals_restore(&old);
	return rc;
}

int live_run(struct program *prog, const struct options *o, FILE *out,
	     struct diags *diags)
{
	if (refuse(prog, diags))
		return 1;
	const struct host_api *api = host_module_open(diags);
	if (!api)
		return 1;
	if (!api->live_open) {
		diag_error_nospan(diags, "this build cannot attach probes: libgpux-host.so "
				  "was built without libbpf");
		return 1;
	}
	if (need_root(prog, diags))
		return 1;
	struct live s = { .api = api, .rs = { .out = out, .json = o->format == FMT_JSON } };
	s.rs.obj = &s.obj;
	s.rs.maps = (struct rec_maps){ k_print, k_clear, k_zero, &s };
	int rc = run(&s, prog, o, diags);
	vm_exec_close(&s.x);
	free(s.in_kernel);
	free(s.vm_reads);
	if (s.compiled)
		compile_host_obj_free(&s.obj);
	return rc;
}
