/* Watchpoints (kattach.h): a watchpoint program on a hardware
 * breakpoint, a perf event of the watched process, or one per CPU for a
 * kernel address. Kept apart from the other links: unwatch() removes
 * them by address. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "kattach_priv.h"

static int add_watch(struct kattach *l, struct bpf_link *k, int prog, uint64_t addr)
{
	if (l->nwatches == l->capwatches) {
		int cap = l->capwatches ? 2 * l->capwatches : 8;
		struct host_watch *v = realloc(l->watches, (size_t)cap * sizeof(*v));
		if (!v) {
			bpf_link__destroy(k);
			return -ENOMEM;
		}
		l->watches = v;
		l->capwatches = cap;
	}
	l->watches[l->nwatches++] = (struct host_watch){ k, addr, prog };
	return 0;
}

/* One breakpoint event: on task pid (that thread alone, as bpftrace
 * watches), or on cpu for pid -1. 0, or -errno. */
static int open_one(struct kattach *l, struct bpf_program *p, const struct host_prog *hp,
		    int prog, uint64_t addr, int pid, int cpu)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(a),
		.bp_type = hp->at.watch.type,
		.bp_addr = addr,
		.bp_len = hp->at.watch.len,
		.sample_period = 1, /* every access */
		.wakeup_events = 1,
	};
	int fd = (int)syscall(SYS_perf_event_open, &a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct bpf_link *k = bpf_program__attach_perf_event(p, fd);
	if (!k) {
		int e = -errno;
		close(fd);
		return e;
	}
	return add_watch(l, k, prog, addr);
}

/* Program p (prog of the object) on its breakpoint at addr. 0, or
 * -errno (ENOSPC: no debug register left). */
static int watch_at(struct kattach *l, struct bpf_program *p, int prog, uint64_t addr)
{
	const struct host_prog *hp = &l->obj->progs[prog];
	if (hp->at.watch.pid > 0)
		return open_one(l, p, hp, prog, addr, hp->at.watch.pid, -1);
	/* a kernel address: every CPU (an offline one has nothing to watch) */
	int opened = 0, rc = -ENODEV;
	for (int cpu = 0; cpu < l->ncpu; cpu++) {
		int e = open_one(l, p, hp, prog, addr, -1, cpu);
		if (e == 0)
			opened++;
		else if (e != -ENODEV)
			return e;
	}
	return opened ? 0 : rc;
}

int kattach_attach_watch(struct kattach *l, struct bpf_program *p, char *err,
			   size_t errlen)
{
	const struct host_prog *hp = kattach_prog(l->obj, bpf_program__name(p));
	if (!hp) {
		snprintf(err, errlen, "no watchpoint for program %s", bpf_program__name(p));
		return -1;
	}
	if (hp->at.watch.deferred)
		return 0; /* set at the addresses its setup probe hands over */
	int e = watch_at(l, p, (int)(hp - l->obj->progs), hp->at.watch.addr);
	if (e) {
		snprintf(err, errlen, "cannot watch %u bytes at 0x%llx: %s%s", hp->at.watch.len,
			 (unsigned long long)hp->at.watch.addr, strerror(-e),
			 e == -ENOSPC ? " (every debug register is taken)" : "");
		return -1;
	}
	l->nwatch_probes++;
	return 0;
}

int kattach_watch(struct kattach *l, int prog, uint64_t addr)
{
	if (prog < 0 || prog >= l->obj->nprogs || l->obj->progs[prog].attach != ATTACH_WATCHPOINT ||
	    !l->obj->progs[prog].at.watch.deferred)
		return -EINVAL;
	if (!l->wp_last) {
		l->wp_last = calloc((size_t)l->obj->nprogs, sizeof(*l->wp_last));
		if (!l->wp_last)
			return -ENOMEM;
	}
	/* the address it watches already: as bpftrace, once per probe
	 * (another probe may watch the same address) */
	if (l->wp_last[prog].set && l->wp_last[prog].addr == addr)
		return 0;
	struct bpf_program *p = bpf_object__find_program_by_name(l->bo,
								 l->obj->progs[prog].func);
	int e = p ? watch_at(l, p, prog, addr) : -ENOENT;
	if (e == 0)
		l->wp_last[prog] = (struct host_wp_last){ addr, true };
	return e;
}

void kattach_unwatch(struct kattach *l, uint64_t addr)
{
	int n = 0;
	for (int i = 0; i < l->nwatches; i++) {
		if (l->watches[i].addr == addr)
			bpf_link__destroy(l->watches[i].k);
		else
			l->watches[n++] = l->watches[i];
	}
	l->nwatches = n;
}

void kattach_detach_watches(struct kattach *l)
{
	while (l->nwatches > 0)
		bpf_link__destroy(l->watches[--l->nwatches].k);
}
