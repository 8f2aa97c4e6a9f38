/* gpux -p's loading of the device runtime (attach_runtime.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "attach_runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inject.h"
#include "session.h"

#define CALL_TIMEOUT_MS 2000
/* the runtime's attach scans the program's objects and binds every
 * entry point: seconds in a large process */
#define ANSWER_TIMEOUT_MS 60000

/* A copy of the runtime in a file of its own, for a process an earlier
 * gpux -p loaded it into: that instance belongs to its session, the
 * loader would hand it out again for the same file, and a copy is a new
 * instance. The caller unlinks it once loaded (the mapping stays). */
static int runtime_copy(const char *rt, char *path, size_t len)
{
	const char *dir = getenv("TMPDIR");
	snprintf(path, len, "%s/gpux-rt-XXXXXX.so", dir && *dir ? dir : "/tmp");
	int out = mkstemps(path, 3);
	if (out < 0)
		return -1;
	FILE *in = fopen(rt, "rb");
	char buf[65536];
	size_t n;
	int rc = in ? 0 : -1;
	while (!rc && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (write(out, buf, n) != (ssize_t)n)
			rc = -1;
	if (in && ferror(in))
		rc = -1;
	if (in)
		fclose(in);
	if (fchmod(out, 0644))
		rc = -1;
	close(out);
	if (rc)
		unlink(path);
	return rc;
}

/* The runtime's answer to joining the session (abi/session.h,
 * GPUX_ATTACH_ENTRY): loaded from lib, its entry started, waited for. */
static int start(pid_t pid, const char *lib, const char *env, int64_t *ans, char *err,
		 size_t errlen)
{
	uint64_t ret = 0, val = 0;
	if (inject_library(pid, lib, GPUX_ATTACH_ENTRY, env, &ret, CALL_TIMEOUT_MS, err, errlen))
		return -1;
	if ((int64_t)ret < 0) {
		*ans = (int64_t)ret;
		return 0;
	}
	if (inject_wait_word(pid, ret, (uint64_t)GPUX_ATTACH_PENDING, ANSWER_TIMEOUT_MS, &val, err,
			     errlen))
		return -1;
	*ans = (int64_t)val;
	return 0;
}

int attach_runtime(pid_t pid, const char *rt, const char *env, uint32_t *bound, char *err,
		      size_t errlen)
{
	int64_t ans = 0;
	char copy[4096];
	if (start(pid, rt, env, &ans, err, errlen))
		return -1;
	if (ans == -2) { /* gpux attached to it before */
		if (runtime_copy(rt, copy, sizeof(copy))) {
			snprintf(err, errlen, "cannot attach to pid %d: cannot copy %s: %s", (int)pid,
				 rt, strerror(errno));
			return -1;
		}
		int rc = start(pid, copy, env, &ans, err, errlen);
		unlink(copy);
		if (rc)
			return -1;
	}
	if (ans < 0) {
		snprintf(err, errlen, "cannot attach to pid %d: %s", (int)pid,
			 ans == -3 ? "another gpux is tracing it"
				   : "gpux's runtime could not join the session there");
		return -1;
	}
	*bound = ans > UINT32_MAX ? UINT32_MAX : (uint32_t)ans;
	return 0;
}
