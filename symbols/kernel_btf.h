/* The running kernel's types, from its BTF (/sys/kernel/btf/vmlinux, or
 * GPUX_BTF_DIR/vmlinux where that is set), read through libbpf loaded on first use
 * (dlopen): gpux runs where libbpf.so.1 is missing, without them. The
 * types are linux/btf.h's records, as the kernel writes them. */
#ifndef GPUX_KERNEL_BTF_H
#define GPUX_KERNEL_BTF_H

#include <stdbool.h>
#include <stddef.h>

#include <linux/btf.h>

struct kernel_btf;

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
