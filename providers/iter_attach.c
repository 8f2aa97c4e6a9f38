/* iter: a link to the kernel's iterator, run once the run starts by
 * reading it (attach/kattach_iter.c); providers/iter.c reads them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "kattach_unit.h"

static int attach(struct kattach *l, struct bpf_program *p, const struct host_prog *hp,
		  int pid, char *err, size_t errlen)
{
	(void)hp, (void)pid;
	struct bpf_link *k = bpf_program__attach_iter(p, NULL);
	if (!k) {
		snprintf(err, errlen, "cannot make the iterator %s: %s",
			 bpf_program__section_name(p), strerror(errno));
		return -1;
	}
	return kattach_add_iterator(l, k, err, errlen);
}

static const struct kattach_unit iter = { ATTACH_ITER, attach, NULL };
const struct kattach_unit *const iter_attachers[] = { &iter, NULL };
