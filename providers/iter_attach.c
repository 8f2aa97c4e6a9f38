/* iter: a link to the kernel's iterator, run once the run starts by
 * reading it (attach/kattach_iter.c), or pinned to a file for its
 * readers; providers/iter.c reads them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "kattach_unit.h"

static int attach(struct kattach *l, struct bpf_program *p, const struct host_prog *hp,
		  int pid, char *err, size_t errlen)
{
	(void)pid;
	struct bpf_link *k = bpf_program__attach_iter(p, NULL);
	if (!k) {
		snprintf(err, errlen, "cannot make the iterator %s: %s",
			 bpf_program__section_name(p), strerror(errno));
		return -1;
	}
	if (!hp->at.iter.pin)
		return kattach_add_iterator(l, k, err, errlen, NULL);
	/* pinned, it outlives gpux: its readers run it */
	if (bpf_link__pin(k, hp->at.iter.pin)) {
		int e = errno;
		snprintf(err, errlen, "cannot pin the iterator to %s: %s%s", hp->at.iter.pin,
			 strerror(e), e == EPERM || e == EINVAL
			 ? " (is a BPF file system mounted there? mount -t bpf bpf /sys/fs/bpf)" : "");
		bpf_link__destroy(k);
		return -1;
	}
	bpf_link__disconnect(k);
	return kattach_add_iterator(l, k, err, errlen, hp->at.iter.pin);
}

static const struct kattach_unit iter = { ATTACH_ITER, attach, NULL };
const struct kattach_unit *const iter_attachers[] = { &iter, NULL };
