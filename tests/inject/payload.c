/* The library inject_test.sh loads into the target: its entry says so
 * on the target's stdout and returns the length of its argument. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int gpux_inject_test(const char *arg);
int gpux_inject_test(const char *arg)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "payload: loaded in pid %d, arg '%s'\n", (int)getpid(),
			 arg);
	if (write(1, line, (size_t)n) < 0)
		return -1;
	return (int)strlen(arg);
}
