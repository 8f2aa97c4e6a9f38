/* Host lowering lives in a module (libgpux-host.so, linked with LLVM)
 * that gpux opens only when a program has host or driver probes:
 * loading libLLVM costs ~10 ms, a device one-liner compiles in ~1 ms. */
#ifndef GPUX_HOST_MODULE_H
#define GPUX_HOST_MODULE_H

#include "kattach.h"
#include "host_path.h"
#include "host_usdt.h"
#include "kernel_btf.h"
#include "llvm_host.h"

struct host_api {
	int (*compile)(struct program *, const struct host_opts *,
		       struct host_obj *, struct diags *);
	void (*print_ir)(const struct host_obj *, FILE *);
	int (*print_bpf)(const struct host_obj *, const struct source *, FILE *);
	int (*emit)(const struct host_obj *, const char *, const char *,
		    struct diags *);
	/* Running in the kernel (kattach.h): all NULL when the module was
	 * built without libbpf. */
	int (*kattach_open)(const struct host_obj *, int, kattach_rec_fn, void *,
			 struct kattach **, char *, size_t);
	int (*kattach_attached)(const struct kattach *);
	int (*kattach_fd)(const struct kattach *);
	int (*kattach_consume)(struct kattach *);
	void (*kattach_detach)(struct kattach *);
	enum kattach_iter_state (*kattach_iter_state)(const struct kattach *, char *, size_t);
	int (*kattach_map_read)(struct kattach *, int, unsigned char **, size_t *);
	int (*kattach_map_write)(struct kattach *, int, const void *, const void *);
	int (*kattach_map_clear)(struct kattach *, int);
	int (*kattach_stack)(struct kattach *, unsigned, uint32_t, uint64_t *);
	int (*kattach_map_zero)(struct kattach *, int);
	void (*kattach_close)(struct kattach *);
	int (*kattach_watch)(struct kattach *, int, uint64_t);
	void (*kattach_unwatch)(struct kattach *, uint64_t);
	/* Driver policies: binding to the driver's BTF (llvm_host.h) and
	 * attaching (kattach.h); NULL without libbpf, as above. */
	int (*bind_driver)(struct host_binding *);
	void (*binding_free)(struct host_binding *);
	int (*kattach_driver_check)(char *, size_t);
	int (*kattach_open_driver)(const struct host_obj *, const struct kattach *,
				kattach_rec_fn, void *, struct kattach **, char *, size_t);
	/* the probe the kernel's verifier refused, after a failed open */
	bool (*kattach_refused)(struct span *);
	bool (*kattach_unattached)(struct span *);
	/* the libbpf the module carries, for reading the kernel's types
	 * where libbpf.so.1 is missing (kernel_btf.h); NULL without it */
	const struct kernel_btf_lib *(*btf_lib)(void);
	/* the kernel's BPF features (`gpux --info`); NULL without libbpf */
	int (*kattach_features)(struct kattach_feature *, int);
};

/* Open the module once (later calls return the same table). NULL, with a
 * diagnostic saying where it was looked for (none where diags is NULL),
 * if it cannot be loaded.
 * $GPUX_HOST_MODULE overrides the search: next to the gpux binary, then
 * ../lib/gpux/ from it. */
const struct host_api *host_module_open(struct diags *diags);

#endif
