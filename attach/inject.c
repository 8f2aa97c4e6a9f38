/* Loading a library into a running process: see inject.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "inject.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)

/* The thread's whole state: general registers and the extended state
 * (x87, SSE, AVX, AVX-512), since it is stopped wherever it was. */
struct state {
	struct user_regs_struct regs;
	unsigned char xsave[16384] __attribute__((aligned(64)));
	size_t xlen;
};

/* Where gpux's C library has a symbol, relative to the library's base. */
struct libc_sym {
	dev_t dev;
	ino_t ino;
	uintptr_t dlopen, dlsym, dlerror; /* offsets */
	uintptr_t text_lo, text_hi;       /* libc's own text, offsets, for safe points */
	uintptr_t ld_lo, ld_hi;           /* the dynamic loader's text, absolute */
};

__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t n, pid_t pid,
							 const char *fmt, ...)
{
	snprintf(err, n, "cannot attach to pid %d: ", (int)pid);
	size_t k = strlen(err);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err + k, n - k, fmt, ap);
	va_end(ap);
	return -1;
}

static bool our_libc(struct libc_sym *s)
{
	/* the C library's own definitions, not an interposer's (ASan's) */
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *o = h ? dlsym(h, "dlopen") : NULL, *y = h ? dlsym(h, "dlsym") : NULL;
	void *e = h ? dlsym(h, "dlerror") : NULL;
	Dl_info di;
	struct stat st;
	bool ok = o && y && e && dladdr(o, &di) && di.dli_fname && !stat(di.dli_fname, &st);
	if (ok) {
		uintptr_t b = (uintptr_t)di.dli_fbase;
		*s = (struct libc_sym){ st.st_dev, st.st_ino, (uintptr_t)o - b, (uintptr_t)y - b,
					(uintptr_t)e - b, 0, 0, 0, 0 };
	}
	if (h)
		dlclose(h);
	return ok;
}

/* The target's mapping of that file: its base, and its executable range. */
static bool their_libc(pid_t pid, struct libc_sym *s, uintptr_t *base)
{
	char path[64], line[4096];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool found = false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off, ino;
		unsigned maj, mnr;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu", &lo, &hi, perms, &off, &maj, &mnr,
			   &ino) != 7)
			continue;
		/* the loader's lock is taken by dlopen: a thread stopped in the
		 * loader may hold it */
		if (perms[2] == 'x' && strstr(line, "/ld-linux")) {
			s->ld_lo = lo;
			s->ld_hi = hi;
		}
		if (ino != s->ino || makedev(maj, mnr) != s->dev)
			continue;
		if (off == 0 && !found) {
			*base = lo;
			found = true;
		}
		if (found && perms[2] == 'x') {
			s->text_lo = lo - *base;
			s->text_hi = hi - *base;
		}
	}
	fclose(f);
	return found;
}

static bool get_state(pid_t pid, struct state *st)
{
	struct iovec io = { st->xsave, sizeof(st->xsave) };
	if (ptrace(PTRACE_GETREGS, pid, NULL, &st->regs))
		return false;
	if (ptrace(PTRACE_GETREGSET, pid, (void *)(uintptr_t)NT_X86_XSTATE, &io))
		return false;
	st->xlen = io.iov_len;
	return true;
}

static bool set_state(pid_t pid, struct state *st)
{
	struct iovec io = { st->xsave, st->xlen };
	return !ptrace(PTRACE_SETREGSET, pid, (void *)(uintptr_t)NT_X86_XSTATE, &io) &&
	       !ptrace(PTRACE_SETREGS, pid, NULL, &st->regs);
}

static bool poke(pid_t pid, uintptr_t at, const void *data, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		long w = 0;
		size_t k = len - i < 8 ? len - i : 8;
		if (k < 8) { /* keep the bytes after the data */
			errno = 0;
			w = ptrace(PTRACE_PEEKDATA, pid, (void *)(at + i), NULL);
			if (errno)
				return false;
		}
		memcpy(&w, (const char *)data + i, k);
		if (ptrace(PTRACE_POKEDATA, pid, (void *)(at + i), (void *)w))
			return false;
	}
	return true;
}

static void peek_str(pid_t pid, uintptr_t at, char *buf, size_t n)
{
	size_t i = 0;
	while (i + 1 < n) {
		errno = 0;
		long w = ptrace(PTRACE_PEEKDATA, pid, (void *)(at + i), NULL);
		if (errno)
			break;
		for (int k = 0; k < 8 && i + 1 < n; k++, i++)
			if (!(buf[i] = (char)(w >> (8 * k))))
				return;
	}
	buf[i] = '\0';
}

/* Waits for the thread's next stop: its signal, or -1 if it is gone or
 * the time ran out (*gone then tells which); timeout_ms < 0: no limit. */
static int wait_stop(pid_t pid, int timeout_ms, bool *gone)
{
	*gone = false;
	for (int t = 0; timeout_ms < 0 || t <= timeout_ms; t++) {
		int status;
		pid_t r = waitpid(pid, &status, __WALL | WNOHANG);
		if (r == pid && WIFSTOPPED(status))
			return WSTOPSIG(status);
		if (r == pid || (r < 0 && errno != EINTR)) {
			*gone = true;
			return -1;
		}
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return -1;
}

/* Calls fn(a0, a1) on the thread, its saved state st, with data copied
 * below the stack the call runs on (a0, a1 may point into it: pass the
 * offsets and set rel). The thread returns to address 0 and faults: that
 * stop ends the call. It is waited for however long it takes: a call
 * given up would return to address 0 unwatched and kill the program. */
static int remote_call(pid_t pid, const struct state *st, uintptr_t fn, uint64_t a0,
		       uint64_t a1, unsigned rel, const void *data, size_t len, uint64_t *ret,
		       char *err, size_t n)
{
	struct state call = *st;
	uintptr_t area = ((uintptr_t)st->regs.rsp - 8192 - len) & ~(uintptr_t)15;
	uintptr_t sp = area - 72, zero = 0; /* area is 16-aligned */
	if (rel & 1)
		a0 += area;
	if (rel & 2)
		a1 += area;
	if ((len && !poke(pid, area, data, len)) || !poke(pid, sp, &zero, sizeof(zero)))
		return fail(err, n, pid, "cannot write its stack: %s", strerror(errno));
	call.regs.rsp = sp; /* as after a call: rsp + 8 16-byte aligned */
	call.regs.rip = fn;
	call.regs.rdi = a0;
	call.regs.rsi = a1;
	call.regs.rax = 0;
	call.regs.orig_rax = (unsigned long long)-1; /* no system call to restart */
	if (!set_state(pid, &call) || ptrace(PTRACE_CONT, pid, NULL, NULL))
		return fail(err, n, pid, "cannot start a call in it: %s", strerror(errno));
	for (;;) {
		bool gone;
		int sig = wait_stop(pid, -1, &gone);
		if (sig < 0)
			return fail(err, n, pid, "%s", "it ended during the call");
		struct user_regs_struct r;
		if (sig == SIGSEGV && !ptrace(PTRACE_GETREGS, pid, NULL, &r) && r.rip == 0) {
			*ret = r.rax;
			return 0;
		}
		if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGABRT)
			return fail(err, n, pid, "the call faulted (signal %s)", strsignal(sig));
		/* anything else is the program's: delivered as it would be */
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(uintptr_t)(sig == SIGSTOP ? 0 : sig)))
			return fail(err, n, pid, "cannot resume it: %s", strerror(errno));
	}
}

/* System calls a thread may be stopped in while it holds none of the C
 * library's locks: it waits for something else. */
static bool waiting_call(long nr)
{
	static const long waits[] = { 0 /* read */,	    7 /* poll */,
				      16 /* ioctl */,	    23 /* select */,
				      34 /* pause */,	    35 /* nanosleep */,
				      43 /* accept */,	    45 /* recvfrom */,
				      47 /* recvmsg */,	    61 /* wait4 */,
				      128 /* rt_sigtimedwait */, 130 /* rt_sigsuspend */,
				      202 /* futex */,	    230 /* clock_nanosleep */,
				      232 /* epoll_wait */, 247 /* waitid */,
				      270 /* pselect6 */,   271 /* ppoll */,
				      281 /* epoll_pwait */, 288 /* accept4 */ };
	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
		if (nr == waits[i])
			return true;
	return false;
}

/* Stops the thread where a call is safe: outside the C library, or
 * waiting in a system call; otherwise lets it run 1 ms and looks again,
 * up to timeout_ms. */
static int safe_stop(pid_t pid, const struct libc_sym *s, uintptr_t base, struct state *st,
		     int timeout_ms, char *err, size_t n)
{
	for (int t = 0; t <= timeout_ms; t++) {
		if (!get_state(pid, st))
			return fail(err, n, pid, "cannot read its registers: %s", strerror(errno));
		uintptr_t pc = (uintptr_t)st->regs.rip;
		bool in_libc = (pc >= base + s->text_lo && pc < base + s->text_hi) ||
			       (pc >= s->ld_lo && pc < s->ld_hi);
		if (!in_libc || waiting_call((long)st->regs.orig_rax))
			return 0;
		if (ptrace(PTRACE_CONT, pid, NULL, NULL))
			return fail(err, n, pid, "cannot resume it: %s", strerror(errno));
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		if (syscall(SYS_tgkill, pid, pid, SIGSTOP)) /* this thread alone */
			return fail(err, n, pid, "cannot stop it: %s", strerror(errno));
		bool gone;
		int sig;
		while ((sig = wait_stop(pid, 1000, &gone)) != SIGSTOP) {
			if (sig < 0)
				return fail(err, n, pid, "%s", gone ? "it ended" : "it did not stop");
			if (ptrace(PTRACE_CONT, pid, NULL, (void *)(uintptr_t)sig))
				return fail(err, n, pid, "cannot resume it: %s", strerror(errno));
		}
	}
	return fail(err, n, pid, "%s", "its main thread never left the C library long enough");
}

static int attach_error(pid_t pid, int e, char *err, size_t n)
{
	if (e == ESRCH)
		return fail(err, n, pid, "%s", "no such process");
	if (e == EPERM)
		return fail(err, n, pid, "%s",
			    "ptrace is not permitted (another tracer such as a debugger, "
			    "another user's process, or kernel.yama.ptrace_scope)");
	return fail(err, n, pid, "ptrace: %s", strerror(e));
}

int inject_library(pid_t pid, const char *lib, const char *entry, const char *arg,
		   uint64_t *ret, int timeout_ms, char *err, size_t errlen)
{
	static struct state saved; /* large: not on the stack */
	struct libc_sym s;
	uintptr_t base = 0;
	if (!our_libc(&s))
		return fail(err, errlen, pid, "%s", "gpux cannot find its own C library");
	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL))
		return attach_error(pid, errno, err, errlen);
	bool gone;
	int sig, rc = -1;
	while ((sig = wait_stop(pid, 2000, &gone)) != SIGSTOP) {
		if (sig < 0) {
			fail(err, errlen, pid, "%s", gone ? "it ended" : "it did not stop");
			goto out;
		}
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(uintptr_t)sig))
			goto out;
	}
	if (!their_libc(pid, &s, &base)) {
		fail(err, errlen, pid, "%s", "it does not use gpux's C library");
		goto detach;
	}
	if (safe_stop(pid, &s, base, &saved, timeout_ms, err, errlen))
		goto detach;
	uint64_t handle = 0, fn = 0, r = 0;
	size_t len = strlen(lib) + 1;
	if (remote_call(pid, &saved, base + s.dlopen, 0, RTLD_NOW, 1, lib, len, &handle, err,
			errlen))
		goto restore;
	if (!handle) {
		uint64_t msg = 0;
		char why[256] = "unknown error";
		if (!remote_call(pid, &saved, base + s.dlerror, 0, 0, 0, NULL, 0, &msg, err,
				 errlen) && msg)
			peek_str(pid, msg, why, sizeof(why));
		fail(err, errlen, pid, "dlopen failed there: %s", why);
		goto restore;
	}
	if (entry) {
		if (remote_call(pid, &saved, base + s.dlsym, handle, 0, 2, entry, strlen(entry) + 1,
				&fn, err, errlen))
			goto restore;
		if (!fn) {
			fail(err, errlen, pid, "%s has no entry point", lib);
			goto restore;
		}
		len = strlen(arg ? arg : "") + 1;
		if (remote_call(pid, &saved, fn, 0, 0, 1, arg ? arg : "", len, &r, err, errlen))
			goto restore;
		*ret = r;
	}
	rc = 0;
restore:
	if (!set_state(pid, &saved) && rc == 0)
		rc = fail(err, errlen, pid, "cannot restore its registers: %s", strerror(errno));
detach:
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return rc;
out:
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return -1;
}

int inject_wait_word(pid_t pid, uint64_t addr, uint64_t pending, int timeout_ms, uint64_t *val,
		     char *err, size_t errlen)
{
	for (int t = 0; t <= timeout_ms; t++) {
		uint64_t w = pending;
		struct iovec local = { &w, sizeof(w) }, remote = { (void *)(uintptr_t)addr, sizeof(w) };
		if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(w))
			return fail(err, errlen, pid, "%s",
				    errno == ESRCH ? "it ended" : "cannot read its memory");
		if (w != pending) {
			*val = w;
			return 0;
		}
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return fail(err, errlen, pid, "%s", "the library it loaded did not answer in time");
}

#else

int inject_wait_word(pid_t pid, uint64_t addr, uint64_t pending, int timeout_ms, uint64_t *val,
		     char *err, size_t errlen)
{
	(void)addr, (void)pending, (void)timeout_ms, (void)val;
	snprintf(err, errlen, "cannot attach to pid %d: only x86-64 is supported", (int)pid);
	return -1;
}

int inject_library(pid_t pid, const char *lib, const char *entry, const char *arg,
		   uint64_t *ret, int timeout_ms, char *err, size_t errlen)
{
	(void)lib, (void)entry, (void)arg, (void)ret, (void)timeout_ms;
	snprintf(err, errlen, "cannot attach to pid %d: only x86-64 is supported", (int)pid);
	return -1;
}

#endif
