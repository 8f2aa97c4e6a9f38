/* The prompt's commands for a live session (repl_priv.h, live.h). */
#include "repl_priv.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static bool need_live(struct repl *r)
{
	if (r->live)
		return true;
	fputs("gpux: ERROR: no program runs: start one with :run CMD or gpux --repl -c CMD\n",
	      stderr);
	return false;
}

static void on_int(int sig)
{
	(void)sig;
	repl_interrupted = 1;
}

void repl_live_signals(void)
{
	struct sigaction sa = { .sa_handler = on_int, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}

static bool map_name(const char *s)
{
	if (*s != '@')
		return false;
	for (s++; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

bool repl_live_map_line(struct repl *r, const char *line)
{
	size_t n = strlen(line);
	while (n && isspace((unsigned char)line[n - 1]))
		n--;
	char name[256];
	if (!n || n >= sizeof(name))
		return false;
	memcpy(name, line, n);
	name[n] = '\0';
	if (!map_name(name))
		return false;
	live_print(r->live, name, r->out);
	return true;
}

void repl_cmd_run(struct repl *r, const char *arg)
{
	if (r->live && live_running(r->live)) {
		fputs("gpux: ERROR: a program runs already (:quit ends it)\n", stderr);
		return;
	}
	if (!*arg) {
		fputs("gpux: ERROR: ':run' takes a command line, as in ':run ./app 100'\n", stderr);
		return;
	}
	struct options o = *r->o;
	o.command = arg;
	o.cmd_argv = NULL;
	o.cmd_argc = 0;
	live_end(r->live);
	r->live = live_start(&o, r->out, r->queued.v, r->queued.n);
	repl_strs_free(&r->queued);
	if (r->live && !r->rl)
		repl_live_signals();
}

void repl_cmd_probes(struct repl *r, const char *arg)
{
	(void)arg;
	if (need_live(r))
		live_list(r->live, r->out);
}

void repl_cmd_detach(struct repl *r, const char *arg)
{
	char *end;
	long id = strtol(arg, &end, 10);
	if (!need_live(r))
		return;
	if (!*arg || *end || id <= 0) {
		fputs("gpux: ERROR: ':detach' takes a probe id (:probes lists them)\n", stderr);
		return;
	}
	live_detach(r->live, (int)id);
}

static bool map_arg(const char *arg, const char *cmd)
{
	if (map_name(arg))
		return true;
	fprintf(stderr, "gpux: ERROR: ':%s' takes a map, as in ':%s @counts'\n", cmd, cmd);
	return false;
}

void repl_cmd_print(struct repl *r, const char *arg)
{
	if (need_live(r) && (!*arg || map_arg(arg, "print")))
		live_print(r->live, *arg ? arg : NULL, r->out);
}

void repl_cmd_clear(struct repl *r, const char *arg)
{
	if (need_live(r) && map_arg(arg, "clear"))
		live_clear(r->live, arg);
}

void repl_cmd_heatmap(struct repl *r, const char *arg)
{
	if (need_live(r) && map_arg(arg, "heatmap"))
		live_heatmap(r->live, arg, r->out);
}

/* ":top [time|launches|threads] [N]", in either order. */
void repl_cmd_top(struct repl *r, const char *arg)
{
	static const char *const keys[] = { [LIVE_TOP_TIME] = "time",
					    [LIVE_TOP_LAUNCHES] = "launches",
					    [LIVE_TOP_THREADS] = "threads" };
	if (!need_live(r))
		return;
	enum live_top_by by = LIVE_TOP_TIME;
	long limit = 20;
	char word[32];
	int used;
	for (const char *p = arg; sscanf(p, "%31s%n", word, &used) == 1; p += used) {
		char *end;
		long v = strtol(word, &end, 10);
		if (!*end && v >= 0) {
			limit = v;
			continue;
		}
		size_t k = 0;
		while (k < sizeof(keys) / sizeof(keys[0]) && strcmp(word, keys[k]))
			k++;
		if (k == sizeof(keys) / sizeof(keys[0])) {
			fprintf(stderr, "gpux: ERROR: ':top' sorts by time, launches or threads "
					"and takes a row count, as in ':top launches 10'; not '%s'\n",
				word);
			return;
		}
		by = (enum live_top_by)k;
	}
	live_top(r->live, by, (int)limit, r->out);
}

/* "500ms", "2s", "1" (seconds), "100us" (rounded up to 1 ms): ms, or -1. */
static long duration_ms(const char *s, const char **rest)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v < 0)
		return -1;
	double scale = 1000;
	if (!strncmp(end, "ms", 2)) {
		scale = 1;
		end += 2;
	} else if (!strncmp(end, "us", 2)) {
		scale = 0.001;
		end += 2;
	} else if (*end == 's') {
		end++;
	} else if (*end == 'm') {
		scale = 60000;
		end++;
	}
	if (*end && !isspace((unsigned char)*end))
		return -1;
	*rest = end + strspn(end, " \t");
	long ms = (long)(v * scale + 0.999);
	return ms;
}

void repl_cmd_watch(struct repl *r, const char *arg)
{
	if (!need_live(r))
		return;
	char name[256];
	size_t n = strcspn(arg, " \t");
	if (n >= sizeof(name))
		n = sizeof(name) - 1;
	memcpy(name, arg, n);
	name[n] = '\0';
	if (!map_arg(name, "watch"))
		return;
	const char *rest = arg + n + strspn(arg + n, " \t");
	long ms = 1000, times = 0;
	if (*rest && (ms = duration_ms(rest, &rest)) <= 0) {
		fputs("gpux: ERROR: ':watch' takes an interval like 500ms or 2s\n", stderr);
		return;
	}
	if (*rest) {
		char *end;
		times = strtol(rest, &end, 10);
		if (*end || times <= 0) {
			fputs("gpux: ERROR: ':watch @MAP INTERVAL N': N is how many times\n", stderr);
			return;
		}
	}
	repl_interrupted = 0;
	live_watch(r->live, name, ms, times, r->out, &repl_interrupted);
	repl_interrupted = 0;
}

void repl_cmd_pause(struct repl *r, const char *arg)
{
	(void)arg;
	if (need_live(r))
		live_pause(r->live, true);
}

void repl_cmd_resume(struct repl *r, const char *arg)
{
	(void)arg;
	if (need_live(r))
		live_pause(r->live, false);
}

void repl_cmd_kill(struct repl *r, const char *arg)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = { { "TERM", SIGTERM }, { "INT", SIGINT }, { "KILL", SIGKILL },
		     { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "HUP", SIGHUP },
		     { "STOP", SIGSTOP }, { "CONT", SIGCONT } };
	if (!need_live(r))
		return;
	const char *s = !strncmp(arg, "SIG", 3) ? arg + 3 : arg;
	int sig = *s ? -1 : SIGTERM;
	for (size_t i = 0; sig < 0 && i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcmp(s, sigs[i].name))
			sig = sigs[i].sig;
	if (sig < 0 && isdigit((unsigned char)*s))
		sig = atoi(s);
	if (sig <= 0) {
		fprintf(stderr, "gpux: ERROR: unknown signal '%s'\n", arg);
		return;
	}
	live_kill(r->live, sig);
}

void repl_cmd_sleep(struct repl *r, const char *arg)
{
	const char *rest;
	long ms = duration_ms(arg, &rest);
	if (ms < 0 || *rest) {
		fputs("gpux: ERROR: ':sleep' takes a duration like 500ms or 2s\n", stderr);
		return;
	}
	repl_interrupted = 0;
	if (r->live)
		live_wait(r->live, ms, &repl_interrupted);
	repl_interrupted = 0;
}

void repl_cmd_wait(struct repl *r, const char *arg)
{
	(void)arg;
	if (!need_live(r))
		return;
	repl_interrupted = 0;
	live_wait(r->live, -1, &repl_interrupted);
	repl_interrupted = 0;
}
