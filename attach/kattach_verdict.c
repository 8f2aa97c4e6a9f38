/* The kernel's verdict on a program it refused, read from libbpf's load
 * log (kattach_verdict.h): the verifier's own message (the line before its
 * "processed N insns" summary), the source line its log names last
 * before it (LLVM's line info: "; TEXT @ FILE:LINE"), and the program's
 * name, so that gpux reports one located error instead of the raw log. */
#include "kattach_verdict.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
	char *buf;
	size_t len, cap;
	bool full;
} cap;

static int capture(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN || cap.full)
		return 0;
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n <= 0)
		return 0;
	if (cap.len + (size_t)n + 1 > cap.cap) {
		size_t want = (cap.len + (size_t)n + 1) * 2;
		char *b = want <= HOST_VERDICT_LOG_MAX ? realloc(cap.buf, want) : NULL;
		if (!b) {
			cap.full = true; /* the start of the log says most */
			return 0;
		}
		cap.buf = b;
		cap.cap = want;
	}
	vsnprintf(cap.buf + cap.len, cap.cap - cap.len, fmt, ap);
	cap.len += (size_t)n;
	return n;
}

libbpf_print_fn_t kattach_verdict_begin(void)
{
	cap.len = 0;
	cap.full = false;
	if (cap.buf)
		cap.buf[0] = 0;
	return libbpf_set_print(capture);
}

void kattach_verdict_end(libbpf_print_fn_t print, bool show)
{
	libbpf_set_print(print);
	if (show && cap.len)
		fputs(cap.buf, stderr);
	free(cap.buf);
	cap.buf = NULL;
	cap.len = cap.cap = 0;
}

/* line [s, e) copied, NUL-terminated, into out */
static void copy_line(char *out, size_t len, const char *s, const char *e)
{
	size_t n = (size_t)(e - s);
	if (n >= len)
		n = len - 1;
	memcpy(out, s, n);
	out[n] = 0;
}

bool kattach_verdict_read(struct kattach_verdict *v)
{
	memset(v, 0, sizeof(*v));
	if (!cap.buf)
		return false;
	const char *log = cap.buf;
	/* libbpf: prog 'NAME': BPF program load failed */
	const char *p = strstr(log, "libbpf: prog '");
	if (!p)
		return false;
	p += strlen("libbpf: prog '");
	const char *q = strchr(p, '\'');
	if (!q)
		return false;
	copy_line(v->prog, sizeof(v->prog), p, q);
	const char *begin = strstr(q, "-- BEGIN PROG LOAD LOG --");
	const char *end = begin ? strstr(begin, "-- END PROG LOAD LOG --") : NULL;
	if (!end)
		return false;
	/* the verifier's message is the log's last line before its
	 * "processed N insns" summary; the source line, the last "; ... @"
	 * line, when none comes after the message */
	const char *stop = end, *msg = NULL, *src = NULL, *msg_src = NULL;
	for (const char *l = strchr(begin, '\n'); l && ++l < end; l = strchr(l, '\n')) {
		if (!strncmp(l, "processed ", 10)) {
			stop = l;
			break;
		}
		if (*l == ';')
			src = l;
		else if (*l != '\n')
			msg = l, msg_src = src;
	}
	if (src != msg_src)
		src = NULL;
	if (!msg)
		return false;
	copy_line(v->message, sizeof(v->message), msg, strchr(msg, '\n') ? strchr(msg, '\n') : stop);
	if (src) {
		const char *e = strchr(src, '\n');
		copy_line(v->source, sizeof(v->source), src + 1, e ? e : stop);
		/* "; TEXT @ FILE:LINE": TEXT, and FILE:LINE apart */
		char *at = strstr(v->source, " @ ");
		if (at) {
			snprintf(v->where, sizeof(v->where), "%s", at + 3);
			*at = 0;
		}
		char *t = v->source;
		while (*t == ' ' || *t == '\t')
			t++;
		memmove(v->source, t, strlen(t) + 1);
	}
	return true;
}
