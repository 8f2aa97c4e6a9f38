/* The Sanitizer's patch and boot modules (runtime/sass_ptx.c) made from
 * a probe module as gpux --emit writes it (device.ptx):
 *   sass_ptx_tool MODULE NMAPS OUT_PATCH OUT_BOOT KIND[:ONLY]:FUNC...
 * KIND: entry, exit, access or func_entry (which no callback calls); ONLY: GPUX_SITE_* bits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sass_ptx.h"

static int kind_of(const char *s, size_t n)
{
	if (n == 5 && !strncmp(s, "entry", 5))
		return PTX_SITE_KERNEL_ENTRY;
	if (n == 4 && !strncmp(s, "exit", 4))
		return PTX_SITE_KERNEL_EXIT;
	if (n == 6 && !strncmp(s, "access", 6))
		return PTX_SITE_ACCESS;
	if (n == 10 && !strncmp(s, "func_entry", 10))
		return PTX_SITE_FUNC_ENTRY;
	return -1;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	long n = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
	if (n >= 0 && !fseek(f, 0, SEEK_SET) && (buf = malloc((size_t)n + 1)) &&
	    fread(buf, 1, (size_t)n, f) == (size_t)n) {
		buf[n] = 0;
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0) {
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f);
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: %s MODULE NMAPS PATCH BOOT KIND[:ONLY]:FUNC...\n", argv[0]);
		return 2;
	}
	size_t len;
	char *module = read_all(argv[1], &len);
	if (!module) {
		perror(argv[1]);
		return 2;
	}
	int n = argc - 5;
	struct ptx_probe *pr = calloc((size_t)n, sizeof(*pr));
	if (!pr)
		return 2;
	for (int i = 0; i < n; i++) {
		const char *spec = argv[5 + i];
		const char *c1 = strchr(spec, ':'), *last = strrchr(spec, ':');
		int kind = c1 ? kind_of(spec, (size_t)(c1 - spec)) : -1;
		if (kind < 0) {
			fprintf(stderr, "bad probe %s\n", spec);
			return 2;
		}
		pr[i].kind = (enum ptx_site_kind)kind;
		pr[i].only = c1 != last ? (unsigned)strtoul(c1 + 1, NULL, 0) : 0;
		pr[i].func = last + 1;
	}
	struct sass_ptx out;
	char err[256];
	int rc = sass_ptx_make(module, len, pr, n, (unsigned)strtoul(argv[2], NULL, 0), &out, err,
			       sizeof(err));
	if (rc) {
		fprintf(stderr, "sass_ptx_make: %s\n", err);
	} else if (write_file(argv[3], out.patch) || write_file(argv[4], out.boot)) {
		perror("write");
		rc = 2;
	}
	sass_ptx_free(&out);
	free(pr);
	free(module);
	return rc ? 1 : 0;
}
