/* printf and time() records, the attach line, json strings (output.h). */
#include "output.h"
#include "out_syms.h"
#include "host_cgroup.h"

#include <arpa/inet.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* An argument's 8 bytes, narrowed to its type's width and extended
 * back: codegen stores the value as a 64-bit slot. */
static uint64_t arg_u64(const struct host_fmt_arg *a, const unsigned char *rec)
{
	uint64_t v;
	memcpy(&v, rec + a->offset, 8);
	unsigned bits = a->type.kind == TY_INT ? a->type.bits : 64;
	if (bits && bits < 64) {
		uint64_t mask = (1ull << bits) - 1;
		v &= mask;
		if (a->type.is_signed && (v >> (bits - 1)) & 1)
			v |= ~mask;
	}
	return v;
}

const char *out_username(uint64_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];
	if (getpwuid_r((uid_t)uid, &pw, tmp, sizeof(tmp), &res) == 0 && res)
		snprintf(buf, len, "%s", res->pw_name);
	else
		snprintf(buf, len, "%llu", (unsigned long long)uid);
	return buf;
}

/* A buffer's bytes as printf's %r prints them (conv 'r': the printable
 * ones as they are, the rest \xNN), %rx ('R': every one \xNN) or %rh
 * ('H': every one in hex, a space between). */
static void buf_bytes(FILE *out, const unsigned char *p, size_t cap, char conv)
{
	uint64_t n;
	memcpy(&n, p, 8);
	if (n > BUF_MAX)
		n = BUF_MAX;
	if (n > cap)
		n = cap;
	for (uint64_t i = 0; i < n; i++) {
		unsigned char c = p[8 + i];
		if (conv == 'H')
			fprintf(out, i ? " %02x" : "%02x", c);
		else if (conv == 'r' && c >= 0x20 && c <= 0x7e)
			fputc(c, out);
		else
			fprintf(out, "\\x%02x", c);
	}
}

void out_buf(FILE *out, const unsigned char *p)
{
	buf_bytes(out, p, BUF_MAX, 'r');
}

const char *out_strerror(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX ? strerror((int)v) : "Unknown error";
}

const char *out_macaddr(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", (unsigned)(v & 0xff),
		 (unsigned)(v >> 8 & 0xff), (unsigned)(v >> 16 & 0xff), (unsigned)(v >> 24 & 0xff),
		 (unsigned)(v >> 32 & 0xff), (unsigned)(v >> 40 & 0xff));
	return buf;
}

const char *out_inet(const unsigned char *p, char *buf, size_t len)
{
	uint64_t af;
	memcpy(&af, p, 8);
	if (!inet_ntop(af == AF_INET6 ? AF_INET6 : AF_INET, p + 8, buf, (socklen_t)len))
		buf[0] = '\0';
	return buf;
}

const char *out_timestamp(const char *fmt, uint64_t ns, char *buf, size_t len)
{
	/* ns since boot: the wall clock at boot plus ns, as bpftrace has it */
	struct timespec rt, bt;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	int64_t boot = ((int64_t)rt.tv_sec - bt.tv_sec) * 1000000000 + rt.tv_nsec - bt.tv_nsec;
	time_t t = (time_t)((boot + (int64_t)ns) / 1000000000);
	struct tm tm;
	if (!localtime_r(&t, &tm) || !strftime(buf, len, fmt ? fmt : "", &tm))
		buf[0] = '\0';
	return buf;
}

/* One conversion: spec is "%" flags width precision conv, without any
 * length modifier; wide says an l/ll/j/z/t length was written. */
static void convert(FILE *out, const char *spec, char conv, bool wide,
		    const struct host_fmt_arg *a, const unsigned char *rec)
{
	char buf[64];
	size_t n = strlen(spec);
	if (a->type.kind == TY_BUF && (conv == 'r' || conv == 'R' || conv == 'H')) {
		if (a->size >= 8) /* a printf argument's buf() holds size - 8 bytes */
			buf_bytes(out, rec + a->offset, a->size - 8, conv);
		return;
	}
	if (a->type.kind == TY_CGROUP_PATH && conv == 's') {
		uint64_t v;
		memcpy(&v, rec + a->offset, 8);
		char *p = host_cgroup_path(v, a->type.name);
		fprintf(out, spec, p ? p : "");
		free(p);
		return;
	}
	if (a->type.kind == TY_ERRNO && conv == 's') {
		int64_t v;
		memcpy(&v, rec + a->offset, 8);
		fprintf(out, spec, out_strerror(v));
		return;
	}
	if (a->type.kind == TY_MACADDR && conv == 's') {
		char mac[32];
		uint64_t v;
		memcpy(&v, rec + a->offset, 8);
		fprintf(out, spec, out_macaddr(v, mac, sizeof(mac)));
		return;
	}
	if (a->type.kind == TY_INET && conv == 's') {
		char ip[64];
		if (a->size >= INET_SIZE)
			fprintf(out, spec, out_inet(rec + a->offset, ip, sizeof(ip)));
		return;
	}
	if (a->type.kind == TY_TIMESTAMP && conv == 's') {
		char ts[256];
		uint64_t ns;
		memcpy(&ns, rec + a->offset, 8);
		fprintf(out, spec, out_timestamp(a->type.name, ns, ts, sizeof(ts)));
		return;
	}
	if ((a->type.kind == TY_STACK || a->type.kind == TY_KSYM || a->type.kind == TY_USYM) &&
	    conv == 's') {
		char *text = out_sym_text(a->type, rec + a->offset, 8);
		if (text)
			fprintf(out, spec, text);
		free(text);
		return;
	}
	if (a->type.kind == TY_USERNAME && conv == 's') {
		uint64_t uid;
		memcpy(&uid, rec + a->offset, 8);
		fprintf(out, spec, out_username(uid, buf, sizeof(buf)));
		return;
	}
	if (a->type.kind == TY_STR && conv == 's') {
		/* strings are fixed-size arrays, maybe not NUL-terminated */
		char *s = malloc(a->size + 1);
		if (!s)
			return;
		memcpy(s, rec + a->offset, a->size);
		s[a->size] = '\0';
		fprintf(out, spec, s);
		free(s);
		return;
	}
	uint64_t v = a->type.kind == TY_STR ? 0 : arg_u64(a, rec);
	switch (conv) {
	case 'd': case 'i':
		if (!wide) {
			fprintf(out, spec, (int)v);
			return;
		}
		snprintf(buf, sizeof(buf), "%.*sll%c", (int)n - 1, spec, conv);
		fprintf(out, buf, (long long)v);
		return;
	case 'u': case 'x': case 'X': case 'o':
		if (!wide) {
			fprintf(out, spec, (unsigned)v);
			return;
		}
		snprintf(buf, sizeof(buf), "%.*sll%c", (int)n - 1, spec, conv);
		fprintf(out, buf, (unsigned long long)v);
		return;
	case 'c':
		fprintf(out, spec, (int)(unsigned char)v);
		return;
	case 'p':
		fprintf(out, spec, (void *)(uintptr_t)v);
		return;
	case 's': /* an integer printed with %s: its decimal text */
		snprintf(buf, sizeof(buf), "%lld", (long long)v);
		fprintf(out, spec, buf);
		return;
	default:
		fputs(spec, out);
	}
}

static void put_printf(FILE *out, const struct host_fmt *fmt, const unsigned char *rec,
		       size_t len)
{
	const char *p = fmt->fmt;
	int argi = 0;
	while (*p) {
		if (*p != '%') {
			const char *q = strchr(p, '%');
			size_t n = q ? (size_t)(q - p) : strlen(p);
			fwrite(p, 1, n, out);
			p += n;
			continue;
		}
		if (p[1] == '%') {
			fputc('%', out);
			p += 2;
			continue;
		}
		char spec[48];
		size_t n = 0;
		bool wide = false;
		spec[n++] = *p++;
		while (*p && strchr("-+ #0123456789.", *p) && n < sizeof(spec) - 2)
			spec[n++] = *p++;
		while (*p && strchr("hlLqjzt", *p))
			wide |= *p++ != 'h';
		if (!*p)
			break;
		char conv = *p++;
		spec[n++] = conv;
		spec[n] = '\0';
		if (conv == 'r' && (*p == 'x' || *p == 'h')) { /* %rx, %rh: bpftrace's hex */
			conv = *p++ == 'x' ? 'R' : 'H';
		}
		if (argi >= fmt->nargs ||
		    fmt->args[argi].offset + fmt->args[argi].size > len) {
			fputs(spec, out); /* the front end checks counts; be safe */
			continue;
		}
		convert(out, spec, conv, wide, &fmt->args[argi++], rec);
	}
}

void out_json_str(FILE *out, const char *s, size_t n)
{
	fputc('"', out);
	for (size_t i = 0; i < n; i++) {
		signed char c = (signed char)s[i];
		switch (c) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (c <= 0x1f) /* bpftrace streams (int)c with std::hex */
				fprintf(out, "\\u%04x", (unsigned)(int)c);
			else
				fputc(c, out);
		}
	}
	fputc('"', out);
}

void out_tuple(FILE *out, bool json, struct type t, const unsigned char *p)
{
	fputc(json ? '[' : '(', out);
	for (int i = 0; t.tuple && i < t.tuple->n; i++) {
		struct type e = t.tuple->elem[i];
		const unsigned char *v = p + tuple_off(t, i);
		if (i)
			fputs(json ? "," : ", ", out);
		if (e.kind == TY_TUPLE) {
			out_tuple(out, json, e, v);
		} else if (e.kind == TY_RECORD || e.kind == TY_ARRAY) {
			out_cvalue(out, json, e, v);
		} else if (e.kind == TY_STR) {
			size_t n = strnlen((const char *)v, TUPLE_STR_SIZE);
			if (json)
				out_json_str(out, (const char *)v, n);
			else
				fwrite(v, 1, n, out);
		} else if (e.kind == TY_TIMESTAMP || e.kind == TY_MACADDR || e.kind == TY_ERRNO ||
			   e.kind == TY_USERNAME) {
			char text[256];
			uint64_t x;
			memcpy(&x, v, 8);
			const char *s = e.kind == TY_TIMESTAMP ? out_timestamp(e.name, x, text, sizeof(text))
				      : e.kind == TY_MACADDR ? out_macaddr(x, text, sizeof(text))
				      : e.kind == TY_ERRNO ? out_strerror((int64_t)x)
				      : out_username(x, text, sizeof(text));
			if (json)
				out_json_str(out, s, strlen(s));
			else
				fputs(s, out);
		} else {
			int64_t x;
			memcpy(&x, v, 8);
			if (e.is_signed || e.kind == TY_POINTER) /* bpftrace's: addresses signed */
				fprintf(out, "%lld", (long long)x);
			else
				fprintf(out, "%llu", (unsigned long long)x);
		}
	}
	fputc(json ? ']' : ')', out);
}

/* {"type": "TYPE", "data": "TEXT"} */
static void json_msg(FILE *out, const char *type, const char *s, size_t n)
{
	fprintf(out, "{\"type\": \"%s\", \"data\": ", type);
	out_json_str(out, s, n);
	fputs("}\n", out);
}

void out_printf(FILE *out, bool json, const struct host_fmt *fmt,
		const unsigned char *rec, size_t len)
{
	enum type_kind vk = fmt->args[0].type.kind;
	if (fmt->kind == HOST_FMT_VALUE && fmt->nargs == 1 &&
	    (vk == TY_TUPLE || vk == TY_RECORD || vk == TY_ARRAY) &&
	    fmt->args[0].offset + tuple_size(fmt->args[0].type) <= len) {
		/* print($t): (1, ab) or {"type": "value", "data": [1,"ab"]} */
		if (json)
			fputs("{\"type\": \"value\", \"data\": ", out);
		if (vk == TY_TUPLE)
			out_tuple(out, json, fmt->args[0].type, rec + fmt->args[0].offset);
		else
			out_cvalue(out, json, fmt->args[0].type, rec + fmt->args[0].offset);
		fputs(json ? "}\n" : "\n", out);
		return;
	}
	if (!json) {
		put_printf(out, fmt, rec, len);
		return;
	}
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	if (!m)
		return;
	put_printf(m, fmt, rec, len);
	if (fclose(m)) {
		free(buf);
		return;
	}
	if (fmt->kind == HOST_FMT_VALUE && fmt->nargs == 1) {
		/* print(value): {"type": "value", "data": 5 or "text"} */
		if (n && buf[n - 1] == '\n')
			n--;
		fputs("{\"type\": \"value\", \"data\": ", out);
		if (fmt->args[0].type.kind == TY_STR || type_prints_as_text(fmt->args[0].type) ||
		    fmt->args[0].type.kind == TY_INET || fmt->args[0].type.kind == TY_STACK ||
		    fmt->args[0].type.kind == TY_KSYM ||
		    fmt->args[0].type.kind == TY_USYM) /* bpftrace: bare, not json */
			out_json_str(out, buf, n);
		else
			fwrite(buf, 1, n, out);
		fputs("}\n", out);
	} else {
		json_msg(out, "printf", buf, n);
	}
	free(buf);
}

char *out_format(const struct host_fmt *fmt, const unsigned char *rec, size_t len,
		 size_t *n)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, n);
	if (!m)
		return NULL;
	put_printf(m, fmt, rec, len);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

void out_text_record(FILE *out, const char *type, const char *s, size_t n)
{
	json_msg(out, type, s, n);
}

void out_time(FILE *out, bool json, const char *fmt)
{
	char buf[512];
	time_t now = time(NULL);
	struct tm tm;
	if (!localtime_r(&now, &tm) || strftime(buf, sizeof(buf), fmt, &tm) == 0) {
		/* bpftrace 0.17, text or json: this on stderr, no record */
		fputs("ERROR: strftime returned 0\n", stderr);
		return;
	}
	if (json)
		json_msg(out, "time", buf, strlen(buf));
	else
		fputs(buf, out);
}

void out_attached(FILE *out, bool json, int n)
{
	if (json)
		fprintf(out, "{\"type\": \"attached_probes\", \"data\": {\"probes\": %d}}\n", n);
	else
		fprintf(out, "Attaching %d probe%s...\n", n, n == 1 ? "" : "s");
}
