/* cat() and system() records (output.h): what they name is read or run
 * here, in gpux, when the record arrives, as bpftrace does. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

/* At most max bytes of f into a malloc'd buffer (*n bytes); NULL if
 * memory ran out. */
static char *slurp(FILE *f, size_t max, size_t *n)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, n);
	if (!m)
		return NULL;
	char chunk[4096];
	size_t got, left = max;
	while (left && (got = fread(chunk, 1, left < sizeof(chunk) ? left : sizeof(chunk), f)) > 0) {
		fwrite(chunk, 1, got, m);
		left -= got;
	}
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void put(FILE *out, bool json, const char *type, const char *s, size_t n)
{
	if (json)
		out_text_record(out, type, s, n);
	else
		fwrite(s, 1, n, out);
}

void out_cat(FILE *out, bool json, const struct host_fmt *fmt, const unsigned char *rec,
	     size_t len)
{
	size_t n;
	char *path = out_format(fmt, rec, len, &n);
	if (!path)
		return;
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "ERROR: failed to open file '%s': %s\n", path, strerror(errno));
		if (json) /* bpftrace 0.17 still writes the (empty) record */
			out_text_record(out, "cat", "", 0);
		free(path);
		return;
	}
	/* as much as bpftrace's cat() prints: BPFTRACE_CAT_BYTES_MAX, else
	 * 10 KiB (the command line checked the variable) */
	const char *cap = getenv("BPFTRACE_CAT_BYTES_MAX");
	size_t max = cap && *cap ? (size_t)strtoull(cap, NULL, 10) : 10240;
	char *text = slurp(f, max, &n);
	fclose(f);
	if (text)
		put(out, json, "cat", text, n);
	free(text);
	free(path);
}

void out_system(FILE *out, bool json, const struct host_fmt *fmt, const unsigned char *rec,
		size_t len)
{
	size_t n;
	char *cmd = out_format(fmt, rec, len, &n);
	if (!cmd)
		return;
	fflush(out); /* the command's own stderr may interleave */
	FILE *p = popen(cmd, "r");
	if (!p) {
		fprintf(stderr, "ERROR: cannot run '%s': %s\n", cmd, strerror(errno));
		free(cmd);
		return;
	}
	char *text = slurp(p, SIZE_MAX, &n);
	pclose(p);
	if (text)
		put(out, json, "syscall", text, n);
	free(text);
	free(cmd);
}

void out_join(FILE *out, bool json, const char *delim, const unsigned char *rec, size_t len)
{
	uint64_t n;
	memcpy(&n, rec + 8, 8);
	if (n > HOST_JOIN_MAX || len < HOST_JOIN_BYTES)
		return;
	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);
	if (!m)
		return;
	for (uint64_t i = 0; i < n; i++) {
		const char *s = (const char *)rec + 16 + i * HOST_JOIN_STR;
		fprintf(m, "%s%.*s", i ? delim : "", (int)strnlen(s, HOST_JOIN_STR), s);
	}
	if (fclose(m)) {
		free(buf);
		return;
	}
	if (json)
		out_text_record(out, "join", buf, size);
	else
		fprintf(out, "%.*s\n", (int)size, buf);
	free(buf);
}
