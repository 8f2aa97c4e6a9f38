// SPDX-License-Identifier: GPL-2.0
/* The simulator's model and workload generators, built from sim/ as
 * they are (libc/ stands in for the C library), so the module and
 * gpux --sim run one model. Trace workloads read files: gpux --sim's. */
#include <stdlib.h>
#include <string.h>

/* names the kernel's headers take */
#define set_bit sim_set_bit
/* the kernel links no libgcc */
#define __builtin_popcountll(x) hweight64(x)

#include "uvm.c"
#include "thrashing.c"
#include "workload.c"

int trace_open(struct workload *w, const char *path, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: trace workloads run in gpux --sim only", path);
	return -1;
}

int trace_next(struct workload *w, struct wl_event *ev)
{
	return -1;
}

void trace_close(struct workload *w)
{
}
