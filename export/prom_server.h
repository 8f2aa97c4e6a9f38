/* The Prometheus endpoint (prom_server.c): libmicrohttpd serves GET
 * /metrics from threads of its own. A scrape asks the run's loop for a
 * fresh snapshot through an eventfd and waits for it (a few seconds at
 * most, then it gets the last one); the loop publishes rendered text. */
#ifndef GPUX_PROM_SERVER_H
#define GPUX_PROM_SERVER_H

#include <stddef.h>
#include <stdint.h>

struct prom_server;

/* Listens on host ("" for every address) and port ("0": a free one);
 * the address it took, for people, into where (e.g. "*:9400"). 0, or -1
 * with why into err. */
int prom_server_start(struct prom_server **ps, const char *host, const char *port,
		      char *where, size_t wlen, char *err, size_t elen);
/* Readable while a scrape waits. */
int prom_server_fd(const struct prom_server *ps);
/* Takes what made the fd readable; the scrapes waiting now, as a number
 * to publish for (0: none). */
uint64_t prom_server_wanted(struct prom_server *ps);
/* The latest scrapes up to upto; text (malloc'd, owned from now on; NULL
 * keeps the last one) is served from now on. */
void prom_server_publish(struct prom_server *ps, char *text, size_t len, uint64_t upto);
/* Ends waiting scrapes and stops serving. */
void prom_server_stop(struct prom_server *ps);

#endif
