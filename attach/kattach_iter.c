/* Running an iterator (providers/iter_attach.c made its link): reading
 * it runs its program over the kernel's objects, and what the program
 * wrote comes back as the bytes read. An iterator's programs write
 * gpux's records there rather than to the ring buffer, each as its
 * length (8 bytes) then its bytes (codegen/host_output.c): the kernel
 * runs the program only as fast as they are read, so none is lost,
 * however many objects there are. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kattach_priv.h"

/* Read at a time: well under the kernel's buffer (8 pages), so that the
 * kernel stops between objects when this much is written, never by
 * overflowing, which would run an object's program twice. */
#define READ_BYTES 4096
/* The largest record a program writes (a probe's stack holds it). */
#define RECORD_MAX 65536

int kattach_add_iterator(struct kattach *l, struct bpf_link *k, char *err, size_t errlen,
			 const char *pin)
{
	if (kattach_add_link(l, k, err, errlen))
		return -1;
	if (l->iter.link) {
		snprintf(err, errlen, "a run has one iterator");
		return -1;
	}
	l->iter.link = k;
	l->iter.fd = -1;
	l->iter.state = pin ? KATTACH_ITER_PINNED : KATTACH_ITERATING;
	if (pin)
		snprintf(l->iter.err, sizeof(l->iter.err), "%s", pin);
	return 0;
}

static enum kattach_iter_state fail(struct kattach *l, const char *fmt, const char *why)
{
	snprintf(l->iter.err, sizeof(l->iter.err), fmt, why);
	kattach_iter_stop(l);
	l->iter.state = KATTACH_ITER_FAILED;
	return l->iter.state;
}

/* Hands over the whole records in the buffer; keeps a partial one. */
static int hand_over(struct kattach *l)
{
	size_t at = 0;
	while (l->iter.len - at >= 8) {
		uint64_t size;
		memcpy(&size, l->iter.buf + at, 8);
		if (size > RECORD_MAX)
			return -1;
		if (l->iter.len - at - 8 < size)
			break;
		if (l->rec)
			l->rec(l->arg, l->iter.buf + at + 8, (size_t)size);
		at += 8 + (size_t)size;
	}
	memmove(l->iter.buf, l->iter.buf + at, l->iter.len - at);
	l->iter.len -= at;
	return 0;
}

int kattach_iter_consume(struct kattach *l, int64_t until_ns)
{
	if (l->iter.state != KATTACH_ITERATING)
		return 0;
	if (l->iter.fd < 0) {
		l->iter.fd = bpf_iter_create(bpf_link__fd(l->iter.link));
		if (l->iter.fd < 0) {
			fail(l, "cannot run the iterator: %s", strerror(errno));
			return -1;
		}
		if (!(l->iter.buf = malloc(RECORD_MAX + 8 + READ_BYTES))) {
			fail(l, "%s", "out of memory");
			return -1;
		}
	}
	for (;;) {
		ssize_t n = read(l->iter.fd, l->iter.buf + l->iter.len, READ_BYTES);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fail(l, "reading the iterator: %s", strerror(errno));
			return -1;
		}
		if (n == 0) {
			bool partial = l->iter.len != 0;
			kattach_iter_stop(l);
			if (partial) {
				fail(l, "%s", "the iterator's output ends inside a record");
				return -1;
			}
			l->iter.state = KATTACH_ITER_DONE;
			return 0;
		}
		l->iter.len += (size_t)n;
		if (hand_over(l)) {
			fail(l, "%s", "the iterator's output holds a record gpux did not write");
			return -1;
		}
		if (kattach_coarse_ns() >= until_ns)
			return 1;
	}
}

void kattach_iter_stop(struct kattach *l)
{
	if (!l->iter.link)
		return;
	if (l->iter.fd >= 0)
		close(l->iter.fd);
	l->iter.fd = -1;
	free(l->iter.buf);
	l->iter.buf = NULL;
	l->iter.len = 0;
	if (l->iter.state == KATTACH_ITERATING)
		l->iter.state = KATTACH_ITER_DONE;
}

enum kattach_iter_state kattach_iter_state(const struct kattach *l, char *err, size_t errlen)
{
	if ((l->iter.state == KATTACH_ITER_FAILED || l->iter.state == KATTACH_ITER_PINNED) && err)
		snprintf(err, errlen, "%s", l->iter.err);
	return l->iter.state;
}
