/* Thread renames, said to the VM: cuda: probes read comm from a
 * per-thread copy (vm/bpf_vm_task.c), which a rename through
 * pthread_setname_np or prctl(PR_SET_NAME) makes stale at once. Each
 * forwards to the C library's own and changes nothing else. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf_vm.h"
#include "rt.h"

typedef int (*setname_fn)(pthread_t, const char *);
typedef int (*prctl_fn)(int, ...);

int pthread_setname_np(pthread_t t, const char *name)
{
	static setname_fn real;
	if (!real)
		real = (setname_fn)rt_real_dlsym(RTLD_NEXT, "pthread_setname_np");
	int rc = real ? real(t, name) : ENOSYS;
	vm_task_renamed();
	return rc;
}

int prctl(int option, ...)
{
	static prctl_fn real;
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long),
		      a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	if (!real)
		real = (prctl_fn)rt_real_dlsym(RTLD_NEXT, "prctl");
	int rc = real ? real(option, a2, a3, a4, a5)
		      : (int)syscall(SYS_prctl, option, a2, a3, a4, a5);
	if (option == PR_SET_NAME)
		vm_task_renamed();
	return rc;
}
