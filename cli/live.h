/* A live session: the REPL's traced program (gpux --repl -c CMD, or
 * :run CMD). Device probes entered attach while it runs: the active
 * entries are compiled together into a new generation of the session
 * segment (abi/session.h, GPUX_SESS_LIVE), which the runtime moves to,
 * carrying the maps both generations have. Maps live for the session. */
#ifndef GPUX_LIVE_H
#define GPUX_LIVE_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "options.h"

struct live;

/* Starts o's command (-c or --) with the runtime preloaded, in a process
 * group of its own (Ctrl-C is the prompt's), the n entries first[]
 * attached before it starts, so from its first launch; or, with o->pid,
 * loads the runtime into that running process (its later launches are
 * probed). NULL with a message on stderr. */
struct live *live_start(const struct options *o, FILE *out, char *const *first, size_t n);
/* Stops probing, ends the program if it still runs and gpux started it
 * (SIGTERM, then SIGKILL; an attached process goes on), frees
 * everything. */
void live_end(struct live *lv);

/* Adds the probes of text (a program of gdev: probes) to the active
 * ones: its id, or -1 with diagnostics on stderr (the session goes on
 * unchanged). The program's later launches run with them. */
int live_attach(struct live *lv, const char *text, size_t len);
/* Removes entry id: later launches run without it. 0, or -1 (said). */
int live_detach(struct live *lv, int id);
/* The active entries, with their ids. */
void live_list(struct live *lv, FILE *out);

/* Prints map name ("@x", "@"; NULL: every map) as bpftrace does, its
 * values as of now. 0, or -1 (said). */
int live_print(struct live *lv, const char *name, FILE *out);
int live_clear(struct live *lv, const char *name);
/* A map with two integer keys as a grid: rows the first key, columns
 * the second, a Unicode block per cell scaled to the largest value,
 * with a legend. 0, or -1 (said). */
int live_heatmap(struct live *lv, const char *name, FILE *out);
/* Prints map name every ms milliseconds, times times (0: until *stop),
 * with the time above each. */
int live_watch(struct live *lv, const char *name, long ms, long times, FILE *out,
	       volatile sig_atomic_t *stop);

/* :top: the program's kernels, largest first by GPU time (that
 * cuda:kernel_end's events measured), threads or launches, limit rows
 * at most (0: all). 0, or -1 (said). */
enum live_top_by { LIVE_TOP_TIME, LIVE_TOP_LAUNCHES, LIVE_TOP_THREADS };
int live_top(struct live *lv, enum live_top_by by, int limit, FILE *out);

/* The program's launches held (pause) or let go. 0, or -1 (said). */
int live_pause(struct live *lv, bool pause);
/* Sends sig to the program. */
int live_kill(struct live *lv, int sig);
/* Waits ms milliseconds (< 0: until the program ends), taking records
 * as they come; returns early once *stop is set. */
void live_wait(struct live *lv, long ms, volatile sig_atomic_t *stop);
/* What the runtime said and the probes printed since the last call;
 * notices the program's end (said once). */
void live_poll(struct live *lv);
bool live_running(const struct live *lv);
/* Calls cb once with the name of each map of the session ("" for @,
 * without the '@'), newest generation first; lv may be NULL. */
void live_map_names(struct live *lv, void (*cb)(const char *name, void *arg), void *arg);

#endif
