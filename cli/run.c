/* The controller loop (run.h): BEGIN, then interval programs on their
 * timers until exit() or a signal, then END and the maps. Every program
 * run is followed by a drain of the ring buffer, whose records (printf,
 * exit, print, clear, zero, time) the controller acts on. */
/* ppoll needs _GNU_SOURCE, which the build defines */
#include "run.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf_vm.h"
#include "compile.h"
#include "output.h"
#include "records.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

bool run_supported(const struct program *prog)
{
	for (const struct node *p = prog->probes; p; p = p->next)
		for (const struct node *a = p->u.probe.attach; a; a = a->next) {
			const char *pv = a->u.attach.provider;
			if (strcmp(pv, "BEGIN") && strcmp(pv, "END") && strcmp(pv, "interval"))
				return false;
		}
	return true;
}

struct session {
	struct vm *vm;
	struct rec_state rs;
};

static struct vm_map *vm_map_of(struct session *s, int map)
{
	return vm_map_by_name(s->vm, s->rs.obj->maps[map].sym);
}

static int vm_print(void *ctx, int map, uint64_t top, uint64_t div)
{
	struct session *s = ctx;
	return out_map(s->rs.out, s->rs.json, s->vm, &s->rs.obj->maps[map], top, div);
}

static void vm_clear(void *ctx, int map)
{
	struct session *s = ctx;
	struct vm_map *m = vm_map_of(s, map);
	if (m)
		vm_map_clear(s->vm, m);
}

static void vm_zero(void *ctx, int map)
{
	struct session *s = ctx;
	struct vm_map *m = vm_map_of(s, map);
	if (m)
		vm_map_zero(s->vm, m);
}

/* Runs one section and acts on what it wrote; the output is flushed so
 * that a watcher sees each interval's lines as they come. */
static int run_section(struct session *s, const char *sec, struct diags *diags)
{
	int rc = vm_run(s->vm, sec, NULL, 0, NULL);
	if (rc && rc != VM_ENOPROG) {
		diag_error_nospan(diags, "%s stopped: %s", sec, vm_last_error(s->vm));
		s->rs.failed = 1;
	}
	vm_ring_drain(s->vm, rec_handle, &s->rs);
	fflush(s->rs.out);
	return rc && rc != VM_ENOPROG ? -1 : 0;
}

struct timer {
	const char *sec;
	uint64_t period, next; /* ns, CLOCK_MONOTONIC */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One timer per distinct interval section (equal periods share one). */
static int make_timers(struct vm *vm, const struct host_obj *obj, struct timer **out)
{
	struct timer *t = calloc((size_t)vm_prog_count(vm) + 1, sizeof(*t));
	int n = 0;
	if (!t)
		return -1;
	uint64_t start = now_ns();
	for (int i = 0; i < vm_prog_count(vm); i++) {
		const char *sec = vm_prog_section(vm, i);
		if (strncmp(sec, "gpux/interval/", 14))
			continue;
		bool dup = false;
		for (int k = 0; k < n; k++)
			dup |= !strcmp(t[k].sec, sec);
		uint64_t period = strtoull(sec + 14, NULL, 10);
		if (dup || !period)
			continue;
		t[n++] = (struct timer){ sec, period, start + period };
	}
	(void)obj;
	*out = t;
	return n;
}

/* Waits for the earliest timer or a signal; signals are blocked except
 * inside ppoll, so none is lost between the check and the wait. */
static void main_loop(struct session *s, struct timer *t, int nt, const sigset_t *open,
		      struct diags *diags)
{
	while (!s->rs.exited && !interrupted && !s->rs.failed) {
		int first = -1;
		for (int k = 0; k < nt; k++)
			if (first < 0 || t[k].next < t[first].next)
				first = k;
		struct timespec ts, *tsp = NULL;
		if (first >= 0) {
			uint64_t now = now_ns(), wait = t[first].next > now ? t[first].next - now : 0;
			ts = (struct timespec){ (time_t)(wait / 1000000000ull),
						(long)(wait % 1000000000ull) };
			tsp = &ts;
		}
		if (ppoll(NULL, 0, tsp, open) < 0 && errno == EINTR)
			continue;
		if (first < 0 || now_ns() < t[first].next)
			continue;
		t[first].next += t[first].period;
		run_section(s, t[first].sec, diags);
	}
}

int run_program(struct program *prog, const struct options *o, FILE *out,
		struct diags *diags)
{
	struct host_obj obj;
	if (compile_host_obj(prog, o, &obj, diags))
		return 1;
	char err[256];
	struct session s = { .rs = { .out = out, .json = o->format == FMT_JSON, .obj = &obj } };
	s.rs.maps = (struct rec_maps){ vm_print, vm_clear, vm_zero, &s };
	if (vm_load(obj.elf, obj.size, &s.vm, err, sizeof(err))) {
		diag_error_nospan(diags, "cannot load the host programs: %s", err);
		compile_host_obj_free(&obj);
		return 1;
	}
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigset_t block, open;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &open);
	sigdelset(&open, SIGINT);
	sigdelset(&open, SIGTERM);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	interrupted = 0;
	if (!o->quiet)
		out_attached(out, s.rs.json, obj.nprogs);
	struct timer *t = NULL;
	int nt = make_timers(s.vm, &obj, &t);
	if (nt < 0)
		s.rs.failed = 1;
	else if (run_section(&s, "gpux/begin", diags) == 0)
		main_loop(&s, t, nt, &open, diags);
	/* END sees its own records, but not a second exit() */
	s.rs.exited = false;
	run_section(&s, "gpux/end", diags);
	if (out_all_maps(out, s.rs.json, s.vm, &obj))
		s.rs.failed = 1;
	fflush(out);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigprocmask(SIG_UNBLOCK, &block, NULL);
	free(t);
	vm_free(s.vm);
	compile_host_obj_free(&obj);
	return s.rs.failed ? 1 : s.rs.status & 0xff;
}
