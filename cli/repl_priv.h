/* The prompt's state, shared by repl.c (reading, checking, the commands
 * of the checker), repl_live.c (the commands of a live session) and
 * repl_complete.c (Tab completion, :complete). */
#ifndef GPUX_REPL_PRIV_H
#define GPUX_REPL_PRIV_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "catalog.h"
#include "live.h"
#include "options.h"

#define PROMPT "gpux> "
#define SRC_NAME "repl"

/* A list of strings the prompt owns. */
struct repl_strs {
	char **v;
	size_t n;
};

/* Appends a copy of s[0..len); false (nothing added) out of memory. */
bool repl_strs_add(struct repl_strs *l, const char *s, size_t len);
void repl_strs_free(struct repl_strs *l);

struct repl {
	FILE *in, *out;
	bool rl;
	bool quit;
	bool eof;          /* the input ended */
	char *ctx;         /* attach points statements run in, "a,b" */
	enum place place;  /* where ctx runs */
	char *history;     /* ~/.gpux_history, NULL without HOME */
	const struct options *o;
	struct live *live; /* the program probes attach to, or NULL */
	const char *pending; /* an unfinished entry's lines, for completion */
	struct repl_strs maps;   /* maps of the entries checked, for completion */
	struct repl_strs queued; /* gdev: entries checked with no program: :run attaches them */
};

struct repl_command {
	const char *name, *alias, *args, *help;
	void (*fn)(struct repl *r, const char *arg);
};

/* The commands, as :help lists them. */
const struct repl_command *repl_commands(size_t *n);
/* Whether an entry starting with s is a program (probes) rather than
 * statements checked in the prompt's probe. */
bool repl_looks_like_program(const char *s);

/* ---- completion (repl_complete.c) ---- */

/* What ends the word Tab completes. ':', '@', '$' and '.' do not, so
 * "gdev:kernel_exit", "@name" and "threadIdx.x" are words. */
#define REPL_WORD_BREAKS " \t\n\"'`<>=;|&{}()[],/+-*%!~^?"

struct repl_cands {
	char **v;
	size_t n, cap;
	bool failed; /* out of memory */
};

/* The candidates for the word line[start, end), from what comes before
 * it (after r->pending), sorted, each once, into *c (repl_cands_free).
 * -1 when out of memory, with *c empty. */
int repl_complete(struct repl *r, const char *line, size_t start, size_t end,
		  struct repl_cands *c);
void repl_cands_free(struct repl_cands *c);
/* Where the word ending at end starts, as readline finds it. */
size_t repl_word_start(const char *line, size_t end);
/* Maps an entry named, offered after '@' from then on (copied). */
void repl_remember_map(struct repl *r, const char *name);
/* readline's hooks: completion for r (NULL: none). */
void repl_complete_bind(struct repl *r);
char **repl_rl_complete(const char *text, int start, int end);
char *repl_rl_no_match(const char *text, int state);
void repl_cmd_complete(struct repl *r, const char *arg);

/* Set by Ctrl-C: abandons the line, or stops a :watch or :wait. */
extern volatile sig_atomic_t repl_interrupted;

/* Ctrl-C for a live session read from a pipe or file (readline's own
 * handling is set up by repl.c otherwise). */
void repl_live_signals(void);
/* A line that is a map's name alone ("@", "@x"): printed; true. */
bool repl_live_map_line(struct repl *r, const char *line);

void repl_cmd_run(struct repl *r, const char *arg);
void repl_cmd_probes(struct repl *r, const char *arg);
void repl_cmd_detach(struct repl *r, const char *arg);
void repl_cmd_print(struct repl *r, const char *arg);
void repl_cmd_clear(struct repl *r, const char *arg);
void repl_cmd_watch(struct repl *r, const char *arg);
void repl_cmd_heatmap(struct repl *r, const char *arg);
void repl_cmd_top(struct repl *r, const char *arg);
void repl_cmd_pause(struct repl *r, const char *arg);
void repl_cmd_resume(struct repl *r, const char *arg);
void repl_cmd_kill(struct repl *r, const char *arg);
void repl_cmd_sleep(struct repl *r, const char *arg);
void repl_cmd_wait(struct repl *r, const char *arg);

#define REPL_LIVE_COMMANDS                                                                   \
	{ "run", "", "CMD", "start CMD (a shell command line) with the probes entered "         \
	  "before it", repl_cmd_run },                                                          \
	{ "probes", "", "", "the attached probes, with their ids", repl_cmd_probes },        \
	{ "detach", "d", "ID", "remove probe ID: later launches run without it",             \
	  repl_cmd_detach },                                                                  \
	{ "print", "", "[@MAP]", "print a map as it is now (every map without one)",         \
	  repl_cmd_print },                                                                   \
	{ "clear", "", "@MAP", "start a count, sum, avg, stats or hist map again",           \
	  repl_cmd_clear },                                                                   \
	{ "watch", "w", "@MAP [INTERVAL [N]]", "print a map every INTERVAL (1s), N times "    \
	  "or until Ctrl-C", repl_cmd_watch },                                                \
	{ "heatmap", "", "@MAP", "a map of two integer keys as a grid, e.g. "                 \
	  "@a[sm, warp] = count()", repl_cmd_heatmap },                                       \
	{ "top", "", "[time|launches|threads] [N]", "the program's kernels, most GPU time "   \
	  "(or launches, threads) first, N rows (20; 0: all)", repl_cmd_top },                  \
	{ "pause", "", "", "hold the program's kernel launches", repl_cmd_pause },           \
	{ "resume", "", "", "let them go", repl_cmd_resume },                                 \
	{ "kill", "", "[SIG]", "send the program a signal (TERM)", repl_cmd_kill },           \
	{ "sleep", "", "DURATION", "wait, printing what comes (scripts: 500ms, 2s)",          \
	  repl_cmd_sleep },                                                                   \
	{ "wait", "", "", "wait for the program to end (Ctrl-C stops waiting)", repl_cmd_wait },

#endif
