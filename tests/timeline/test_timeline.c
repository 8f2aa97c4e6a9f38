/* The timeline writer alone (timeline.h): strings a traced program could
 * send (quotes, backslashes, control characters, invalid UTF-8) as JSON
 * escapes, valid UTF-8 kept; the file whole after every flush; a pipe
 * (written straight through, closed at the end); a write that fails
 * (the file size limit) undone back to the last flush. Writes DIR/unit.json
 * and DIR/cut.json for validate_trace.py to read.
 *   test_timeline DIR */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "timeline.h"

static int failures;

#define CHECK(c)                                                                \
	do {                                                                    \
		if (!(c)) {                                                     \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__,  \
				__LINE__, #c);                                  \
			failures++;                                             \
		}                                                               \
	} while (0)

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = malloc(1 << 20);
	*n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
	if (buf)
		buf[*n] = 0;
	fclose(f);
	return buf;
}

static bool ends_whole(const char *path)
{
	size_t n;
	char *s = slurp(path, &n);
	bool ok = s && n >= 4 && !memcmp(s + n - 4, "\n]}\n", 4) &&
		  !strncmp(s, "{\"displayTimeUnit\":\"ns\"", 23);
	free(s);
	return ok;
}

static bool file_has(const char *path, const char *needle)
{
	size_t n;
	char *s = slurp(path, &n);
	bool ok = s && strstr(s, needle);
	if (!ok)
		fprintf(stderr, "%s lacks %s\n", path, needle);
	free(s);
	return ok;
}

static const struct tl_dims dims = { { 4, 1, 1 }, { 64, 1, 1 }, 128 };

static void hostile(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/unit.json", dir);
	struct timeline *tl;
	char err[512];
	CHECK(timeline_open(&tl, path, 1000000, err, sizeof(err)) == 0);
	if (!tl)
		return;
	CHECK(ends_whole(path));
	timeline_gpu_name(tl, 0, "NVIDIA H200");
	/* quote, backslash, newline, tab, ^A, DEL; U+00E9, U+20AC, U+1F600;
	 * a lone 0xff, an overlong '/', a surrogate, a cut sequence */
	static const char name[] = "k\"q\\b\n\t\x01\x7f \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 "
				   "\xff \xc0\xaf \xed\xa0\x80 \xe2\x82";
	timeline_kernel(tl, 0, 42, 0x7f00, name, 1000000, 1004000, &dims);
	timeline_kernel(tl, 0, 42, 0x7f00, "inner", 1001000, 1002000, &dims);
	struct tl_call c = { 1000500, 42, 43, 0, "wor\x01ker" };
	timeline_launch(tl, &c, name, 0x7f00, &dims);
	timeline_memcpy(tl, &c, 4096, "Ht\"oD", 0x7f00, true, 1, 2);
	timeline_memcpy(tl, &c, 4096, "HtoD", 0, false, 1, 2);
	timeline_sync(tl, &c, 0);
	timeline_sync(tl, &c, 0x7f00);
	timeline_malloc(tl, &c, 0x1000, 4096, true);
	timeline_free(tl, &c, 0x1000);
	timeline_module(tl, &c, 0xabc, 100, true);
	timeline_flush(tl);
	CHECK(ends_whole(path));
	timeline_printf(tl, 1003000, "line one\nline two\n", 18);
	char *series[] = { "a\"b", "\xff" };
	int64_t vals[] = { 3, -4 };
	timeline_counter(tl, 1003000, "@m", 2, series, vals);
	timeline_counter(tl, 1003000, "@n", 0, NULL, vals);
	/* a GPU past the tracks' ordinals, a kernel ending before it starts */
	timeline_kernel(tl, 4000, 42, 0, "far", 1005000, 1004000, &dims);
	uint64_t kernels, events;
	timeline_counts(tl, &kernels, &events);
	CHECK(kernels == 3);
	CHECK(timeline_close(tl, stderr) == 0);
	CHECK(ends_whole(path));
	CHECK(file_has(path, "\"name\":\"k\\\"q\\\\b\\n\\t\\u0001\\u007f \xc3\xa9\xe2\x82\xac"
			     "\xf0\x9f\x98\x80 \\ufffd \\ufffd\\ufffd \\ufffd\\ufffd\\ufffd "
			     "\\ufffd\\ufffd\""));
	CHECK(file_has(path, "\"name\":\"GPU 0 (NVIDIA H200)\""));
	CHECK(file_has(path, "\"name\":\"wor\\u0001ker (tid 43)\""));
	CHECK(file_has(path, "\"ts\":0.000,\"dur\":4.000"));
	CHECK(file_has(path, "\"dur\":0.000"));
	CHECK(file_has(path, "\"args\":{\"a\\\"b\":3,\"\\ufffd\":-4}"));
	CHECK(file_has(path, "\"name\":\"line one\""));
	CHECK(file_has(path, "\"text\":\"line one\\nline two\""));
}

/* A pipe is written as events come and closed at the end. */
static void piped(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	char path[64], err[512];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[1]);
	struct timeline *tl;
	CHECK(timeline_open(&tl, path, 0, err, sizeof(err)) == 0);
	close(p[1]);
	timeline_kernel(tl, 1, 7, 0, "k", 10, 20, &dims);
	timeline_flush(tl);
	CHECK(timeline_close(tl, stderr) == 0);
	char buf[4096];
	ssize_t n, got = 0;
	while ((n = read(p[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	close(p[0]);
	buf[got > 0 ? got : 0] = 0;
	CHECK(got > 4 && !memcmp(buf + got - 4, "\n]}\n", 4));
	CHECK(strstr(buf, "\"name\":\"GPU 1\"") != NULL);
}

/* Past the file size limit: the close goes back to the last flush. */
static void cut(const char *dir)
{
	char path[4096], err[512];
	snprintf(path, sizeof(path), "%s/cut.json", dir);
	unlink(path);
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit lim = { 8192, 8192 };
	CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	struct timeline *tl;
	CHECK(timeline_open(&tl, path, 0, err, sizeof(err)) == 0);
	if (!tl)
		return;
	int i;
	for (i = 0; i < 1000; i++) {
		timeline_kernel(tl, 0, 1, 0, "kernel", (uint64_t)i * 10, (uint64_t)i * 10 + 5, &dims);
		timeline_flush(tl);
	}
	FILE *devnull = fopen("/dev/null", "w");
	CHECK(timeline_close(tl, devnull) == -1);
	fclose(devnull);
	CHECK(ends_whole(path));
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_timeline DIR\n");
		return 2;
	}
	hostile(argv[1]);
	piped();
	cut(argv[1]);
	if (failures)
		fprintf(stderr, "%d checks failed\n", failures);
	return failures ? 1 : 0;
}
