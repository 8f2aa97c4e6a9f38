/* usdt: each site a uprobe at its file offset (providers/usdt.c reads
 * them; codegen/host_usdt_lower.c makes one program per site). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "kattach_unit.h"

/* One usdt site (hp): a uprobe at its file offset, the kernel counting
 * its semaphore (ref_ctr_offset) while it is attached so the program's
 * own checks of it see a tracer. */
static int attach(struct kattach *l, struct bpf_program *p, const struct host_prog *hp,
		  int pid, char *err, size_t errlen)
{
	if (!hp->at.usdt.path) {
		snprintf(err, errlen, "no usdt site for program %s", bpf_program__name(p));
		return -1;
	}
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .ref_ctr_offset = (size_t)hp->at.usdt.sema);
	struct bpf_link *k = bpf_program__attach_uprobe_opts(p, pid > 0 ? pid : -1, hp->at.usdt.path,
							     (size_t)hp->at.usdt.off, &uo);
	if (!k) {
		snprintf(err, errlen, "cannot attach to %s: %s", hp->at.usdt.path, strerror(errno));
		return -1;
	}
	return kattach_add_link(l, k, err, errlen);
}

static const struct kattach_unit usdt = { ATTACH_USDT, attach, kattach_always_newest };
const struct kattach_unit *const usdt_attachers[] = { &usdt, NULL };
