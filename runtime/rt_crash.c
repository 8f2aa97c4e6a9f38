/* A program that crashes (SIGSEGV, SIGABRT, ...) keeps what its kernels
 * did: a handler of the fatal signals takes the final snapshot of every
 * context and dumps the cuda: programs' maps, as the exit handlers
 * would, then hands the signal to what was there before (the program's
 * own handler, or the default action). The snapshot gets 3 s: a crash
 * inside the driver may never let it finish, and the program must die
 * all the same. */
#include "rt.h"

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const int fatal[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
#define NFATAL (sizeof(fatal) / sizeof(fatal[0]))
static struct sigaction before[NFATAL];
static volatile sig_atomic_t flushed;

static volatile sig_atomic_t crashing;

/* The snapshot hangs (the crash left the driver holding a lock of its
 * own): the fatal signal takes its default action now. */
static void on_stuck(int unused)
{
	(void)unused;
	int sig = crashing;
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	raise(sig);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
}

static void on_fatal(int sig)
{
	size_t i = 0;
	while (i < NFATAL && fatal[i] != sig)
		i++;
	if (!flushed) {
		flushed = 1;
		crashing = sig;
		struct sigaction st;
		memset(&st, 0, sizeof(st));
		st.sa_handler = on_stuck;
		sigemptyset(&st.sa_mask);
		sigaction(SIGALRM, &st, NULL);
		alarm(3);
		rt_kend_final(true); /* completions first: the snapshot carries them */
		/* The runtime thread may be mid-snapshot: wait for it a little.
		 * If this thread holds the lock (the crash is the runtime's),
		 * give up rather than deadlock. */
		for (int k = 0; k < 200; k++) {
			if (pthread_mutex_trylock(&rt_lock) == 0) {
				rt_ctx_shutdown();
				pthread_mutex_unlock(&rt_lock);
				rt_host_final();
				break;
			}
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		}
		alarm(0);
	}
	/* blocked while this runs: delivered on return, as before us */
	if (i < NFATAL)
		sigaction(sig, &before[i], NULL);
	raise(sig);
}

void rt_crash_arm(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NFATAL; i++)
		sigaction(fatal[i], &sa, &before[i]);
}
