/* A whole file as a NUL-terminated string, for the test programs of
 * tests/rt (drv_app, api_app); exits on failure. */
#ifndef GPUX_RT_SLURP_H
#define GPUX_RT_SLURP_H

#include <stdio.h>
#include <stdlib.h>

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		perror(path);
		exit(1);
	}
	buf[n] = 0;
	fclose(f);
	return buf;
}

#endif
