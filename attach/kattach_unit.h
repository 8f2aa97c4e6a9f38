/* The kernel side's interface to the units' attachers
 * (providers/NAME_attach.c, registered in providers/units.def): each
 * attaches the programs of one attach kind, and may call what is below.
 * Built into libgpux-host.so with libbpf. */
#ifndef GPUX_KATTACH_UNIT_H
#define GPUX_KATTACH_UNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host_obj.h"

struct kattach;
struct bpf_link;
struct bpf_program;

struct kattach_unit {
	enum attach_kind kind; /* the programs it attaches (host_prog.attach) */
	/* Attaches program p (hp its row of the object; pid > 0: that
	 * process only). 0, or -1 saying why in err. */
	int (*attach)(struct kattach *l, struct bpf_program *p, const struct host_prog *hp,
		      int pid, char *err, size_t errlen);
	/* Whether the kernel runs the programs on one site of hp's newest
	 * first: those are attached last to first, so that they run in the
	 * order written as bpftrace's do. NULL: in the order attached. */
	bool (*newest_first)(const struct host_prog *hp);
};

/* newest_first for the units whose every site runs newest first (a
 * uprobe's). */
bool kattach_always_newest(const struct host_prog *hp);

/* The attacher of programs of kind, or NULL (providers/registry_attach.c). */
const struct kattach_unit *kattach_unit_of(enum attach_kind kind);

/* Keeps k to destroy at detach. 0, or -1 with err set ("out of memory")
 * and k destroyed. */
int kattach_add_link(struct kattach *l, struct bpf_link *k, char *err, size_t errlen);
/* k is an iterator's link, kept as kattach_add_link keeps it: the run
 * reads it once the probes are attached (kattach_iter.c), or, pinned
 * at pin, ends there, saying so. */
int kattach_add_iterator(struct kattach *l, struct bpf_link *k, char *err, size_t errlen,
			 const char *pin);
/* One more link of a probe that has one already (a perf event's CPUs
 * past the first): `Attaching N probes` counts probes. */
void kattach_same_probe(struct kattach *l);
/* The CPUs there are (possible ones: an offline CPU opens nothing). */
int kattach_ncpu(const struct kattach *l);
/* func and probe of one attachment of a program whose site is found
 * only when attaching (attach.by_cookie): an entry of HOST_SYMS_MAP,
 * func the function, probe the probe as bpftrace names it; *cookie is
 * the attachment's BPF cookie. 0, or -1 saying why. */
int kattach_sym_entry(struct kattach *l, const char *func, const char *probe, uint64_t *cookie,
		      char *err, size_t errlen);
/* An ADDRESS watchpoint program on its breakpoints; a FUNC+argN one
 * waits for its addresses (kattach_watch.c). 0, or -1 saying why. */
int kattach_attach_watch(struct kattach *l, struct bpf_program *p, char *err, size_t errlen);

#endif
