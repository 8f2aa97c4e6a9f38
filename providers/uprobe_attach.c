/* uprobe:, uretprobe: attached through libbpf at a function (found here
 * at its default version), a byte into it or an address, or at every
 * function a glob matches (providers/uprobe.c reads them). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "host_path.h"
#include "kattach_unit.h"

/* At function sym, or (sym NULL) at file offset off, named name. A
 * function is found here, at its default version, and attached by its
 * offset: libbpf refuses a name that more than one version defines
 * (pthread_create@@GLIBC_2.34 and @GLIBC_2.2.5 in libc). */
static int attach_sym(struct kattach *l, struct bpf_program *p, const char *path,
		      const char *sym, uint64_t off, const char *name, bool ret, int pid,
		      uint64_t cookie, char *err, size_t errlen)
{
	struct host_usym us;
	char why[256];
	if (sym && !host_usym_resolve(path, sym, 0, ret, &us, why, sizeof(why))) {
		sym = NULL;
		off = us.file_off;
	}
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = sym, .retprobe = ret, .bpf_cookie = cookie);
	struct bpf_link *k = bpf_program__attach_uprobe_opts(p, pid > 0 ? pid : -1, path,
							     (size_t)off, &uo);
	if (!k) {
		snprintf(err, errlen, "cannot attach to %s in %s: %s", name, path, strerror(errno));
		return -1;
	}
	return kattach_add_link(l, k, err, errlen);
}

/* HOST_SYMS_MAP's entry for one function: the probe as bpftrace names
 * it, the target as written when it is a path, else the library found. */
static int entry(struct kattach *l, const char *sec, const char *target, const char *path,
		 const char *func, const char *sym, uint64_t *cookie, char *err, size_t errlen)
{
	char probe[2 * PATH_MAX];
	snprintf(probe, sizeof(probe), "%.*s:%s:%s", (int)(strchr(sec, '/') - sec), sec,
		 strchr(target, '/') ? target : path, sym);
	return kattach_sym_entry(l, func, probe, cookie, err, errlen);
}

/* "uprobe/T:S" or "uretprobe/T:S": T may hold ':' (the last one splits).
 * A glob S attaches the program to every function of T it matches; an
 * offset or address (hp) attaches at that byte of the file. */
static int attach(struct kattach *l, struct bpf_program *p, const struct host_prog *hp,
		  int pid, char *err, size_t errlen)
{
	const char *sec = bpf_program__section_name(p);
	bool ret = hp->attach == ATTACH_URETPROBE;
	const char *ts = strchr(sec, '/') + 1, *colon = strrchr(ts, ':');
	char target[PATH_MAX], path[PATH_MAX];
	if (!colon || (size_t)(colon - ts) >= sizeof(target)) {
		snprintf(err, errlen, "cannot read the attach point of section %s", sec);
		return -1;
	}
	snprintf(target, sizeof(target), "%.*s", (int)(colon - ts), ts);
	if (host_resolve_target(target, pid, path, sizeof(path))) {
		snprintf(err, errlen, "cannot find '%.256s' (no such file, executable in "
			 "PATH, or library)", target);
		errno = ENOENT;
		return -1;
	}
	const char *sym = colon + 1;
	if (hp->site.addr || hp->site.offset) {
		struct host_usym us;
		uint64_t cookie;
		if (host_usym_resolve(path, hp->site.func, hp->site.offset, ret, &us, err, errlen))
			return -1;
		return entry(l, sec, target, path, us.name, hp->site.name, &cookie, err, errlen)
			       ? -1
			       : attach_sym(l, p, path, NULL, us.file_off, hp->site.name, ret, pid,
					    cookie, err, errlen);
	}
	if (hp->site.func)
		sym = hp->site.func; /* FUNC+0 */
	if (!strpbrk(sym, "*?[")) {
		uint64_t cookie;
		return entry(l, sec, target, path, sym, sym, &cookie, err, errlen) ? -1
		       : attach_sym(l, p, path, sym, 0, sym, ret, pid, cookie, err, errlen);
	}
	struct host_syms syms;
	if (host_glob_symbols(path, sym, &syms)) {
		snprintf(err, errlen, "cannot read the symbols of %s", path);
		return -1;
	}
	int rc = syms.n ? 0 : -1;
	if (!syms.n)
		snprintf(err, errlen, "no function of %s matches %s", path, sym);
	for (int i = 0; rc == 0 && i < syms.n; i++) {
		uint64_t cookie;
		rc = entry(l, sec, target, path, syms.name[i], syms.name[i], &cookie, err,
			       errlen);
		if (rc == 0)
			rc = attach_sym(l, p, path, syms.name[i], 0, syms.name[i], ret, pid,
					cookie, err, errlen);
	}
	host_syms_free(&syms);
	return rc;
}



static const struct kattach_unit uprobe = { ATTACH_UPROBE, attach, kattach_always_newest };
static const struct kattach_unit uretprobe = { ATTACH_URETPROBE, attach, kattach_always_newest };
const struct kattach_unit *const uprobe_attachers[] = { &uprobe, &uretprobe, NULL };
