/* Host lowering lives in a module (libgpux-host.so, linked with LLVM)
 * that gpux opens only when a program has host or driver probes:
 * loading libLLVM costs ~10 ms, a device one-liner compiles in ~1 ms. */
#ifndef GPUX_HOST_MODULE_H
#define GPUX_HOST_MODULE_H

#include "host_live.h"
#include "host_path.h"
#include "host_usdt.h"
#include "llvm_host.h"

struct host_api {
	int (*compile)(struct program *, const struct host_opts *,
		       struct host_obj *, struct diags *);
	void (*print_ir)(const struct host_obj *, FILE *);
	int (*print_bpf)(const struct host_obj *, const struct source *, FILE *);
	int (*emit)(const struct host_obj *, const char *, const char *,
		    struct diags *);
	/* Running in the kernel (host_live.h): all NULL when the module was
	 * built without libbpf. */
	int (*live_open)(const struct host_obj *, int, host_live_rec_fn, void *,
			 struct host_live **, char *, size_t);
	int (*live_attached)(const struct host_live *);
	int (*live_fd)(const struct host_live *);
	int (*live_consume)(struct host_live *);
	void (*live_detach)(struct host_live *);
	int (*live_map_read)(struct host_live *, int, unsigned char **, size_t *);
	int (*live_map_clear)(struct host_live *, int);
	int (*live_stack)(struct host_live *, unsigned, uint32_t, uint64_t *);
	int (*live_map_zero)(struct host_live *, int);
	void (*live_close)(struct host_live *);
	int (*live_watch)(struct host_live *, int, uint64_t);
	void (*live_unwatch)(struct host_live *, uint64_t);
	/* Driver policies: binding to the driver's BTF (llvm_host.h) and
	 * attaching (host_live.h); NULL without libbpf, as above. */
	int (*bind_driver)(struct host_binding *);
	void (*binding_free)(struct host_binding *);
	int (*live_driver_check)(char *, size_t);
	int (*live_open_driver)(const struct host_obj *, const struct host_live *,
				host_live_rec_fn, void *, struct host_live **, char *, size_t);
	/* the probe the kernel's verifier refused, after a failed open */
	bool (*live_refused)(struct span *);
};

/* Open the module once (later calls return the same table). NULL, with a
 * diagnostic saying where it was looked for, if it cannot be loaded.
 * $GPUX_HOST_MODULE overrides the search: next to the gpux binary, then
 * ../lib/gpux/ from it. */
const struct host_api *host_module_open(struct diags *diags);

#endif
