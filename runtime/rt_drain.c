/* The runtime's one thread: every millisecond it forwards printf records
 * (host memory only, no CUDA call) and looks at cuda:kernel_end's
 * pending launches (rt_kernel_end.c), and every 100 ms, or when the
 * controller asks, it publishes map snapshots (a copy on the runtime's
 * own non-blocking stream: the program's streams are never synchronised).
 * It watches the controller too: once that is gone, it turns the probes
 * off (rt_ctx_detach) and ends. */
#include "rt.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_t thread;
static bool running;
static volatile int stopping;

#define SNAP_NS 100000000ull

uint64_t rt_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

double rt_ms_since(uint64_t t0)
{
	return (double)(rt_now_ns() - t0) / 1e6;
}

/* A descriptor that polls readable once the controller has exited
 * (pidfd), or -1: then kill(pid, 0) says. */
static int watch(uint32_t pid)
{
#ifdef SYS_pidfd_open
	if (pid)
		return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
#endif
	(void)pid;
	return -1;
}

/* The controller is leaving (stop) or gone (SIGKILL, the OOM killer, a
 * closed terminal): nobody reads what the runtime publishes any more. */
static bool controller_gone(const struct gpux_sess_hdr *h, int pfd)
{
	if (__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE))
		return true;
	if (pfd >= 0) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		return poll(&p, 1, 0) > 0;
	}
	return h->ctl_pid && kill((pid_t)h->ctl_pid, 0) && errno == ESRCH;
}

static void *loop(void *arg)
{
	(void)arg;
	struct gpux_sess_hdr *h = rt_sess();
	int pfd = watch(h->ctl_pid);
	uint64_t last = rt_now_ns();
	uint32_t req = __atomic_load_n(&h->snap_req, __ATOMIC_ACQUIRE);
	/* snapshots must not fail while the program captures a graph */
	rt_relaxed_begin();
	while (!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE)) {
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
		if (controller_gone(h, pfd)) {
			pthread_mutex_lock(&rt_lock);
			rt_ctx_detach();
			pthread_mutex_unlock(&rt_lock);
			rt_cupti_stop();
			break;
		}
		rt_live_poll();
		if (h != rt_sess()) { /* a new generation: its requests from now on */
			h = rt_sess();
			req = __atomic_load_n(&h->snap_req, __ATOMIC_ACQUIRE);
		}
		uint64_t t = rt_now_ns();
		uint32_t r = __atomic_load_n(&h->snap_req, __ATOMIC_ACQUIRE);
		bool snap = t - last >= SNAP_NS || r != req;
		pthread_mutex_lock(&rt_lock);
		rt_ctx_poll(snap, false);
		pthread_mutex_unlock(&rt_lock);
		/* the controller asks (it is leaving, or prints): the kernels
		 * ended by now reach the cuda:kernel_end probes before the maps
		 * are dumped, not up to FLUSH_NS later */
		if (r != req)
			rt_cupti_flush(true);
		rt_host_poll(snap);
		rt_kend_poll();
		if (snap) {
			last = t;
			req = r;
		}
	}
	if (pfd >= 0)
		close(pfd);
	return NULL;
}

/* From the first context setup and from the first cuda: event, which
 * may come from two threads at once. */
static bool starting;

void rt_drain_start(void)
{
	if (__atomic_exchange_n(&starting, true, __ATOMIC_ACQ_REL))
		return;
	stopping = 0;
	running = pthread_create(&thread, NULL, loop, NULL) == 0;
	if (!running)
		rt_warn("cannot start the runtime thread; maps are read at exit only");
}

void rt_drain_stop(void)
{
	if (!running)
		return;
	__atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
	pthread_join(thread, NULL);
	running = false;
}

static void child_after_fork(void)
{
	/* CUDA state does not survive fork; a child that uses CUDA after
	 * exec gets its own runtime and slot */
	pthread_mutex_init(&rt_lock, NULL);
	running = false;
	starting = false;
	rt_ctx_forget();
}

__attribute__((constructor)) static void rt_init(void)
{
	pthread_atfork(NULL, NULL, child_after_fork);
}
