/* Driver policies in the kernel (kattach.h): the host object's
 * struct_ops programs loaded by libbpf against the driver module's BTF,
 * each struct_ops map registered with the driver through a link that
 * detaching destroys. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kattach_priv.h"

/* libbpf finds a struct_ops type, and the kernel's program and map
 * types for it, in module BTF only from 1.4 on; before, it looks in
 * vmlinux alone and fails on gpu_ext's structs. */
#define DRIVER_LIBBPF_MAJOR 1
#define DRIVER_LIBBPF_MINOR 4

int kattach_driver_check(char *err, size_t errlen)
{
	unsigned major = libbpf_major_version(), minor = libbpf_minor_version();
	if (major > DRIVER_LIBBPF_MAJOR ||
	    (major == DRIVER_LIBBPF_MAJOR && minor >= DRIVER_LIBBPF_MINOR))
		return 0;
	snprintf(err, errlen, "attaching needs libbpf %d.%d or newer, which loads struct_ops "
		 "of a kernel module; libgpux-host.so has libbpf %u.%u", DRIVER_LIBBPF_MAJOR,
		 DRIVER_LIBBPF_MINOR, major, minor);
	return -1;
}

/* The kprobes that capture what hooks read (HOST_CAPTURE_PROG), before
 * any hook can run. */
static int attach_captures(struct kattach *l, char *err, size_t errlen)
{
	struct bpf_program *p;
	bpf_object__for_each_program(p, l->bo) {
		const char *sec = bpf_program__section_name(p);
		const struct host_prog *hp = kattach_prog(l->obj, bpf_program__name(p));
		if (!bpf_program__autoload(p) || !hp || hp->attach != ATTACH_KPROBE)
			continue;
		struct bpf_link *k = bpf_program__attach(p);
		if (!k) {
			snprintf(err, errlen, "cannot attach a kprobe to the driver's %s: %s", sec + 7,
				 strerror(errno));
			return -1;
		}
		if (kattach_add_link(l, k, err, errlen))
			return -1;
	}
	return 0;
}

int kattach_driver_attach(struct kattach *l, char *err, size_t errlen)
{
	if (attach_captures(l, err, errlen))
		return -1;
	struct bpf_map *m;
	bpf_object__for_each_map(m, l->bo) {
		if (bpf_map__type(m) != BPF_MAP_TYPE_STRUCT_OPS)
			continue;
		/* the variable is gpux_STRUCT (host_probe.c) */
		const char *name = bpf_map__name(m);
		if (!strncmp(name, "gpux_", 5))
			name += 5;
		struct bpf_link *k = bpf_map__attach_struct_ops(m);
		if (!k) {
			int e = errno;
			snprintf(err, errlen, "cannot register struct %s with the driver: %s%s", name,
				 strerror(e), e == EEXIST ? " (it takes one policy at a time, "
				 "and another is attached)" : "");
			return -1;
		}
		if (kattach_add_link(l, k, err, errlen))
			return -1;
	}
	return 0;
}

int kattach_open_driver(const struct host_obj *obj, const struct kattach *share,
			  kattach_rec_fn rec, void *arg, struct kattach **out,
			  char *err, size_t errlen)
{
	if (kattach_driver_check(err, errlen))
		return -1;
	return kattach_start(obj, HOST_RUN_DRIVER, 0, share, rec, arg, out, err, errlen);
}
