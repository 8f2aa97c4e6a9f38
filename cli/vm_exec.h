/* The userspace-VM side of a host object (BEGIN, END, interval): load
 * it, run a section and act on its records, and keep the interval
 * timers. Used by the run loop's backend for the userspace VM
 * (backend_gpux.c), which runs BEGIN, END and interval whatever other
 * backends run beside it. */
#ifndef GPUX_VM_EXEC_H
#define GPUX_VM_EXEC_H

#include <stdint.h>

#include "bpf_vm.h"
#include "diag.h"
#include "host_obj.h"
#include "records.h"

struct vm_timer {
	const char *sec;
	uint64_t period, next; /* ns, CLOCK_MONOTONIC */
};

struct vm_exec {
	struct vm *vm;
	struct rec_state *rs;
	struct vm_timer *t;
	int nt;
	/* After a section ran, before its records are acted on (so that a
	 * print of a map it wrote shows the write): the backend writes
	 * back what it changed in maps others hold. NULL: nothing. */
	void (*ran)(void *arg);
	void *ran_arg;
};

/* Loads obj's gpux/ sections and one timer per distinct interval. 0, or
 * -1 with a diagnostic. */
int vm_exec_open(struct vm_exec *x, const struct host_obj *obj, struct rec_state *rs,
		 struct diags *diags);
void vm_exec_close(struct vm_exec *x);
/* Runs section sec (missing: nothing) and acts on what it wrote. 0, or
 * -1 (rs->failed set, a diagnostic). */
int vm_exec_section(struct vm_exec *x, const char *sec, struct diags *diags);
/* ns until the next interval is due (0: now), or -1 with none. */
int64_t vm_exec_wait_ns(const struct vm_exec *x);
/* Runs the interval sections that are due. */
void vm_exec_due(struct vm_exec *x, struct diags *diags);
void vm_exec_clear(struct vm_exec *x, int map);
void vm_exec_zero(struct vm_exec *x, int map);

#endif
