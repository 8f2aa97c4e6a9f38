/* The VM side of a host object (vm_exec.h). */
#include "vm_exec.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host_sec.h"
#include "output.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One timer per distinct interval section (equal periods share one). */
static int make_timers(struct vm_exec *x)
{
	struct vm *vm = x->vm;
	x->t = calloc((size_t)vm_prog_count(vm) + 1, sizeof(*x->t));
	if (!x->t)
		return -1;
	uint64_t start = now_ns();
	for (int i = 0; i < vm_prog_count(vm); i++) {
		const char *sec = vm_prog_section(vm, i);
		if (strncmp(sec, HOST_SEC_INTERVAL, strlen(HOST_SEC_INTERVAL)))
			continue;
		bool dup = false;
		for (int k = 0; k < x->nt; k++)
			dup |= !strcmp(x->t[k].sec, sec);
		uint64_t period = strtoull(sec + strlen(HOST_SEC_INTERVAL), NULL, 10);
		if (dup || !period)
			continue;
		x->t[x->nt++] = (struct vm_timer){ sec, period, start + period };
	}
	return 0;
}

int vm_exec_open(struct vm_exec *x, const struct host_obj *obj, struct rec_state *rs,
		 struct diags *diags)
{
	char err[256];
	memset(x, 0, sizeof(*x));
	x->rs = rs;
	if (vm_load(obj->elf, obj->size, &x->vm, err, sizeof(err))) {
		diag_error_nospan(diags, "cannot load the host programs: %s", err);
		return -1;
	}
	if (make_timers(x)) {
		diag_error_nospan(diags, "out of memory");
		return -1;
	}
	return 0;
}

void vm_exec_close(struct vm_exec *x)
{
	free(x->t);
	vm_free(x->vm);
	x->t = NULL;
	x->vm = NULL;
}

/* The output is flushed so that a watcher sees each interval's lines as
 * they come. */
int vm_exec_section(struct vm_exec *x, const char *sec, struct diags *diags)
{
	int rc = vm_run(x->vm, sec, NULL, 0, NULL);
	if (rc != VM_ENOPROG && x->ran)
		x->ran(x->ran_arg);
	if (rc && rc != VM_ENOPROG) {
		diag_error_nospan(diags, "%s stopped: %s", sec, vm_last_error(x->vm));
		x->rs->failed = 1;
	}
	vm_ring_drain(x->vm, rec_handle, x->rs);
	fflush(x->rs->out);
	return rc && rc != VM_ENOPROG ? -1 : 0;
}

static int earliest(const struct vm_exec *x)
{
	int first = -1;
	for (int k = 0; k < x->nt; k++)
		if (first < 0 || x->t[k].next < x->t[first].next)
			first = k;
	return first;
}

int64_t vm_exec_wait_ns(const struct vm_exec *x)
{
	int first = earliest(x);
	if (first < 0)
		return -1;
	uint64_t now = now_ns();
	return x->t[first].next > now ? (int64_t)(x->t[first].next - now) : 0;
}

void vm_exec_due(struct vm_exec *x, struct diags *diags)
{
	/* Each due timer runs once: one that fell behind (its period
	 * shorter than its probe takes) skips the periods it missed, as a
	 * kernel timer does, so that the caller gets back to its signals. */
	uint64_t now = now_ns();
	for (int first = earliest(x); first >= 0 && now >= x->t[first].next;
	     first = earliest(x)) {
		x->t[first].next += x->t[first].period;
		if (x->t[first].next <= now)
			x->t[first].next = now + x->t[first].period;
		vm_exec_section(x, x->t[first].sec, diags);
		if (x->rs->exited || x->rs->failed)
			return;
	}
}

static struct vm_map *map_of(struct vm_exec *x, int map)
{
	return vm_map_by_name(x->vm, x->rs->obj->maps[map].sym);
}

void vm_exec_clear(struct vm_exec *x, int map)
{
	struct vm_map *m = map_of(x, map);
	if (m)
		vm_map_clear(x->vm, m);
}

void vm_exec_zero(struct vm_exec *x, int map)
{
	struct vm_map *m = map_of(x, map);
	if (m)
		vm_map_zero(x->vm, m);
}
