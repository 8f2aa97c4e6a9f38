/* kprobe:, kretprobe: attached through libbpf by name (MODULE:FUNCTION
 * in a module) and offset, or to every function of tracefs's list a
 * glob matches, each with a cookie naming it for func and probe
 * (providers/kprobe.c reads them). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "kattach_unit.h"
#include "tracepoint.h"

/* name: FUNCTION, or MODULE:FUNCTION, as the kernel looks it up */
static int attach_fn(struct kattach *l, struct bpf_program *p, const char *name, uint64_t off,
		     bool ret, uint64_t cookie, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_kprobe_opts, ko, .offset = (size_t)off, .retprobe = ret,
		    .bpf_cookie = cookie);
	struct bpf_link *k = bpf_program__attach_kprobe_opts(p, name, &ko);
	if (!k) {
		snprintf(err, errlen, "cannot attach to kernel function %s: %s", name,
			 strerror(errno));
		return -1;
	}
	return kattach_add_link(l, k, err, errlen);
}

static int attach(struct kattach *l, struct bpf_program *p, const struct host_prog *hp,
		  int pid, char *err, size_t errlen)
{
	(void)pid; /* a kernel function runs for every process */
	/* the unit names the section (kprobe.c) */
	bool ret = !strncmp(hp->section, "kretprobe/", strlen("kretprobe/"));
	const char *prov = ret ? "kretprobe" : "kprobe";
	const char *fn = hp->site.func, *mod = hp->site.module;
	char name[512];
	if (!strpbrk(fn, "*?[") && !(mod && strpbrk(mod, "*?["))) {
		snprintf(name, sizeof(name), "%s%s%s", mod ? mod : "", mod ? ":" : "", fn);
		return attach_fn(l, p, name, hp->site.offset, ret, 0, err, errlen);
	}
	struct arena a;
	struct kfunc *fs;
	size_t n;
	arena_init(&a);
	int e = tracefs_functions(&a, fn, mod, &fs, &n), rc = 0;
	if (e) {
		snprintf(err, errlen, "cannot list the kernel's functions: %s",
			 e == -ENODEV ? "tracefs is not mounted" : strerror(-e));
		rc = -1;
	} else if (!n) {
		snprintf(err, errlen, "no kernel function matches %s%s%s", mod ? mod : "",
			 mod ? ":" : "", fn);
		rc = -1;
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char probe[600];
		uint64_t cookie;
		if (ret && kretprobe_banned(fs[i].name))
			continue; /* a glob passes over them, as bpftrace's does */
		snprintf(name, sizeof(name), "%s%s%s", fs[i].module ? fs[i].module : "",
			 fs[i].module ? ":" : "", fs[i].name);
		snprintf(probe, sizeof(probe), "%s:%s", prov, mod ? name : fs[i].name);
		rc = kattach_sym_entry(l, fs[i].name, probe, &cookie, err, errlen);
		if (rc == 0)
			rc = attach_fn(l, p, name, 0, ret, cookie, err, errlen);
	}
	arena_free(&a);
	return rc;
}

static const struct kattach_unit kprobe = { ATTACH_KPROBE, attach, NULL };
const struct kattach_unit *const kprobe_attachers[] = { &kprobe, NULL };
