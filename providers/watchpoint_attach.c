/* watchpoint:, asyncwatchpoint: a breakpoint perf event per watched
 * address, set by attach/kattach_watch.c (now for an ADDRESS, at the
 * addresses its setup uprobe hands over for FUNC+argN). */
#include "kattach_unit.h"

static int attach(struct kattach *l, struct bpf_program *p, const struct host_prog *hp,
		  int pid, char *err, size_t errlen)
{
	(void)hp, (void)pid;
	return kattach_attach_watch(l, p, err, errlen);
}

static const struct kattach_unit watchpoint = { ATTACH_WATCHPOINT, attach, NULL };
const struct kattach_unit *const watchpoint_attachers[] = { &watchpoint, NULL };
