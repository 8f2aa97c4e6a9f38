/* The running kernel's types, from its BTF (/sys/kernel/btf/vmlinux, or
 * GPUX_BTF_DIR/vmlinux where that is set), read through libbpf loaded on
 * first use (dlopen; GPUX_LIBBPF names another file), else through the
 * libbpf a caller provides: gpux runs where libbpf.so.1 is missing. The
 * types are linux/btf.h's records, as the kernel writes them. */
#ifndef GPUX_KERNEL_BTF_H
#define GPUX_KERNEL_BTF_H

#include <stdbool.h>
#include <stddef.h>

#include <linux/btf.h>

struct kernel_btf;
struct btf; /* libbpf's */

/* The libbpf functions read through, as libbpf declares them. */
struct kernel_btf_lib {
	struct btf *(*load_vmlinux)(void);
	struct btf *(*parse_raw)(const char *path);
	void (*free)(struct btf *btf);
	int (*find_by_name_kind)(const struct btf *btf, const char *name, unsigned kind);
	const struct btf_type *(*type_by_id)(const struct btf *btf, unsigned id);
	const char *(*name_by_offset)(const struct btf *btf, unsigned off);
	unsigned (*type_cnt)(const struct btf *btf);
};

/* Where libbpf.so.1 cannot be loaded: read through lib's (a libbpf
 * linked into something else: gpux's host module). */
void kernel_btf_provide(const struct kernel_btf_lib *lib);

/* Whether there is BTF to read: the file is there and readable. Cheap:
 * nothing is parsed. */
bool kernel_btf_present(void);
/* 0, or -ENOENT (no BTF), -ENOSYS (no libbpf here), -errno (BTF that
 * cannot be read); err says why. */
int kernel_btf_open(struct kernel_btf **out, char *err, size_t errlen);
void kernel_btf_close(struct kernel_btf *k);
/* The id of the type called name of kind (BTF_KIND_STRUCT...), or 0. */
unsigned kernel_btf_find(const struct kernel_btf *k, const char *name, unsigned kind);
/* Type id (0 is void: NULL), or NULL where there is none. */
const struct btf_type *kernel_btf_type(const struct kernel_btf *k, unsigned id);
/* Number of type ids, void's included. */
unsigned kernel_btf_count(const struct kernel_btf *k);
const char *kernel_btf_name(const struct kernel_btf *k, unsigned name_off);

#endif
