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

#include "compile.h"
#include "output.h"
#include "records.h"
#include "spawn.h"
#include "vm_exec.h"

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
	struct vm_exec x;
	struct rec_state rs;
};

static int vm_print(void *ctx, int map, uint64_t top, uint64_t div)
{
	return vm_exec_print(&((struct session *)ctx)->x, map, top, div);
}

static void vm_clear(void *ctx, int map)
{
	vm_exec_clear(&((struct session *)ctx)->x, map);
}

static void vm_zero(void *ctx, int map)
{
	vm_exec_zero(&((struct session *)ctx)->x, map);
}

/* Waits for the earliest timer or a signal; signals are blocked except
 * inside ppoll, so none is lost between the check and the wait. */
static void main_loop(struct session *s, const sigset_t *open, struct diags *diags)
{
	while (!s->rs.exited && !interrupted && !s->rs.failed) {
		int64_t wait = vm_exec_wait_ns(&s->x);
		struct timespec ts, *tsp = NULL;
		if (wait >= 0) {
			ts = (struct timespec){ (time_t)(wait / 1000000000), (long)(wait % 1000000000) };
			tsp = &ts;
		}
		if (ppoll(NULL, 0, tsp, open) < 0 && errno == EINTR)
			continue;
		vm_exec_due(&s->x, diags);
	}
}

int run_program(struct program *prog, const struct options *o, FILE *out,
		struct diags *diags)
{
	struct host_obj obj;
	if (compile_host_obj(prog, o, &obj, diags))
		return 1;
	struct session s = { .rs = { .out = out, .json = o->format == FMT_JSON, .obj = &obj } };
	s.rs.maps = (struct rec_maps){ vm_print, vm_clear, vm_zero, &s };
	if (vm_exec_open(&s.x, &obj, &s.rs, diags)) {
		vm_exec_close(&s.x);
		compile_host_obj_free(&obj);
		return 1;
	}
	struct spawn_signals old;
	sigset_t open;
	spawn_signals_catch(&old, &open, on_signal);
	interrupted = 0;
	if (!o->quiet)
		out_attached(out, s.rs.json, obj.nprogs);
	if (vm_exec_section(&s.x, "gpux/begin", diags) == 0)
		main_loop(&s, &open, diags);
	/* END sees its own records, but not a second exit() */
	s.rs.exited = false;
	vm_exec_section(&s.x, "gpux/end", diags);
	if (out_all_maps(out, s.rs.json, s.x.vm, &obj))
		s.rs.failed = 1;
	fflush(out);
	spawn_signals_restore(&old);
	vm_exec_close(&s.x);
	compile_host_obj_free(&obj);
	return s.rs.failed ? 1 : s.rs.status & 0xff;
}
