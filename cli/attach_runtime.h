/* gpux -p: the device runtime loaded into a running CUDA process
 * (attach/inject.c) and joined to a session (runtime/rt_attach.c). */
#ifndef GPUX_ATTACH_RUNTIME_H
#define GPUX_ATTACH_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Loads rt into pid and joins it to the session that env
 * (GPUX_SESSION's value) names. 0 with *bound the number of the
 * program's bindings to libcuda that now go through the runtime; -1
 * with err set ("cannot attach to pid N: ..."). */
int attach_runtime(pid_t pid, const char *rt, const char *env, uint32_t *bound, char *err,
		      size_t errlen);

#endif
