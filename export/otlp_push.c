/* OTLP/HTTP pushes (otlp_push.h). The thread holds the only curl handle;
 * the loop only swaps the body waiting under the lock, so a receiver
 * that is slow or gone never holds the loop. */
#include "otlp_push.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GPUX_HAVE_CURL

#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

#define CONNECT_TIMEOUT_MS 2000L
#define PUSH_TIMEOUT_MS 5000L

struct otlp_pusher {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *body; /* waiting to be sent */
	size_t len;
	bool stop;
	char *url;
	CURL *curl;
	struct curl_slist *hdrs;
	unsigned long pushes, failed; /* the thread's own until it is joined */
	char error[CURL_ERROR_SIZE];
};

/* The receiver's answer is not needed. */
static size_t discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

static void post(struct otlp_pusher *p, const char *body, size_t len)
{
	p->error[0] = '\0';
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	CURLcode rc = curl_easy_perform(p->curl);
	long status = 0;
	if (rc == CURLE_OK)
		curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &status);
	p->pushes++;
	if (rc == CURLE_OK && status >= 200 && status < 300)
		return;
	if (p->failed++)
		return;
	if (rc != CURLE_OK)
		fprintf(stderr, "gpux: WARNING: OTLP push to %s failed: %s; later failures are "
			"counted\n", p->url, p->error[0] ? p->error : curl_easy_strerror(rc));
	else
		fprintf(stderr, "gpux: WARNING: OTLP push to %s failed: HTTP status %ld; later "
			"failures are counted\n", p->url, status);
}

static void *run(void *arg)
{
	struct otlp_pusher *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (!p->body && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		char *body = p->body;
		size_t len = p->len;
		p->body = NULL;
		pthread_mutex_unlock(&p->mu);
		if (!body)
			return NULL; /* stopping, nothing left */
		post(p, body, len);
		free(body);
	}
}

static int setup(struct otlp_pusher *p)
{
	if (!(p->curl = curl_easy_init()))
		return -1;
	p->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	/* no 100-continue round trip for a body of a few KiB */
	struct curl_slist *h = p->hdrs ? curl_slist_append(p->hdrs, "Expect:") : NULL;
	if (!h)
		return -1;
	p->hdrs = h;
	CURL *c = p->curl;
	curl_easy_setopt(c, CURLOPT_URL, p->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, p->hdrs);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "gpux/" GPUX_VERSION);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); /* not the main thread: no SIGALRM */
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, PUSH_TIMEOUT_MS);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, p->error);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	return 0;
}

static void free_pusher(struct otlp_pusher *p)
{
	if (p->curl)
		curl_easy_cleanup(p->curl);
	curl_slist_free_all(p->hdrs);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p->body);
	free(p->url);
	free(p);
	curl_global_cleanup();
}

int otlp_push_start(struct otlp_pusher **out, const char *url, char *err, size_t elen)
{
	*out = NULL;
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(err, elen, "cannot start libcurl");
		return -1;
	}
	struct otlp_pusher *p = calloc(1, sizeof(*p));
	if (!p) {
		curl_global_cleanup();
		snprintf(err, elen, "out of memory");
		return -1;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->url = strdup(url);
	/* the thread takes no signal: they are the run's loop's, and a
	 * closed connection must not raise SIGPIPE there */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int failed = !p->url || setup(p) || pthread_create(&p->th, NULL, run, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (failed) {
		snprintf(err, elen, "cannot set up OTLP pushes to %s", url);
		free_pusher(p);
		return -1;
	}
	*out = p;
	return 0;
}

void otlp_push_post(struct otlp_pusher *p, char *body, size_t len)
{
	pthread_mutex_lock(&p->mu);
	free(p->body);
	p->body = body;
	p->len = len;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

void otlp_push_stop(struct otlp_pusher *p, FILE *err)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->th, NULL);
	if (p->failed && err)
		fprintf(err, "gpux: WARNING: %lu of %lu OTLP pushes to %s failed\n", p->failed,
			p->pushes, p->url);
	free_pusher(p);
}

#else /* built without libcurl */

int otlp_push_start(struct otlp_pusher **p, const char *url, char *err, size_t elen)
{
	(void)url;
	*p = NULL;
	snprintf(err, elen, "this gpux was built without libcurl: no otlp export");
	return -1;
}

void otlp_push_post(struct otlp_pusher *p, char *body, size_t len)
{
	(void)p;
	(void)len;
	free(body);
}

void otlp_push_stop(struct otlp_pusher *p, FILE *err)
{
	(void)p;
	(void)err;
}

#endif
