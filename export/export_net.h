/* The exporter's network side, built as a module of its own
 * (libgpux-export.so, linked with libmicrohttpd and libcurl) that gpux
 * opens only for --export, so gpux starts where neither library is
 * installed. The module's one visible symbol, EXPORT_NET_ENTRY, is this
 * table: the Prometheus endpoint (prom_server.h) and the OTLP pusher
 * (otlp_push.h). */
#ifndef GPUX_EXPORT_NET_H
#define GPUX_EXPORT_NET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EXPORT_NET_MODULE "libgpux-export.so"
#define EXPORT_NET_ENTRY "gpux_export_net"
/* Raised whenever the table changes: a module from another build is
 * refused rather than called through the wrong slots. */
#define EXPORT_NET_ABI 1u

struct prom_server;
struct otlp_pusher;

struct export_net {
	unsigned abi; /* EXPORT_NET_ABI */
	int (*prom_start)(struct prom_server **, const char *, const char *, char *, size_t,
			  char *, size_t);
	int (*prom_fd)(const struct prom_server *);
	uint64_t (*prom_wanted)(struct prom_server *);
	void (*prom_publish)(struct prom_server *, char *, size_t, uint64_t);
	void (*prom_stop)(struct prom_server *);
	int (*otlp_start)(struct otlp_pusher **, const char *, char *, size_t);
	void (*otlp_post)(struct otlp_pusher *, char *, size_t);
	void (*otlp_stop)(struct otlp_pusher *, FILE *);
};

/* Defined in the module only (export_net.c); gpux finds it with
 * dlsym(EXPORT_NET_ENTRY). */
extern const struct export_net gpux_export_net;

#endif
