/* Inside the timeline (timeline.h): the file writer and its event
 * builder (timeline_json.c), the tracks (timeline_tracks.c), the events
 * (timeline_events.c). */
#ifndef GPUX_TIMELINE_PRIV_H
#define GPUX_TIMELINE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "timeline.h"

/* Synthetic ids, far above any pid or tid Linux gives (at most 2^22):
 * a GPU's track process is TL_GPU_PID + its ordinal; streams and gpux's
 * own threads count up from TL_SYN_TID. */
#define TL_GPU_PID 0x40000000u
#define TL_GPUS 256u          /* ordinals beyond share the last one's track */
#define TL_SYN_TID 0x50000000u
/* Tracks remembered at most; events of more streams or threads go on
 * one overflow track of their kind. */
#define TL_MAX_TRACKS 65536u

/* A growing text; oom set (and nothing more added) once memory ran out. */
struct tl_buf {
	char *p;
	size_t len, cap;
	bool oom;
};

enum tl_track_kind { TL_TRACK_STREAM = 1, TL_TRACK_PROCESS, TL_TRACK_THREAD };

struct tl_track {
	uint32_t kind;  /* 0: an empty slot */
	uint32_t id;    /* the pid (PROCESS) or tid it was given */
	uint64_t k[3];
};

/* Pending text written before it grows past this. */
#define TL_PENDING_MAX (1u << 20)

struct timeline {
	int fd;
	bool seekable;   /* the tail can be overwritten (not a pipe) */
	bool first;      /* no event written yet */
	int err;         /* errno of the first failed write; 0 */
	off_t end;       /* where the next flush writes (the file's tail) */
	off_t good;      /* end as of the last flush that reached the file */
	uint64_t t0;
	uint64_t nevents, nkernels, lost;
	struct tl_buf pend; /* events not written yet, room for the tail after */
	struct tl_buf ev;   /* the event being built */
	int nargs;          /* members of its "args" so far; -1: none open */
	struct tl_track *tracks; /* open addressing, cap a power of two */
	size_t ntracks, cap;
	uint32_t next_tid, nstreams, nprocs;
	bool overflow_named[4];
	char *gpu_names[TL_GPUS];
	bool gpu_named[TL_GPUS];
	uint32_t self;      /* gpux's pid: its process holds printf and counters */
	bool self_named;
};

/* ---- timeline_json.c ---- */
void tlb_putn(struct tl_buf *b, const char *s, size_t n);
void tlb_puts(struct tl_buf *b, const char *s);
void tlb_printf(struct tl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s[0..n) as a quoted JSON string: quotes, backslashes and control
 * characters escaped, valid UTF-8 kept, any other byte U+FFFD. */
void tlb_str(struct tl_buf *b, const char *s, size_t n);

/* An event: {"ph":"X","cat":"kernel","pid":P,"tid":T ... then its members
 * (tl_key, tl_us ...), an args object (tl_arg_*), then tl_ev_end, which
 * writes it as one line. cat NULL: none. */
void tl_ev_begin(struct timeline *tl, char ph, const char *cat, uint32_t pid, uint32_t tid);
/* ,"key": (the value follows) */
void tl_key(struct timeline *tl, const char *key);
void tl_name(struct timeline *tl, const char *s);
/* ,"key":US: ns since t0 as microseconds with three decimals */
void tl_us(struct timeline *tl, const char *key, uint64_t ns);
/* ,"dur":US of d ns */
void tl_dur(struct timeline *tl, uint64_t d);
/* Members of "args" (opened by the first): a number, a string, an
 * address as "0x..", a dim3 as "4x1x1". */
void tl_arg_u64(struct timeline *tl, const char *key, uint64_t v);
void tl_arg_i64(struct timeline *tl, const char *key, int64_t v);
void tl_arg_str(struct timeline *tl, const char *key, const char *s, size_t n);
void tl_arg_hex(struct timeline *tl, const char *key, uint64_t v);
void tl_arg_dim3(struct timeline *tl, const char *key, const uint32_t v[3]);
void tl_ev_end(struct timeline *tl);

/* ---- timeline_tracks.c ---- */
/* The track of stream of process pid on GPU gpu; of a host thread
 * (comm: its name as the event saw it); the process of GPU gpu. Each is
 * named (metadata events) at first use. */
void tl_stream_track(struct timeline *tl, uint32_t gpu, uint32_t pid, uint64_t stream,
		     uint32_t *tpid, uint32_t *ttid);
void tl_thread_track(struct timeline *tl, uint32_t pid, uint32_t tid, const char *comm);
uint32_t tl_gpu_pid(struct timeline *tl, uint32_t gpu);
/* gpux's own process, and its thread for printf lines. */
uint32_t tl_self_pid(struct timeline *tl);
uint32_t tl_printf_tid(struct timeline *tl);
void tl_tracks_free(struct timeline *tl);

#endif
