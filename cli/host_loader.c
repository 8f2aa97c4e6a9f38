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
		struct diag *dg = diag_error_nospan(diags,
			"cannot load the host code generator: %s", why);
		diag_hint(dg, "looked for " MODULE_NAME " at: %s", tried);
		return NULL;
	}
	/* dlsym gives object pointers; POSIX guarantees they convert. */
	*(void **)&api.compile = dlsym(h, "host_compile");
	*(void **)&api.print_ir = dlsym(h, "host_print_ir");
	*(void **)&api.print_bpf = dlsym(h, "host_print_bpf");
	*(void **)&api.emit = dlsym(h, "host_emit");
	*(void **)&api.live_open = dlsym(h, "host_live_open");
	*(void **)&api.live_attached = dlsym(h, "host_live_attached");
	*(void **)&api.live_fd = dlsym(h, "host_live_fd");
	*(void **)&api.live_consume = dlsym(h, "host_live_consume");
	*(void **)&api.live_detach = dlsym(h, "host_live_detach");
	*(void **)&api.live_map_read = dlsym(h, "host_live_map_read");
	*(void **)&api.live_map_clear = dlsym(h, "host_live_map_clear");
	*(void **)&api.live_stack = dlsym(h, "host_live_stack");
	*(void **)&api.live_map_zero = dlsym(h, "host_live_map_zero");
	*(void **)&api.live_close = dlsym(h, "host_live_close");
	*(void **)&api.live_watch = dlsym(h, "host_live_watch");
	*(void **)&api.live_unwatch = dlsym(h, "host_live_unwatch");
	*(void **)&api.bind_driver = dlsym(h, "host_bind_driver");
	*(void **)&api.binding_free = dlsym(h, "host_binding_free");
	*(void **)&api.live_driver_check = dlsym(h, "host_live_driver_check");
	*(void **)&api.live_open_driver = dlsym(h, "host_live_open_driver");
	*(void **)&api.live_refused = dlsym(h, "host_live_refused");
	if (!api.live_open || !api.live_attached || !api.live_fd || !api.live_consume ||
	    !api.live_detach || !api.live_map_read || !api.live_map_clear ||
	    !api.live_map_zero || !api.live_close || !api.live_watch || !api.live_unwatch ||
	    !api.bind_driver || !api.binding_free ||
	    !api.live_driver_check || !api.live_open_driver || !api.live_refused) {
		/* built without libbpf: cannot attach nor read BTF */
		api.live_open = NULL;
		api.bind_driver = NULL;
		api.live_open_driver = NULL;
	}
	if (!api.compile || !api.print_ir || !api.print_bpf ||
	    !api.emit) {
		diag_error_nospan(diags, "%s lacks the host code generator's functions",
				  MODULE_NAME);
		dlclose(h);
		return NULL;
	}
	handle = h;
	return &api;
}
