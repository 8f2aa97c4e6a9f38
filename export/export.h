/* A run's maps as metrics for a fleet (docs/SERVICE.md): a Prometheus
 * endpoint (--export prometheus:[ADDR:]PORT) and OTLP/HTTP pushes in
 * JSON (--export otlp:URL), either or both.
 * The run's loop owns the maps and is the only one to read them: it asks
 * exporter_due() whether a snapshot is wanted (a scrape is waiting, a
 * push is due), then adds each map's elements and publishes. The HTTP
 * server and the pusher run in threads of their own, on rendered text
 * only, so neither a slow scraper nor a slow receiver holds the loop.
 * They live in libgpux-export.so (export_net.h), which the caller opens
 * and hands over; the snapshots and their renderings are here. */
#ifndef GPUX_EXPORT_H
#define GPUX_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "host_obj.h"
#include "output.h"

#define EXPORT_DEFAULT_INTERVAL_MS 10000L /* between OTLP pushes */
#define EXPORT_DEFAULT_MAX_SERIES 1000L   /* keys of a map with series of their own */

enum export_kind { EXPORT_PROMETHEUS, EXPORT_OTLP };

struct export_spec {
	enum export_kind kind;
	char host[256];  /* prometheus: the address to listen on; "" for all */
	char port[8];    /* prometheus: 0 picks a free one */
	const char *url; /* otlp: http:// or https://, into the spec */
};

/* prometheus:PORT, prometheus:ADDR:PORT (ADDR a name, an IPv4 address or
 * [an IPv6 one]) or otlp:URL. 0, or -1 with why into err. */
int export_spec_parse(const char *spec, struct export_spec *out, char *err, size_t errlen);

struct export_net;

struct export_cfg {
	const struct export_net *net; /* the module's server and pusher */
	const char *const *specs; /* at most one of each kind */
	int nspecs;
	long interval_ms; /* between OTLP pushes; 0 for the default */
	long max_series;  /* per map; 0 for the default */
	FILE *info;       /* where the endpoint's address is said; NULL: nowhere */
};

struct exporter;

/* Listens and starts the pusher. 0, or -1 with why into err. */
int exporter_open(struct exporter **x, const struct export_cfg *c, char *err, size_t errlen);
/* Readable when a scrape waits for a snapshot; -1 without an endpoint. */
int exporter_fd(const struct exporter *x);
/* ns until the next push is due (0: now), -1 without one. */
int64_t exporter_wait_ns(const struct exporter *x);
/* Whether a snapshot is wanted now; final: the last one, for every
 * export. If so, the caller adds every map and publishes. */
bool exporter_due(struct exporter *x, bool final);
/* One map of the snapshot: its layout and its elements now. 0, or -1. */
int exporter_add(struct exporter *x, const struct host_map *hm, const struct out_entries *e);
/* Hands the snapshot to the endpoint and the pusher. 0, or -1. */
int exporter_publish(struct exporter *x);
/* Stops serving, sends what is still to push (waiting for it, with a
 * timeout), says on err how many pushes failed, frees x. */
void exporter_close(struct exporter *x, FILE *err);

#endif
