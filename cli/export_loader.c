#include "export_loader.h"

#include <dlfcn.h>
#include <limits.h>

#include "module_open.h"

const struct export_net *export_module_open(struct diags *diags)
{
	static const struct export_net *net;
	if (net)
		return net;
	char tried[3 * (PATH_MAX + 64)], why[PATH_MAX + 256];
	void *h = module_open(EXPORT_NET_MODULE, "GPUX_EXPORT_MODULE", why, sizeof(why), tried,
			      sizeof(tried));
	if (!h) {
		struct diag *dg = diag_error_nospan(diags,
			"cannot load the metrics exporter (--export): %s", why);
		diag_hint(dg, "looked for " EXPORT_NET_MODULE " at: %s", tried);
		return NULL;
	}
	const struct export_net *t = dlsym(h, EXPORT_NET_ENTRY);
	if (!t || t->abi != EXPORT_NET_ABI) {
		diag_error_nospan(diags, "%s is not this gpux's exporter module (%s)",
				  EXPORT_NET_MODULE, t ? "another version" : "no " EXPORT_NET_ENTRY);
		dlclose(h);
		return NULL;
	}
	net = t;
	return net;
}
