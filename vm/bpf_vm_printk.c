/* bpf_trace_printk (debugf()) in the userspace VM: the kernel's helper
 * writes to the trace buffer, so the VM writes the formatted line there
 * too, through tracefs's trace_marker (read it in trace_pipe, as the
 * kernel's). Its conversions: %d %i %u %x %X %p %s %c with l and ll;
 * a string argument is an address in the VM's memory. Without tracefs
 * (or the right to write it) the line goes nowhere, as the kernel's does
 * when nobody reads the buffer. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bpf_vm_priv.h"

#define LINE_MAX_BYTES 512

static int marker = -2; /* -2: not tried; -1: none */

static int marker_fd(void)
{
	static const char *const paths[] = { "/sys/kernel/tracing/trace_marker",
					     "/sys/kernel/debug/tracing/trace_marker" };
	for (size_t i = 0; marker == -2 && i < sizeof(paths) / sizeof(paths[0]); i++) {
		int fd = open(paths[i], O_WRONLY | O_CLOEXEC);
		if (fd >= 0)
			marker = fd;
	}
	if (marker == -2)
		marker = -1;
	return marker;
}

/* The NUL-terminated string at addr in the VM's memory, at most n bytes,
 * into out. */
static void vm_str(struct vm_exec *x, uint64_t addr, char *out, size_t n)
{
	size_t i = 0;
	for (; i + 1 < n; i++) {
		const char *c = vm_mem(x, addr + i, 1, false);
		if (!c || !*c)
			break;
		out[i] = *c;
	}
	out[i] = '\0';
}

int64_t vm_trace_printk(struct vm_exec *x, const uint64_t *r)
{
	char fmt[LINE_MAX_BYTES], line[LINE_MAX_BYTES];
	uint64_t fsize = r[2] < sizeof(fmt) ? r[2] : sizeof(fmt) - 1;
	const char *f = vm_mem(x, r[1], fsize, false);
	if (!f || !fsize)
		return -14; /* EFAULT */
	memcpy(fmt, f, fsize);
	fmt[fsize] = '\0';
	size_t o = 0;
	int arg = 0;
	for (const char *p = fmt; *p && o + 1 < sizeof(line); p++) {
		if (*p != '%' || p[1] == '%') {
			line[o++] = *p;
			p += *p == '%';
			continue;
		}
		const char *s = p + 1;
		int longs = 0;
		while (*s == 'l' && longs < 2)
			s++, longs++;
		uint64_t v = arg < 3 ? r[3 + arg] : 0;
		char buf[LINE_MAX_BYTES];
		switch (*s) {
		case 'd': case 'i':
			snprintf(buf, sizeof(buf), "%lld",
				 longs ? (long long)v : (long long)(int32_t)v);
			break;
		case 'u':
			snprintf(buf, sizeof(buf), "%llu", longs ? (unsigned long long)v
							      : (unsigned long long)(uint32_t)v);
			break;
		case 'x': case 'X':
			snprintf(buf, sizeof(buf), *s == 'x' ? "%llx" : "%llX",
				 longs ? (unsigned long long)v : (unsigned long long)(uint32_t)v);
			break;
		case 'p':
			snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
			break;
		case 'c':
			snprintf(buf, sizeof(buf), "%c", (char)v);
			break;
		case 's':
			vm_str(x, v, buf, sizeof(buf));
			break;
		default:
			return -22; /* EINVAL: the kernel refuses the format too */
		}
		arg++;
		size_t n = strnlen(buf, sizeof(buf));
		if (n > sizeof(line) - 1 - o)
			n = sizeof(line) - 1 - o;
		memcpy(line + o, buf, n);
		o += n;
		p = s;
	}
	int fd = marker_fd();
	if (fd >= 0 && o && write(fd, line, o) < 0)
		return -5; /* EIO */
	return (int64_t)o;
}
