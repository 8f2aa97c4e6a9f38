/* libgpux-export.so's entry (export_net.h). Everything else in the
 * module is hidden, so its names never meet gpux's. */
#include "export_net.h"

#include "otlp_push.h"
#include "prom_server.h"

__attribute__((visibility("default"))) const struct export_net gpux_export_net = {
	.abi = EXPORT_NET_ABI,
	.prom_start = prom_server_start,
	.prom_fd = prom_server_fd,
	.prom_wanted = prom_server_wanted,
	.prom_publish = prom_server_publish,
	.prom_stop = prom_server_stop,
	.otlp_start = otlp_push_start,
	.otlp_post = otlp_push_post,
	.otlp_stop = otlp_push_stop,
};
