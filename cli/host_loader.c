#include "host_loader.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>

#include "module_open.h"

#define MODULE_NAME "libgpux-host.so"

const struct host_api *host_module_open(struct diags *diags)
{
	static struct host_api api;
	static void *handle;
	if (handle)
		return &api;
	char tried[3 * (PATH_MAX + 64)], why[PATH_MAX + 256];
	void *h = module_open(MODULE_NAME, "GPUX_HOST_MODULE", why, sizeof(why), tried,
			      sizeof(tried));
	if (!h) {
		if (diags) { /* NULL: the caller copes without it, silently */
			struct diag *dg = diag_error_nospan(diags,
				"cannot load the host code generator: %s", why);
			diag_hint(dg, "looked for " MODULE_NAME " at: %s", tried);
		}
		return NULL;
	}
	/* dlsym gives object pointers; POSIX guarantees they convert. */
	*(void **)&api.compile = dlsym(h, "host_compile");
	*(void **)&api.print_ir = dlsym(h, "host_print_ir");
	*(void **)&api.print_bpf = dlsym(h, "host_print_bpf");
	*(void **)&api.emit = dlsym(h, "host_emit");
	*(void **)&api.kattach_open = dlsym(h, "kattach_open");
	*(void **)&api.kattach_attached = dlsym(h, "kattach_attached");
	*(void **)&api.kattach_fd = dlsym(h, "kattach_fd");
	*(void **)&api.kattach_consume = dlsym(h, "kattach_consume");
	*(void **)&api.kattach_detach = dlsym(h, "kattach_detach");
	*(void **)&api.kattach_iter_state = dlsym(h, "kattach_iter_state");
	*(void **)&api.kattach_map_read = dlsym(h, "kattach_map_read");
	*(void **)&api.kattach_map_write = dlsym(h, "kattach_map_write");
	*(void **)&api.kattach_map_clear = dlsym(h, "kattach_map_clear");
	*(void **)&api.kattach_stack = dlsym(h, "kattach_stack");
	*(void **)&api.kattach_map_zero = dlsym(h, "kattach_map_zero");
	*(void **)&api.kattach_close = dlsym(h, "kattach_close");
	*(void **)&api.kattach_watch = dlsym(h, "kattach_watch");
	*(void **)&api.kattach_unwatch = dlsym(h, "kattach_unwatch");
	*(void **)&api.bind_driver = dlsym(h, "host_bind_driver");
	*(void **)&api.binding_free = dlsym(h, "host_binding_free");
	*(void **)&api.kattach_driver_check = dlsym(h, "kattach_driver_check");
	*(void **)&api.kattach_open_driver = dlsym(h, "kattach_open_driver");
	*(void **)&api.kattach_refused = dlsym(h, "kattach_refused");
	*(void **)&api.kattach_unattached = dlsym(h, "kattach_unattached");
	*(void **)&api.btf_lib = dlsym(h, "host_btf_lib");
	*(void **)&api.kattach_features = dlsym(h, "kattach_features");
	if (!api.kattach_open || !api.kattach_attached || !api.kattach_fd || !api.kattach_consume ||
	    !api.kattach_detach || !api.kattach_iter_state || !api.kattach_map_read || !api.kattach_map_write ||
	    !api.kattach_map_clear ||
	    !api.kattach_map_zero || !api.kattach_close || !api.kattach_watch || !api.kattach_unwatch ||
	    !api.bind_driver || !api.binding_free ||
	    !api.kattach_driver_check || !api.kattach_open_driver || !api.kattach_refused ||
	    !api.kattach_unattached) {
		/* built without libbpf: cannot attach nor read BTF */
		api.kattach_open = NULL;
		api.bind_driver = NULL;
		api.kattach_open_driver = NULL;
	}
	if (!api.compile || !api.print_ir || !api.print_bpf ||
	    !api.emit) {
		if (diags)
			diag_error_nospan(diags, "%s lacks the host code generator's functions",
					  MODULE_NAME);
		dlclose(h);
		return NULL;
	}
	handle = h;
	return &api;
}
