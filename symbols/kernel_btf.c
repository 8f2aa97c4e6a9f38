/* kernel_btf.h: the kernel's BTF through libbpf, loaded on first use,
 * else through the one a caller provides. Only libbpf's stable entry
 * points are named, so no libbpf header is needed to build this, and a
 * build without libbpf still reads BTF where the library is installed. */
#include "kernel_btf.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct kernel_btf_lib lb;
static bool lb_ok;
static pthread_once_t lb_once = PTHREAD_ONCE_INIT;

static bool complete_lib(const struct kernel_btf_lib *l)
{
	return l->load_vmlinux && l->parse_raw && l->free && l->find_by_name_kind &&
	       l->type_by_id && l->name_by_offset && l->type_cnt;
}

static void lb_load(void)
{
	const char *name = getenv("GPUX_LIBBPF");
	void *h = dlopen(name && *name ? name : "libbpf.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
#define SYM(f, s) *(void **)&lb.f = dlsym(h, s)
	SYM(load_vmlinux, "btf__load_vmlinux_btf");
	SYM(parse_raw, "btf__parse_raw");
	SYM(free, "btf__free");
	SYM(find_by_name_kind, "btf__find_by_name_kind");
	SYM(type_by_id, "btf__type_by_id");
	SYM(name_by_offset, "btf__name_by_offset");
	SYM(type_cnt, "btf__type_cnt");
#undef SYM
	lb_ok = complete_lib(&lb);
	/* the library stays loaded: its functions are called until exit */
}

void kernel_btf_provide(const struct kernel_btf_lib *lib)
{
	pthread_once(&lb_once, lb_load);
	if (!lb_ok && lib && complete_lib(lib)) {
		lb = *lib;
		lb_ok = true;
	}
}

struct kernel_btf {
	struct btf *btf;
};

/* GPUX_BTF_DIR/vmlinux where set (as driver policies bind to it), else
 * the running kernel's */
static const char *btf_path(char *buf, size_t len)
{
	const char *d = getenv("GPUX_BTF_DIR");
	if (!d || !*d)
		return "/sys/kernel/btf/vmlinux";
	snprintf(buf, len, "%s/vmlinux", d);
	return buf;
}

bool kernel_btf_present(void)
{
	char buf[4096];
	return access(btf_path(buf, sizeof(buf)), R_OK) == 0;
}

int kernel_btf_open(struct kernel_btf **out, char *err, size_t errlen)
{
	*out = NULL;
	char buf[4096];
	const char *path = btf_path(buf, sizeof(buf));
	if (access(path, R_OK) < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot read the kernel's types (BTF) at %s: %s", path,
			 strerror(e));
		return -e;
	}
	pthread_once(&lb_once, lb_load);
	if (!lb_ok) {
		snprintf(err, errlen, "the kernel's types (BTF) are read with libbpf.so.1, "
			 "which cannot be loaded here");
		return -ENOSYS;
	}
	struct kernel_btf *k = calloc(1, sizeof(*k));
	if (!k) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	errno = 0;
	k->btf = path == buf ? lb.parse_raw(path) : lb.load_vmlinux();
	if (!k->btf) {
		int e = errno ? errno : EINVAL;
		snprintf(err, errlen, "cannot read the kernel's types (BTF) at %s: %s", path,
			 strerror(e));
		free(k);
		return -e;
	}
	*out = k;
	return 0;
}

void kernel_btf_close(struct kernel_btf *k)
{
	if (!k)
		return;
	lb.free(k->btf);
	free(k);
}

unsigned kernel_btf_find(const struct kernel_btf *k, const char *name, unsigned kind)
{
	int id = lb.find_by_name_kind(k->btf, name, kind);
	return id > 0 ? (unsigned)id : 0;
}

const struct btf_type *kernel_btf_type(const struct kernel_btf *k, unsigned id)
{
	return id && id < lb.type_cnt(k->btf) ? lb.type_by_id(k->btf, id) : NULL;
}

unsigned kernel_btf_count(const struct kernel_btf *k)
{
	return lb.type_cnt(k->btf);
}

const char *kernel_btf_name(const struct kernel_btf *k, unsigned name_off)
{
	const char *s = lb.name_by_offset(k->btf, name_off);
	return s ? s : "";
}
