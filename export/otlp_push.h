/* OTLP/HTTP pushes (otlp_push.c): a thread posts each body handed to it
 * with libcurl (Content-Type application/json, short timeouts); a body
 * not yet sent when the next comes is replaced by it. A failure is said
 * once on stderr as it happens, the rest counted. */
#ifndef GPUX_OTLP_PUSH_H
#define GPUX_OTLP_PUSH_H

#include <stddef.h>
#include <stdio.h>

struct otlp_pusher;

/* 0, or -1 with why into err. */
int otlp_push_start(struct otlp_pusher **p, const char *url, char *err, size_t elen);
/* body: malloc'd, owned from now on. */
void otlp_push_post(struct otlp_pusher *p, char *body, size_t len);
/* Sends what waits, stops, says on err how many pushes failed. */
void otlp_push_stop(struct otlp_pusher *p, FILE *err);

#endif
