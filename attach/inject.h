/* Loading a library into a running process (x86-64 Linux), for `-p PID`:
 * its main thread is stopped with ptrace, made to call dlopen(lib) and
 * then the library's entry(arg), and resumed where it was, registers
 * (general and extended) and an interrupted system call and all; its
 * other threads run on meanwhile. The C library the target uses must be
 * the one gpux uses (found by file, mapped anywhere): dlopen, dlsym and
 * dlerror are called at their addresses there.
 *
 * The calls run only where the thread holds none of the C library's or
 * the loader's locks: outside them, or waiting in a system call; elsewhere
 * it is let run a millisecond at a time, up to timeout_ms. A call once
 * started is waited for (given up, it would return to nowhere): another
 * thread holding the loader lock delays it as long as it holds it. */
#ifndef GPUX_INJECT_H
#define GPUX_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* 0, with *ret the entry's return value; -1 with err set ("cannot
 * attach to pid N: ..."), the process left as it was (the library stays
 * loaded if only the entry failed). entry may be NULL (dlopen only). */
int inject_library(pid_t pid, const char *lib, const char *entry, const char *arg,
		   uint64_t *ret, int timeout_ms, char *err, size_t errlen);

/* Waits, up to timeout_ms, for the 8 bytes at addr in pid's memory to
 * hold something other than pending (an entry that starts its work on a
 * thread of its own returns where its answer will be: the thread it
 * interrupted must go back to what it was doing before that work takes
 * any lock the thread may hold). 0 with *val, or -1 with err set. */
int inject_wait_word(pid_t pid, uint64_t addr, uint64_t pending, int timeout_ms, uint64_t *val,
		     char *err, size_t errlen);

#endif
