/* Starting the traced CUDA program with the device runtime preloaded
 * and the session segment inherited (abi/session.h). */
#ifndef GPUX_TRACED_CMD_H
#define GPUX_TRACED_CMD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "options.h"

/* Where libgpux-rt.so is: $GPUX_RT, else beside the gpux binary. 0 with
 * the path in buf, or -1 with a message on stderr if it cannot be read
 * or cannot go in LD_PRELOAD. */
int spawn_runtime_path(char *buf, size_t len);

/* Dispositions and mask the command starts with: gpux's own from before
 * it took SIGINT and SIGTERM over. */
struct spawn_signals {
	sigset_t mask;
	struct sigaction sigint, sigterm, sigusr1, sigchld;
};

/* The controller's signal handling: SIGINT, SIGTERM, SIGUSR1 and SIGCHLD
 * (which only wakes the wait up) go to handler
 * and are blocked except inside a wait on *open (ppoll), so none is
 * lost between a check and the wait. old keeps what to restore, and
 * what a started command gets back. */
void spawn_signals_catch(struct spawn_signals *old, sigset_t *open, void (*handler)(int));
void spawn_signals_restore(const struct spawn_signals *old);

/* In the traced program's process, before exec: the environment the
 * device runtime expects (GPUX_SESSION naming the segment seg_fd, which
 * the parent, gpux, has filled and holds; rt first in LD_PRELOAD,
 * CUPY_COMPILE_WITH_PTX=1 unless set). 0, or -1. */
int spawn_runtime_env(int seg_fd, const char *rt);

/* Forks the command of o (-c CMD: /bin/sh -c CMD; -- CMD ARGS: execvp)
 * held before its exec until spawn_release(*go): probes attach in
 * between. Once released, the child calls env(arg) (may be NULL) to set
 * its environment up, then execs; if either fails it says why on stderr
 * and exits 127. Closing *go without releasing makes the child exit 127
 * without running anything. The child's pid, or -1 with a message. */
pid_t spawn_held(const struct options *o, const struct spawn_signals *sig, int *go,
		 int (*env)(void *), void *arg);
/* Lets the held child run and closes go. */
void spawn_release(int go);

/* Reaps pid if it has left: true, with its status. A child that is not
 * ours any more (ECHILD) counts as gone, status 0. */
bool spawn_reaped(pid_t pid, int *status);
/* Sleeps ms milliseconds (the controller's polling waits). */
void spawn_sleep_ms(long ms);

/* Sends sig to pid and to every process descended from it (found in
 * /proc now): under -c the program is the shell's child, and a shell
 * killed by SIGTERM leaves its children running. */
void spawn_signal_tree(pid_t pid, int sig);

#endif
