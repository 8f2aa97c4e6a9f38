/* ptxas, run from the traced program to compile the Sanitizer's patch
 * module (`--compile-as-tools-patch`, which neither the driver's JIT nor
 * nvJitLink offers). The result goes into gpux's cache (rt_cache.c), so
 * a job's next run finds it. The ptxas is GPUX_PTXAS, Triton's
 * (TRITON_PTXAS_PATH, or the one Triton ships when it is loaded), the
 * CUDA toolkit's, or one on PATH; it runs without gpux's preload. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define PTXAS_TIMEOUT_MS 120000

static bool runnable(const char *path)
{
	struct stat st;
	return path && *path && !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

/* Triton's own ptxas, beside its loaded library: .../triton/_C/libtriton.so
 * -> .../triton/backends/nvidia/bin/ptxas. */
static bool triton_ptxas(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return false;
	char line[4096];
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "/triton/_C/libtriton");
		char *start = strchr(line, '/');
		if (!p || !start || start > p)
			continue;
		snprintf(out, len, "%.*s/triton/backends/nvidia/bin/ptxas", (int)(p - start), start);
		found = runnable(out);
	}
	fclose(f);
	return found;
}

static bool on_path(char *out, size_t len)
{
	const char *path = getenv("PATH");
	while (path && *path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);
		if (n && n + 7 < len) {
			snprintf(out, len, "%.*s/ptxas", (int)n, path);
			if (runnable(out))
				return true;
		}
		path = colon ? colon + 1 : NULL;
	}
	return false;
}

bool rt_ptxas_find(char *out, size_t len)
{
	const char *mine = getenv("GPUX_PTXAS"), *triton = getenv("TRITON_PTXAS_PATH");
	if (mine && *mine) { /* the user's choice, or none */
		snprintf(out, len, "%s", mine);
		return runnable(mine);
	}
	if (runnable(triton)) {
		snprintf(out, len, "%s", triton);
		return true;
	}
	static const char *const homes[] = { "CUDA_HOME", "CUDA_PATH" };
	for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]); i++) {
		const char *v = getenv(homes[i]);
		if (v && *v) {
			snprintf(out, len, "%s/bin/ptxas", v);
			if (runnable(out))
				return true;
		}
	}
	snprintf(out, len, "/usr/local/cuda/bin/ptxas");
	return runnable(out) || triton_ptxas(out, len) || on_path(out, len);
}

/* The environment without gpux's preload and session, so that ptxas is
 * not traced; malloc'd, entries borrowed. */
static char **clean_env(void)
{
	size_t n = 0;
	while (environ && environ[n])
		n++;
	char **env = calloc(n + 1, sizeof(*env));
	if (!env)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) && strncmp(environ[i], "GPUX_", 5))
			env[k++] = environ[i];
	return env;
}

/* Waits for pid up to the timeout; its exit status, or -1. */
static int wait_for(pid_t pid)
{
	for (int waited = 0; waited < PTXAS_TIMEOUT_MS; waited += 5) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		if (r < 0 && errno == ECHILD)
			return 0; /* reaped by the program (SIGCHLD ignored): the output says */
		if (r < 0 && errno != EINTR)
			return -1;
		nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

/* Runs ptxas in dir; the cubin or NULL with why. */
static void *run(const char *ptxas, const char *dir, const char *ptx, unsigned arch,
		 size_t *size, char *why, size_t whylen)
{
	char in[1100], out[1100], log[1100], gpu[32];
	snprintf(in, sizeof(in), "%s/patch.ptx", dir);
	snprintf(out, sizeof(out), "%s/patch.cubin", dir);
	snprintf(log, sizeof(log), "%s/ptxas.log", dir);
	snprintf(gpu, sizeof(gpu), "-arch=sm_%u", arch);
	FILE *f = fopen(in, "w");
	bool wrote = f && fputs(ptx, f) >= 0;
	if (f && fclose(f))
		wrote = false;
	if (!wrote) {
		snprintf(why, whylen, "cannot write %s", in);
		return NULL;
	}
	char *argv[] = { (char *)ptxas, gpu, "--compile-as-tools-patch", in, "-o", out, NULL };
	char **env = clean_env();
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	pid_t pid;
	int rc = env ? posix_spawn(&pid, ptxas, &fa, NULL, argv, env) : ENOMEM;
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	if (rc) {
		snprintf(why, whylen, "cannot run %s: %s", ptxas, strerror(rc));
		return NULL;
	}
	int status = wait_for(pid);
	void *cubin = status == 0 ? rt_slurp(out, size) : NULL;
	if (!cubin) {
		size_t n = 0;
		char *text = rt_slurp(log, &n);
		char *nl = text ? strchr(text, '\n') : NULL;
		if (nl)
			*nl = '\0';
		snprintf(why, whylen, "%s failed%s%s", ptxas, text ? ": " : "", text ? text : "");
		free(text);
	}
	unlink(in);
	unlink(out);
	unlink(log);
	return cubin;
}

void *rt_ptxas_tools_patch(const char *ptx, unsigned arch, size_t *size, char *why,
			   size_t whylen)
{
	char ptxas[1024];
	if (!rt_ptxas_find(ptxas, sizeof(ptxas))) {
		const char *mine = getenv("GPUX_PTXAS");
		if (mine && *mine)
			snprintf(why, whylen, "GPUX_PTXAS=%s cannot be run", mine);
		else
			snprintf(why, whylen, "no ptxas found (set GPUX_PTXAS)");
		return NULL;
	}
	/* the key: the text, the device, and which ptxas (path, size, time) */
	struct stat st;
	char tag[1200];
	int tl = snprintf(tag, sizeof(tag), "tools-patch %s", ptxas);
	if (!stat(ptxas, &st))
		tl += snprintf(tag + tl, sizeof(tag) - (size_t)tl, " %lld %lld",
			       (long long)st.st_size, (long long)st.st_mtime);
	struct rt_cache_key key;
	rt_cache_key(&key, ptx, tag, (size_t)tl, arch, 0xfffffffeu);
	void *cubin = rt_cache_get(&key, size);
	if (cubin)
		return cubin;
	const char *tmp = getenv("TMPDIR");
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/gpux-ptxas-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		snprintf(why, whylen, "cannot make a folder in %s", tmp && *tmp ? tmp : "/tmp");
		return NULL;
	}
	uint64_t t0 = rt_now_ns();
	cubin = run(ptxas, dir, ptx, arch, size, why, whylen);
	rmdir(dir);
	if (cubin && rt_sess() && (rt_sess()->flags & GPUX_SESS_VERBOSE))
		rt_warn("ptxas compiled the SASS patch module in %.1f ms", rt_ms_since(t0));
	if (cubin)
		rt_cache_put(&key, cubin, *size);
	return cubin;
}
