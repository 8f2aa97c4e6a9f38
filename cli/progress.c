/* The long-compile line (progress.h): a thread that wakes once the
 * threshold has passed, then every second, and draws what the main
 * thread last said it was doing. */
#include "progress.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define AFTER_MS 2000 /* a compile shorter than this shows nothing */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;
static pthread_t thread;
static bool started, stopping;
static const char *doing;
static struct timespec t0;

static long after_ms(void)
{
	const char *e = getenv("GPUX_PROGRESS_MS");
	char *end;
	long v = e && *e ? strtol(e, &end, 10) : -1;
	return e && *e && !*end && v >= 0 ? v : AFTER_MS;
}

static void add_ms(struct timespec *t, long ms)
{
	t->tv_sec += ms / 1000;
	t->tv_nsec += (ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static void *draw(void *arg)
{
	(void)arg;
	bool drawn = false;
	pthread_mutex_lock(&lock);
	struct timespec until = t0;
	add_ms(&until, after_ms());
	while (!stopping) {
		if (pthread_cond_timedwait(&wake, &lock, &until) != ETIMEDOUT || stopping)
			continue;
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		double s = (double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9;
		fprintf(stderr, "\rgpux: %s... %.0f s\033[K", doing, s);
		fflush(stderr);
		drawn = true;
		add_ms(&until, 1000);
	}
	if (drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

void progress_set(const char *what)
{
	pthread_mutex_lock(&lock);
	doing = what;
	if (!started && isatty(STDERR_FILENO)) {
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&wake, &ca);
		pthread_condattr_destroy(&ca);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		started = pthread_create(&thread, NULL, draw, NULL) == 0;
		if (!started)
			pthread_cond_destroy(&wake);
	}
	pthread_mutex_unlock(&lock);
}

void progress_stop(void)
{
	pthread_mutex_lock(&lock);
	bool join = started;
	stopping = true;
	if (join)
		pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
	if (join) {
		pthread_join(thread, NULL);
		pthread_cond_destroy(&wake);
	}
	/* a later stage (the run's own compile) draws again, timed anew */
	pthread_mutex_lock(&lock);
	started = stopping = false;
	pthread_mutex_unlock(&lock);
}
