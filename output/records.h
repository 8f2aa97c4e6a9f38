/* Acting on the ring buffer records of a compiled program (object/host_obj.h):
 * printf and time() lines, exit(), and the map actions print, clear and
 * zero, which go to wherever the maps live (the userspace VM, or the
 * kernel's maps). Every backend of the run loop (cli/run.c) hands its
 * records here. */
#ifndef GPUX_RECORDS_H
#define GPUX_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "host_obj.h"

struct rec_maps {
	/* print(@m, top, div): 0, or -1 */
	int (*print)(void *ctx, int map, uint64_t top, uint64_t div);
	void (*clear)(void *ctx, int map);
	void (*zero)(void *ctx, int map);
	void *ctx;
};

/* Watchpoints set and removed by records (the kernel's probes hold
 * them); NULL members when no probe can. */
struct rec_watch {
	/* HOST_REC_WATCH: program prog at addr; resume_only: the run has
	 * ended, only let a process stopped for it go on */
	void (*set)(void *ctx, int prog, uint64_t addr, bool resume_only);
	void (*unset)(void *ctx, uint64_t addr); /* HOST_REC_UNWATCH */
	void *ctx;
};

/* Who else takes records as they are acted on (the timeline of -f
 * perfetto); NULL members when nobody does. printf: each printf line,
 * after it is printed (a device one too: cli/dev_print.c); cev: each
 * cuda: event a runtime sent whole (HOST_REC_CEV: ev, then rec, len
 * bytes: struct host_rec_cev and the event's context), which prints
 * nothing. */
struct rec_tap {
	void (*printf)(void *ctx, const struct host_fmt *f, const unsigned char *rec,
		       size_t len);
	void (*cev)(void *ctx, uint32_t ev, const unsigned char *rec, size_t len);
	void *ctx;
};

struct rec_state {
	FILE *out;
	bool json;
	const struct host_obj *obj;
	const struct source *src; /* the program: -k's warnings quote it */
	struct rec_maps maps;
	struct rec_watch watch;
	struct rec_tap tap;
	bool exited; /* exit() seen: later records are dropped */
	int status;  /* exit()'s argument */
	int failed;
};

/* A ring buffer callback (arg: struct rec_state). Always 0. */
int rec_handle(void *arg, const void *data, size_t len);

#endif
