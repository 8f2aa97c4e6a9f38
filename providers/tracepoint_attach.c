/* tracepoint: attached through libbpf by category and name, in the
 * order written (providers/tracepoint.c reads them). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "kattach_unit.h"

/* "tracepoint/CATEGORY/NAME" */
static int attach(struct kattach *l, struct bpf_program *p, const struct host_prog *hp,
		  int pid, char *err, size_t errlen)
{
	(void)hp, (void)pid;
	const char *sec = bpf_program__section_name(p);
	char cat[256];
	const char *cs = strchr(sec, '/'), *name = cs ? strchr(cs + 1, '/') : NULL;
	if (!name || (size_t)(name - cs - 1) >= sizeof(cat)) {
		snprintf(err, errlen, "cannot read the tracepoint of section %s", sec);
		return -1;
	}
	snprintf(cat, sizeof(cat), "%.*s", (int)(name - cs - 1), cs + 1);
	struct bpf_link *k = bpf_program__attach_tracepoint(p, cat, name + 1);
	if (!k) {
		snprintf(err, errlen, "cannot attach to tracepoint %s:%s: %s", cat, name + 1,
			 strerror(errno));
		return -1;
	}
	return kattach_add_link(l, k, err, errlen);
}

static const struct kattach_unit tracepoint = { ATTACH_TRACEPOINT, attach, NULL };
const struct kattach_unit *const tracepoint_attachers[] = { &tracepoint, NULL };
