/* The probes gpux adds to a program for -f perfetto: one empty probe
 * per cuda: event, which turns the event on; the session's
 * GPUX_SESS_TIMELINE flag has the runtime send each event whole, with
 * the time, process, thread, GPU and thread name of the call
 * (HOST_REC_CEV), by the path records of cuda: probes take
 * (sess_host.c, which escapes their strings); and the reading of those
 * records onto the timeline (timeline.h). The records are the traced
 * program's to write: every value is taken as it comes. */
#ifndef GPUX_TIMELINE_PROBES_H
#define GPUX_TIMELINE_PROBES_H

#include <stddef.h>
#include <stdint.h>

#include "ast.h"
#include "host_obj.h"
#include "timeline.h"

/* The file name diagnostics give the added probes. */
#define TIMELINE_PROBES_FILE "<timeline>"

/* Appends the probes to prog's text as a file of their own, before the
 * front end runs; once the user's text parses alone, so that a mistake
 * of theirs (an unclosed block) is not reported in the probes. 0, or -1
 * after printing the user's syntax errors. */
int timeline_probes_add(struct program *prog);
/* After the front end: marks them (struct probe.timeline). */
void timeline_probes_mark(struct program *prog);
/* The whole name of kernel id into buf (len bytes). */
typedef void (*timeline_kernel_fn)(void *ctx, uint64_t id, char *buf, size_t len);

/* One event ev sent whole (rec: struct host_rec_cev and the event's
 * context, len bytes) onto tl, the kernel's name from name(ctx, ...). A
 * record of another size is left out. */
void timeline_probes_cev(struct timeline *tl, uint32_t ev, const unsigned char *rec, size_t len,
			 timeline_kernel_fn name, void *ctx);

#endif
