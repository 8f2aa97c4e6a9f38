/* iter: a kernel iterator, run once over every object of its kind (the
 * tasks, their open files, their memory maps) when the probes are
 * attached; the run ends when it has visited them all. ctx points to
 * the kernel's struct bpf_iter__NAME; attached and read by
 * providers/iter_attach.c. */
#include <string.h>

#include "provider.h"

extern const struct provider_unit iter_unit;

static const struct provider providers[] = {
	{ &iter_unit, "iter", "it", PLACE_HOST, RUNNER_KERNEL, SYN_EVENT,
	  "once for every object of a kind the kernel iterates over (tasks, their files "
	  "and memory maps), then the run ends: iter:KIND", false, ATTACH_ITER, false },
};

static const struct field no_fields[] = { FIELDS_END };

/* ctx_object: the object's offset in struct bpf_iter__NAME (meta first,
 * then the kernel's arguments, 8 bytes each) */
#define ITER_ROW(ev, doc, off) \
	{ &providers[0], ev, PLACE_HOST, FILTER_NONE, no_fields, 0, 0, doc, 0, 0, 0, 0, \
	  "struct bpf_iter__" ev, off }

static const struct event events[] = {
	ITER_ROW("task", "every task (thread): ctx->task (struct task_struct *)", 8),
	ITER_ROW("task_file", "every open file of every task: ctx->task, ctx->fd, ctx->file "
		 "(struct file *)", 24),
	ITER_ROW("task_vma", "every memory map of every task: ctx->task, ctx->vma "
		 "(struct vm_area_struct *)", 16),
};

/* iter:KIND[:PIN], one kind (an iterator is run alone); PIN, a file
 * under /sys/fs/bpf or an absolute path, keeps the iterator there for
 * its readers, as bpftrace's does */
static int resolve(struct spec *s)
{
	struct attach *at = &s->an->u.attach;
	if (s->nparts == 3 && !*s->parts[2]) {
		spec_error(s, "iter:%s: the file to pin the iterator to is empty", s->parts[1]);
		return -1;
	}
	if (s->nparts == 3 && (strstr(s->parts[2], "..") || s->parts[2][strlen(s->parts[2]) - 1] == '/')) {
		spec_error(s, "iter:%s: '%s' does not name a file", s->parts[1], s->parts[2]);
		return -1;
	}
	int n = s->nparts;
	s->nparts = n == 3 ? 2 : n; /* the pin is no event filter */
	int rc = spec_resolve_events(s);
	s->nparts = n;
	if (rc)
		return -1;
	if (at->nevents > 1) {
		spec_error(s, "iter:%s names %d iterators: an iter probe runs one", s->parts[1],
			   at->nevents);
		return -1;
	}
	return 0;
}

static const char *section(struct arena *a, const struct attach *at, const struct event *e,
			   const char *site)
{
	(void)at, (void)site;
	return arena_printf(a, "iter/%s", e->name);
}

const struct provider_unit iter_unit = {
	.providers = providers,
	.nproviders = sizeof(providers) / sizeof(providers[0]),
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.resolve = resolve,
	.usage = NULL,
	.section = section,
};
