/* inject_tool PID LIB [ENTRY [ARG]]: attach/inject.c's inject_library on
 * a running process; prints "entry returned N", or the error and exits 1. */
#include <stdio.h>
#include <stdlib.h>

#include "inject.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: inject_tool PID LIB [ENTRY [ARG]]\n");
		return 2;
	}
	char err[512];
	uint64_t ret = 0;
	if (inject_library((pid_t)atoi(argv[1]), argv[2], argc > 3 ? argv[3] : NULL,
			   argc > 4 ? argv[4] : NULL, &ret, 2000, err, sizeof(err))) {
		fprintf(stderr, "gpux: ERROR: %s\n", err);
		return 1;
	}
	printf("entry returned %llu\n", (unsigned long long)ret);
	return 0;
}
