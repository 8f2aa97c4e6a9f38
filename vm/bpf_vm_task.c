/* The current task as the helpers read it in the process that runs the
 * VM, without a system call per event: a cuda: probe keyed by pid, tid
 * or comm runs on every launch, and getpid, gettid and prctl cost about
 * 100 ns each (more in a VM) on a launch path of a few hundred.
 *  - pid: once per process, again in a fork's child;
 *  - tid: once per thread, again in a fork's child;
 *  - comm: once per thread, again after a rename said through
 *    vm_task_renamed (the runtime's pthread_setname_np and prctl), a fork,
 *    or COMM_NS, which bounds how long a rename that bypasses both (a
 *    write to /proc/self/task/N/comm, gpux -p's late runtime) is missed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "bpf_vm_priv.h"

#define COMM_NS 10000000ull

static unsigned forks;   /* fork children this process line went through */
static unsigned renames; /* renames said by vm_task_renamed */
static pid_t pid_cached; /* 0: read it */

static __thread struct {
	unsigned forks, renames;
	pid_t tid; /* 0: read it */
	uint64_t comm_at;
	char comm[16];
	bool comm_set;
} me;

static void after_fork(void)
{
	__atomic_store_n(&pid_cached, 0, __ATOMIC_RELAXED);
	__atomic_add_fetch(&forks, 1, __ATOMIC_RELAXED);
}

static void watch_forks(void)
{
	pthread_atfork(NULL, NULL, after_fork);
}

static void fresh_thread(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	unsigned f = __atomic_load_n(&forks, __ATOMIC_RELAXED);
	pthread_once(&once, watch_forks);
	if (me.forks != f) {
		me.forks = f;
		me.tid = 0;
		me.comm_set = false;
	}
}

uint64_t vm_task_pid_tgid(void)
{
	fresh_thread();
	pid_t p = __atomic_load_n(&pid_cached, __ATOMIC_RELAXED);
	if (!p) {
		p = getpid();
		__atomic_store_n(&pid_cached, p, __ATOMIC_RELAXED);
	}
	if (!me.tid)
		me.tid = gettid();
	return (uint64_t)(uint32_t)p << 32 | (uint32_t)me.tid;
}

void vm_task_comm(char out[16])
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	unsigned r = __atomic_load_n(&renames, __ATOMIC_ACQUIRE);
	fresh_thread();
	if (!me.comm_set || me.renames != r || now - me.comm_at >= COMM_NS) {
		char c[17] = { 0 };
		prctl(PR_GET_NAME, c, 0, 0, 0);
		memcpy(me.comm, c, sizeof(me.comm));
		me.renames = r;
		me.comm_at = now;
		me.comm_set = true;
	}
	memcpy(out, me.comm, sizeof(me.comm));
}

void vm_task_renamed(void)
{
	__atomic_add_fetch(&renames, 1, __ATOMIC_RELEASE);
}
