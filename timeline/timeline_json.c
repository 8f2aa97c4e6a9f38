/* The timeline's file (timeline.h): events built one at a time as JSON
 * text, each a line of the "traceEvents" array, kept until a flush
 * writes them with the array's closing brackets (TAIL) after them in
 * one write, where the next flush starts again: the file is a whole
 * JSON document after each flush, and a write that fails is undone at
 * close by going back to the last flush's end. */
#include "timeline_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char TAIL[] = "\n]}\n";
#define TAIL_LEN (sizeof(TAIL) - 1)

/* ---- text ---- */

static bool grow(struct tl_buf *b, size_t more)
{
	if (b->oom)
		return false;
	if (b->len + more + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + more + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void tlb_putn(struct tl_buf *b, const char *s, size_t n)
{
	if (!grow(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

void tlb_puts(struct tl_buf *b, const char *s)
{
	tlb_putn(b, s, strlen(s));
}

void tlb_printf(struct tl_buf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		tlb_putn(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Bytes of the valid UTF-8 sequence at s (at most n), or 0: overlong
 * forms, surrogates and code points past U+10FFFF are not valid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

void tlb_str(struct tl_buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	tlb_putn(b, "\"", 1);
	for (size_t i = 0; i < n;) {
		unsigned c = u[i];
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			tlb_putn(b, e, 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			static const char short_esc[] = "btn\0fr"; /* \b \t \n, \f \r */
			if (c >= 8 && c <= 13 && c != 11) {
				char e[2] = { '\\', short_esc[c - 8] };
				tlb_putn(b, e, 2);
			} else {
				tlb_printf(b, "\\u%04x", c);
			}
			i++;
		} else {
			size_t k = utf8_seq(u + i, n - i);
			if (k)
				tlb_putn(b, s + i, k);
			else
				tlb_puts(b, "\\ufffd");
			i += k ? k : 1;
		}
	}
	tlb_putn(b, "\"", 1);
}

/* ---- events ---- */

void tl_ev_begin(struct timeline *tl, char ph, const char *cat, uint32_t pid, uint32_t tid)
{
	tl->ev.len = 0;
	tl->ev.oom = false;
	tl->nargs = -1;
	tlb_printf(&tl->ev, "{\"ph\":\"%c\"", ph);
	if (cat)
		tlb_printf(&tl->ev, ",\"cat\":\"%s\"", cat);
	tlb_printf(&tl->ev, ",\"pid\":%u,\"tid\":%u", pid, tid);
}

void tl_key(struct timeline *tl, const char *key)
{
	tlb_printf(&tl->ev, ",\"%s\":", key);
}

void tl_name(struct timeline *tl, const char *s)
{
	tl_key(tl, "name");
	tlb_str(&tl->ev, s, strlen(s));
}

/* ns as microseconds with three decimals: exact, whatever the locale. */
static void put_us(struct tl_buf *b, int64_t ns)
{
	uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	tlb_printf(b, "%s%llu.%03u", ns < 0 ? "-" : "", (unsigned long long)(a / 1000),
		   (unsigned)(a % 1000));
}

void tl_us(struct timeline *tl, const char *key, uint64_t ns)
{
	tl_key(tl, key);
	put_us(&tl->ev, (int64_t)(ns - tl->t0));
}

void tl_dur(struct timeline *tl, uint64_t d)
{
	tl_key(tl, "dur");
	put_us(&tl->ev, d > INT64_MAX ? INT64_MAX : (int64_t)d);
}

static void arg_key(struct timeline *tl, const char *key)
{
	tlb_puts(&tl->ev, tl->nargs < 0 ? ",\"args\":{" : ",");
	tl->nargs = tl->nargs < 0 ? 1 : tl->nargs + 1;
	tlb_str(&tl->ev, key, strlen(key)); /* a map's key may name a series */
	tlb_putn(&tl->ev, ":", 1);
}

void tl_arg_u64(struct timeline *tl, const char *key, uint64_t v)
{
	arg_key(tl, key);
	tlb_printf(&tl->ev, "%llu", (unsigned long long)v);
}

void tl_arg_i64(struct timeline *tl, const char *key, int64_t v)
{
	arg_key(tl, key);
	tlb_printf(&tl->ev, "%lld", (long long)v);
}

void tl_arg_str(struct timeline *tl, const char *key, const char *s, size_t n)
{
	arg_key(tl, key);
	tlb_str(&tl->ev, s, n);
}

void tl_arg_hex(struct timeline *tl, const char *key, uint64_t v)
{
	arg_key(tl, key);
	tlb_printf(&tl->ev, "\"0x%llx\"", (unsigned long long)v);
}

void tl_arg_dim3(struct timeline *tl, const char *key, const uint32_t v[3])
{
	arg_key(tl, key);
	tlb_printf(&tl->ev, "\"%ux%ux%u\"", v[0], v[1], v[2]);
}

/* The event joins the pending text, whole or (out of memory) not at
 * all; a lot pending is written at once. */
void tl_ev_end(struct timeline *tl)
{
	if (tl->nargs >= 0)
		tlb_putn(&tl->ev, "}", 1);
	tlb_putn(&tl->ev, "}", 1);
	bool lost = tl->ev.oom || !grow(&tl->pend, 2 + tl->ev.len + TAIL_LEN);
	tl->ev.oom = tl->pend.oom = false;
	if (lost) {
		tl->lost++;
		return;
	}
	if (!tl->first)
		tlb_putn(&tl->pend, ",\n", 2);
	tlb_putn(&tl->pend, tl->ev.p, tl->ev.len);
	tl->first = false;
	tl->nevents++;
	if (tl->pend.len >= TL_PENDING_MAX)
		timeline_flush(tl);
}

/* ---- the file ---- */

/* n bytes at off (or, not seekable, where the file is). 0, or errno. */
static int write_at(struct timeline *tl, const char *p, size_t n, off_t off)
{
	while (n) {
		ssize_t w = tl->seekable ? pwrite(tl->fd, p, n, off) : write(tl->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		p += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

static int fail(char *err, size_t n, const char *path, int e)
{
	snprintf(err, n, "cannot write the timeline %s: %s", path, strerror(e));
	return -1;
}

int timeline_open(struct timeline **out, const char *path, uint64_t t0, char *err, size_t errlen)
{
	*out = NULL;
	struct timeline *tl = calloc(1, sizeof(*tl));
	if (!tl)
		return fail(err, errlen, path, ENOMEM);
	/* close-on-exec: a traced command must not hold it open */
	tl->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (tl->fd < 0) {
		int e = errno;
		free(tl);
		return fail(err, errlen, path, e);
	}
	tl->seekable = lseek(tl->fd, 0, SEEK_CUR) >= 0;
	tl->t0 = t0;
	tl->first = true;
	tl->next_tid = TL_SYN_TID;
	tl->self = (uint32_t)getpid();
	tlb_printf(&tl->pend, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"gpux\","
		   "\"clock\":\"CLOCK_MONOTONIC\",\"t0_ns\":%llu},", (unsigned long long)t0);
	tlb_puts(&tl->pend, "\"traceEvents\":[\n");
	timeline_flush(tl);
	if (tl->err || tl->pend.oom) {
		int e = tl->err ? tl->err : ENOMEM;
		close(tl->fd);
		free(tl->pend.p);
		free(tl);
		return fail(err, errlen, path, e);
	}
	*out = tl;
	return 0;
}

/* The pending events and TAIL after them in one write, so that what
 * reaches the file ends as a whole document; end then stays before
 * TAIL, which the next events overwrite. */
void timeline_flush(struct timeline *tl)
{
	if (!tl || !tl->pend.len || tl->err)
		return;
	size_t n = tl->pend.len;
	if (!grow(&tl->pend, TAIL_LEN)) {
		tl->err = ENOMEM;
		return;
	}
	memcpy(tl->pend.p + n, TAIL, TAIL_LEN);
	int e = write_at(tl, tl->pend.p, tl->seekable ? n + TAIL_LEN : n, tl->end);
	if (e) {
		tl->err = e;
		return;
	}
	tl->end += (off_t)n;
	tl->good = tl->end;
	tl->pend.len = 0;
}

int timeline_close(struct timeline *tl, FILE *err)
{
	if (!tl)
		return 0;
	timeline_flush(tl);
	int e = tl->err;
	bool whole = !e;
	if (!tl->seekable && !e)
		e = write_at(tl, TAIL, TAIL_LEN, 0);
	else if (tl->seekable) {
		/* after an error: back to the last flush, which ended with
		 * TAIL; and nothing past TAIL in any case */
		bool ok = !e || write_at(tl, TAIL, TAIL_LEN, tl->good) == 0;
		ok = ok && ftruncate(tl->fd, tl->good + (off_t)TAIL_LEN) == 0;
		whole = whole || ok;
	}
	if (close(tl->fd) && !e)
		e = errno ? errno : EIO;
	if (err && e)
		fprintf(err, "gpux: WARNING: writing the timeline: %s; %s\n", strerror(e),
			whole ? "it holds the events written before" : "it may not be whole");
	else if (err && tl->lost)
		fprintf(err, "gpux: WARNING: %llu events left out of the timeline (out of memory)\n",
			(unsigned long long)tl->lost);
	tl_tracks_free(tl);
	free(tl->ev.p);
	free(tl->pend.p);
	free(tl);
	return e ? -1 : 0;
}

void timeline_counts(const struct timeline *tl, uint64_t *kernels, uint64_t *events)
{
	*kernels = tl ? tl->nkernels : 0;
	*events = tl ? tl->nevents : 0;
}
