/* profile:, software:, hardware: a perf_event program on one sampling
 * event per CPU, whatever runs there, as bpftrace attaches them
 * (providers/profile.c and perf_events.c read them). */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "kattach_unit.h"

static int attach(struct kattach *l, struct bpf_program *p, const struct host_prog *hp,
		  int pid, char *err, size_t errlen)
{
	(void)pid;
	struct perf_event_attr a = {
		.type = hp->at.perf.type,
		.size = sizeof(a),
		.config = hp->at.perf.config,
		.freq = hp->at.perf.freq != 0,
	};
	if (hp->at.perf.freq)
		a.sample_freq = hp->at.perf.freq;
	else
		a.sample_period = hp->at.perf.period;
	int opened = 0, why = ENODEV;
	for (int cpu = 0; cpu < kattach_ncpu(l); cpu++) {
		int fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno != ENODEV) /* an offline CPU has nothing to sample */
				why = errno;
			continue;
		}
		struct bpf_link *k = bpf_program__attach_perf_event(p, fd);
		if (!k) {
			why = errno;
			close(fd);
			continue;
		}
		if (kattach_add_link(l, k, err, errlen))
			return -1;
		if (opened++)
			kattach_same_probe(l);
	}
	if (!opened) {
		if (why == ENOENT || why == EOPNOTSUPP)
			snprintf(err, errlen, "no CPU here counts this event (a virtual machine "
				 "often has no hardware counters)");
		else
			snprintf(err, errlen, "cannot open a perf event on any CPU: %s",
				 strerror(why));
		return -1;
	}
	return 0;
}

/* The kernel keeps a software event's (a fault, a context switch)
 * handlers newest first; the clocks (profile:) are timers of their own,
 * and hardware counters overflow each on its own. */
static bool newest_first(const struct host_prog *hp)
{
	return hp->at.perf.type == PERF_TYPE_SOFTWARE && hp->at.perf.config != PERF_COUNT_SW_CPU_CLOCK &&
	       hp->at.perf.config != PERF_COUNT_SW_TASK_CLOCK;
}

static const struct kattach_unit perf = { ATTACH_PERF_EVENT, attach, newest_first };
const struct kattach_unit *const perf_events_attachers[] = { &perf, NULL };
