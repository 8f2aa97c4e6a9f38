/* A program that crashes (SIGSEGV, SIGABRT, ...) keeps what its kernels
 * did: a handler of the fatal signals takes the final snapshot of every
 * context and dumps the cuda: programs' maps, as the exit handlers
 * would, then hands the signal to what was there before (the program's
 * own handler, or the default action). */
#include "rt.h"

#include <signal.h>
#include <string.h>
#include <time.h>

static const int fatal[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
#define NFATAL (sizeof(fatal) / sizeof(fatal[0]))
static struct sigaction before[NFATAL];
static volatile sig_atomic_t flushed;

static void on_fatal(int sig)
{
	size_t i = 0;
	while (i < NFATAL && fatal[i] != sig)
		i++;
	if (!flushed) {
		flushed = 1;
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
