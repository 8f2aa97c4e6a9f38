/* The libbpf linked into this module, for the front end's kernel types
 * (symbols/kernel_btf.h) where libbpf.so.1 itself is not installed: the
 * module carries libbpf (codegen/host.cmake). */
#include <bpf/btf.h>

#include "kernel_btf.h"

const struct kernel_btf_lib *host_btf_lib(void);

const struct kernel_btf_lib *host_btf_lib(void)
{
	static const struct kernel_btf_lib lib = {
		.load_vmlinux = btf__load_vmlinux_btf,
		.parse_raw = btf__parse_raw,
		.free = btf__free,
		.find_by_name_kind = btf__find_by_name_kind,
		.type_by_id = btf__type_by_id,
		.name_by_offset = btf__name_by_offset,
		.type_cnt = btf__type_cnt,
	};
	return &lib;
}
