/* Starting the traced program (traced_cmd.h). */
#include "traced_cmd.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "module_open.h"
#include "sess_layout.h"

#define RT_NAME "libgpux-rt.so"

int spawn_runtime_path(char *buf, size_t len)
{
	const char *env = getenv("GPUX_RT");
	if (env && *env) {
		if (snprintf(buf, len, "%s", env) >= (int)len) {
			fputs("gpux: ERROR: GPUX_RT is too long\n", stderr);
			return -1;
		}
	} else if (module_path(RT_NAME, buf, len) && !*buf) {
		fputs("gpux: ERROR: cannot find the gpux binary's folder for the device runtime\n",
		      stderr);
		return -1;
	}
	/* ld.so splits LD_PRELOAD at spaces and colons */
	if (strpbrk(buf, " :")) {
		fprintf(stderr, "gpux: ERROR: the device runtime %s cannot be preloaded: "
			"its path has a space or a colon\n", buf);
		return -1;
	}
	if (access(buf, R_OK)) {
		fprintf(stderr, "gpux: ERROR: cannot use the device runtime %s: %s\n", buf,
			strerror(errno));
		return -1;
	}
	return 0;
}

int spawn_runtime_env(int seg_fd, const char *rt)
{
	/* forked before gpux filled it: the header is read from the file */
	struct gpux_sess_hdr h;
	if (pread(seg_fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return -1;
	char num[GPUX_SESS_ENV_SIZE];
	gpux_sess_env_format(num, (uint32_t)getppid(), seg_fd, h.token);
	const char *old = getenv("LD_PRELOAD");
	size_t n = strlen(rt) + (old ? strlen(old) : 0) + 2;
	char *pre = malloc(n);
	if (!pre)
		return -1;
	if (old && *old)
		snprintf(pre, n, "%s:%s", rt, old);
	else
		snprintf(pre, n, "%s", rt);
	/* CuPy keeps the PTX of its kernels (which the runtime rewrites)
	 * instead of compiling straight to a cubin */
	int rc = setenv(GPUX_SESS_ENV, num, 1) || setenv("LD_PRELOAD", pre, 1) ||
		 setenv("CUPY_COMPILE_WITH_PTX", "1", 0);
	free(pre);
	return rc ? -1 : 0;
}

/* In the child: runs the command, never returns. A -c command that is
 * only words (no quotes, assignments, globs, pipes, lists or
 * redirections) runs as bpftrace's -c runs it: split on blanks and
 * executed straight, so the program is cpid and no shell runs before
 * it (a shell makes system calls of its own, which pid == cpid would
 * count). Anything else gets a shell, `exec CMD` when the shell has
 * nothing to do but run one program, so that it still keeps the pid. */
static _Noreturn void exec_command(const struct options *o)
{
	const char *what = o->command ? "/bin/sh" : o->cmd_argv[0];
	char buf[8192]; /* what names a word of it */
	if (o->command) {
		char *argv[256];
		bool simple = !strpbrk(o->command, ";&|<>()`$\n\\{}*?[~#");
		bool words = simple && !strpbrk(o->command, "'\"=") &&
			     snprintf(buf, sizeof(buf), "%s", o->command) < (int)sizeof(buf);
		int argc = 0;
		for (char *save, *w = words ? strtok_r(buf, " \t", &save) : NULL;
		     w && argc < 255; w = strtok_r(NULL, " \t", &save))
			argv[argc++] = w;
		if (words && argc > 0 && argc < 255) {
			argv[argc] = NULL;
			what = argv[0];
			execvp(argv[0], argv);
		} else if (simple && snprintf(buf, sizeof(buf), "exec %s", o->command) < (int)sizeof(buf)) {
			execl("/bin/sh", "sh", "-c", buf, (char *)NULL);
		} else {
			execl("/bin/sh", "sh", "-c", o->command, (char *)NULL);
		}
	} else {
		execvp(o->cmd_argv[0], o->cmd_argv);
	}
	fprintf(stderr, "gpux: cannot run %s: %s\n", what, strerror(errno));
	_exit(127);
}

pid_t spawn_held(const struct options *o, const struct spawn_signals *sig, int *go,
		 int (*env)(void *), void *arg)
{
	int fd[2];
	if (pipe2(fd, O_CLOEXEC)) {
		fprintf(stderr, "gpux: ERROR: cannot start the program: %s\n", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "gpux: ERROR: cannot start the program: %s\n", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid > 0) {
		close(fd[0]);
		*go = fd[1];
		return pid;
	}
	close(fd[1]);
	char c;
	ssize_t n;
	while ((n = read(fd[0], &c, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		_exit(127); /* gpux gave up before attaching */
	close(fd[0]);
	sigaction(SIGINT, &sig->sigint, NULL);
	sigaction(SIGTERM, &sig->sigterm, NULL);
	sigaction(SIGUSR1, &sig->sigusr1, NULL);
	sigaction(SIGCHLD, &sig->sigchld, NULL);
	sigprocmask(SIG_SETMASK, &sig->mask, NULL);
	if (env && env(arg)) {
		fprintf(stderr, "gpux: cannot set up the environment of %s: %s\n",
			o->command ? "/bin/sh" : o->cmd_argv[0], strerror(errno));
		_exit(127);
	}
	exec_command(o);
}

void spawn_release(int go)
{
	char c = 'g';
	while (write(go, &c, 1) < 0 && errno == EINTR)
		;
	close(go);
}

bool spawn_reaped(pid_t pid, int *status)
{
	pid_t w;
	while ((w = waitpid(pid, status, WNOHANG)) < 0 && errno == EINTR)
		;
	if (w < 0)
		*status = 0;
	return w != 0;
}

void spawn_sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ ms / 1000, ms % 1000 * 1000000 }, NULL);
}

struct proc {
	pid_t pid, ppid;
	bool mark; /* pid or one of its descendants */
};

/* The parent of pid from /proc/PID/stat: "PID (COMM) STATE PPID ...",
 * where COMM may hold spaces and parentheses; -1 if it is gone. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *end = strrchr(buf, ')');
	int ppid;
	if (!end || sscanf(end + 1, " %*c %d", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

/* Every process in /proc with its parent; NULL if /proc cannot be read. */
static struct proc *all_procs(size_t *n)
{
	DIR *d = opendir("/proc");
	if (!d)
		return NULL;
	struct proc *v = NULL;
	size_t cap = 0;
	*n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			struct proc *w = realloc(v, cap * sizeof(*v));
			if (!w)
				break;
			v = w;
		}
		v[*n] = (struct proc){ (pid_t)pid, parent_of((pid_t)pid), false };
		(*n)++;
	}
	closedir(d);
	return v;
}

void spawn_signal_tree(pid_t pid, int sig)
{
	size_t n = 0;
	struct proc *v = all_procs(&n);
	kill(pid, sig);
	/* mark descendants until nothing changes: trees are shallow */
	for (bool more = v != NULL; more;) {
		more = false;
		for (size_t i = 0; i < n; i++) {
			if (v[i].mark)
				continue;
			bool child = v[i].ppid == pid;
			for (size_t j = 0; j < n && !child; j++)
				child = v[j].mark && v[j].pid == v[i].ppid;
			if (child) {
				v[i].mark = more = true;
				kill(v[i].pid, sig);
			}
		}
	}
	free(v);
}

void spawn_signals_catch(struct spawn_signals *old, sigset_t *open, void (*handler)(int))
{
	struct sigaction sa = { .sa_handler = handler };
	sigemptyset(&sa.sa_mask);
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &old->mask);
	*open = old->mask;
	sigdelset(open, SIGINT);
	sigdelset(open, SIGTERM);
	sigdelset(open, SIGUSR1);
	sigdelset(open, SIGCHLD);
	sigaction(SIGINT, &sa, &old->sigint);
	sigaction(SIGTERM, &sa, &old->sigterm);
	sigaction(SIGUSR1, &sa, &old->sigusr1);
	sigaction(SIGCHLD, &sa, &old->sigchld);
}

void spawn_signals_restore(const struct spawn_signals *old)
{
	sigprocmask(SIG_SETMASK, &old->mask, NULL);
	sigaction(SIGINT, &old->sigint, NULL);
	sigaction(SIGTERM, &old->sigterm, NULL);
	sigaction(SIGUSR1, &old->sigusr1, NULL);
	sigaction(SIGCHLD, &old->sigchld, NULL);
}
