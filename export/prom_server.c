/* The Prometheus endpoint (prom_server.h). gpux binds the socket itself,
 * so a port in use or an unknown address is a plain message, and port 0
 * can be reported; libmicrohttpd runs a thread per connection (a handler
 * waits for the loop) under a small connection limit. */
#include "prom_server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GPUX_HAVE_MHD

#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SCRAPE_WAIT_MS 2000 /* for the loop to answer a scrape */
#define MAX_CONNECTIONS 16
#define CONNECTION_TIMEOUT_S 10

struct prom_server {
	struct MHD_Daemon *d;
	int efd;
	pthread_mutex_t mu;
	pthread_cond_t cv;  /* on CLOCK_MONOTONIC */
	uint64_t req, served; /* scrapes asked for, answered */
	char *text;
	size_t len;
	bool stopping;
};

static const char content_type[] = "text/plain; version=0.0.4; charset=utf-8";

/* A copy of the text once the loop has answered this scrape (or the wait
 * ran out); NULL before any snapshot. */
static char *snapshot(struct prom_server *ps, size_t *len)
{
	pthread_mutex_lock(&ps->mu);
	uint64_t mine = ++ps->req;
	pthread_mutex_unlock(&ps->mu);
	uint64_t one = 1;
	if (write(ps->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return NULL;
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += SCRAPE_WAIT_MS / 1000;
	until.tv_nsec += (SCRAPE_WAIT_MS % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&ps->mu);
	while (ps->served < mine && !ps->stopping)
		if (pthread_cond_timedwait(&ps->cv, &ps->mu, &until) == ETIMEDOUT)
			break;
	char *copy = ps->text ? malloc(ps->len + 1) : NULL;
	if (copy) {
		memcpy(copy, ps->text, ps->len + 1);
		*len = ps->len;
	}
	pthread_mutex_unlock(&ps->mu);
	return copy;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *msg)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(msg), (void *)msg,
								  MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	enum MHD_Result ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload, size_t *upload_len, void **state)
{
	(void)version;
	(void)upload;
	(void)state;
	if (*upload_len)
		return reply(c, MHD_HTTP_BAD_REQUEST, "gpux: no request body expected\n");
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "gpux: GET /metrics\n");
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, "gpux: the metrics are at /metrics\n");
	size_t len = 0;
	char *text = snapshot(cls, &len);
	if (!text)
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "gpux: no snapshot of the maps yet\n");
	struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ok;
}

/* A listening socket on host:port; -1 with why into err. */
static int listen_on(const char *host, const char *port, char *where, size_t wlen, char *err,
		     size_t elen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *res = NULL;
	int rc = getaddrinfo(*host ? host : NULL, port, &hints, &res);
	if (rc) {
		snprintf(err, elen, "cannot listen on '%s': %s", *host ? host : "*", gai_strerror(rc));
		return -1;
	}
	/* every address: IPv6 first, which takes IPv4 too where it may */
	int fd = -1, why = 0;
	for (int pass = 0; pass < 2 && fd < 0; pass++)
		for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
			if ((a->ai_family == AF_INET6) != (pass == 0))
				continue;
			fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
			int on = 1, off = 0;
			if (fd >= 0 &&
			    (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) ||
			     (a->ai_family == AF_INET6 && !*host &&
			      setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off))) ||
			     bind(fd, a->ai_addr, a->ai_addrlen) || listen(fd, 64))) {
				why = errno;
				close(fd);
				fd = -1;
			} else if (fd < 0) {
				why = errno;
			}
		}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, elen, "cannot listen on %s:%s: %s", *host ? host : "*", port,
			 strerror(why));
		return -1;
	}
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	unsigned got = 0;
	if (!getsockname(fd, (struct sockaddr *)&sa, &sl))
		got = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
						      : ((struct sockaddr_in *)&sa)->sin_port);
	bool v6 = strchr(host, ':') != NULL;
	snprintf(where, wlen, "%s%s%s:%u", v6 ? "[" : "", *host ? host : "*", v6 ? "]" : "", got);
	return fd;
}

int prom_server_start(struct prom_server **out, const char *host, const char *port,
		      char *where, size_t wlen, char *err, size_t elen)
{
	*out = NULL;
	struct prom_server *ps = calloc(1, sizeof(*ps));
	if (!ps) {
		snprintf(err, elen, "out of memory");
		return -1;
	}
	pthread_mutex_init(&ps->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ps->cv, &ca);
	pthread_condattr_destroy(&ca);
	ps->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	int fd = ps->efd < 0 ? -1 : listen_on(host, port, where, wlen, err, elen);
	if (ps->efd < 0)
		snprintf(err, elen, "eventfd: %s", strerror(errno));
	if (fd >= 0) {
		/* its threads take no signal: they are the run's loop's */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		ps->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
					 MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL,
					 0, NULL, NULL, on_request, ps,
					 MHD_OPTION_LISTEN_SOCKET, fd,
					 MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
					 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S,
					 MHD_OPTION_END);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (!ps->d) {
			snprintf(err, elen, "cannot start the HTTP server on %s", where);
			close(fd);
		}
	}
	if (!ps->d) {
		prom_server_stop(ps);
		return -1;
	}
	*out = ps;
	return 0;
}

int prom_server_fd(const struct prom_server *ps)
{
	return ps->efd;
}

uint64_t prom_server_wanted(struct prom_server *ps)
{
	uint64_t n;
	while (read(ps->efd, &n, sizeof(n)) > 0)
		;
	pthread_mutex_lock(&ps->mu);
	uint64_t want = ps->req > ps->served ? ps->req : 0;
	pthread_mutex_unlock(&ps->mu);
	return want;
}

void prom_server_publish(struct prom_server *ps, char *text, size_t len, uint64_t upto)
{
	pthread_mutex_lock(&ps->mu);
	if (text) {
		free(ps->text);
		ps->text = text;
		ps->len = len;
	}
	if (upto > ps->served)
		ps->served = upto;
	pthread_cond_broadcast(&ps->cv);
	pthread_mutex_unlock(&ps->mu);
}

void prom_server_stop(struct prom_server *ps)
{
	if (!ps)
		return;
	pthread_mutex_lock(&ps->mu);
	ps->stopping = true;
	pthread_cond_broadcast(&ps->cv);
	pthread_mutex_unlock(&ps->mu);
	if (ps->d)
		MHD_stop_daemon(ps->d); /* closes the listening socket too */
	if (ps->efd >= 0)
		close(ps->efd);
	pthread_cond_destroy(&ps->cv);
	pthread_mutex_destroy(&ps->mu);
	free(ps->text);
	free(ps);
}

#else /* built without libmicrohttpd */

int prom_server_start(struct prom_server **ps, const char *host, const char *port,
		      char *where, size_t wlen, char *err, size_t elen)
{
	(void)host;
	(void)port;
	(void)where;
	(void)wlen;
	*ps = NULL;
	snprintf(err, elen, "this gpux was built without libmicrohttpd: no prometheus export");
	return -1;
}

int prom_server_fd(const struct prom_server *ps)
{
	(void)ps;
	return -1;
}

uint64_t prom_server_wanted(struct prom_server *ps)
{
	(void)ps;
	return 0;
}

void prom_server_publish(struct prom_server *ps, char *text, size_t len, uint64_t upto)
{
	(void)ps;
	(void)len;
	(void)upto;
	free(text);
}

void prom_server_stop(struct prom_server *ps)
{
	(void)ps;
}

#endif
