/* For the test programs of tests/rt that gpux -p attaches to (drv_app
 * late and busy, gpa_app late): says "WHO: waiting" and waits for a
 * SIGUSR1, which comes once the runtime is loaded into the process. */
#ifndef GPUX_RT_LATE_H
#define GPUX_RT_LATE_H

#include <signal.h>
#include <stdio.h>

static volatile sig_atomic_t late_go;

static inline void late_usr1(int sig)
{
	(void)sig;
	late_go = 1;
}

/* As late_wait, but the caller's thread spends the wait inside the
 * driver: in fake_cuda_hold (tests/rt/fake_cuda.c), its lock held, a
 * millisecond at a time. */
static inline void late_busy(const char *who, void (*hold)(unsigned))
{
	signal(SIGUSR1, late_usr1);
	printf("%s: waiting\n", who);
	fflush(stdout);
	while (!late_go)
		hold(1);
}

static inline void late_wait(const char *who)
{
	sigset_t usr1, none;
	sigemptyset(&none);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	signal(SIGUSR1, late_usr1);
	printf("%s: waiting\n", who);
	fflush(stdout);
	while (!late_go)
		sigsuspend(&none);
	sigprocmask(SIG_UNBLOCK, &usr1, NULL);
}

#endif
