/* What the controller believes of a session segment (abi/session.h).
 *
 * gpux runs as root and the segment is writable by every traced
 * process: whatever it reads there may have been written by a bug or on
 * purpose. So the controller finds its way around the segment only with
 * its own copy of the layout (sess_layout.h: gpux_sess_plan), bounds
 * every offset, index, count and length it reads before use, copies
 * strings with a length limit and with every byte outside printable
 * ASCII escaped (no terminal escape sequence reaches the output), and
 * checks counters against what the runtime could have written. The
 * first sign of tampering is reported once ("the traced program
 * overwrote gpux's shared memory"), the run goes on, and gpux exits 1.
 *
 * Why no part of the segment is kept out of the program's reach: the
 * runtime runs inside the traced process and must read the probe and
 * map tables, so any mapping it has the program has too. Instead the
 * parts only gpux writes are fingerprinted when made and compared at
 * the end (sess_trust_check): the controller never reads them back,
 * so tampering there can only mislead the program's own runtime. */
#ifndef GPUX_SESS_TRUST_H
#define GPUX_SESS_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session.h"

/* Counters the runtime adds to one by one on the host (messages, VM
 * failures, memory actions, timed launches): more than 2^48 (a year at
 * ten million a second) cannot have been counted. */
#define SESS_MAX_HOST_COUNT (1ull << 48)
/* Counters the device adds to (map values of count(), histogram
 * buckets, dropped updates): more than 2^60 would take an H200 running
 * nothing but probes at its peak rate for hours on end. */
#define SESS_MAX_DEVICE_COUNT (1ull << 60)
/* A Linux pid is below 2^22 (PID_MAX_LIMIT). */
#define SESS_MAX_PID (1u << 22)

/* An escaped copy of n bytes takes at most this many bytes (with the
 * NUL): "\xNN" for each. */
#define SESS_TEXT_SIZE(n) (4 * (size_t)(n) + 1)

struct sess_trust {
	bool corrupt;                 /* reported: results are not trustworthy */
	struct gpux_sess_hdr plan;    /* the header as gpux laid it out */
	uint64_t fixed_sum;           /* fingerprint of the parts only gpux writes */
	const struct gpux_sess_hdr *h;
};

/* After the segment h is laid out as plan says (and filled): remembers
 * both and fingerprints the read-only parts. */
void sess_trust_init(struct sess_trust *t, const struct gpux_sess_hdr *h,
		     const struct gpux_sess_hdr *plan);
/* The first time: "gpux: WARNING: the traced program overwrote gpux's
 * shared memory (WHAT); results from it are not trustworthy" on stderr.
 * Later calls only keep the flag set. */
void sess_corrupt(struct sess_trust *t, const char *what);
/* v <= max, or reported as corrupt (what names the counter). */
bool sess_count_ok(struct sess_trust *t, uint64_t v, uint64_t max, const char *what);
/* A pid the runtime could have written (0 < pid < SESS_MAX_PID). */
bool sess_pid_ok(struct sess_trust *t, uint32_t pid);
/* Compares the header's layout and the read-only parts with what gpux
 * wrote; false (and reported) if they differ. */
bool sess_trust_check(struct sess_trust *t);

/* src (at most n bytes, up to its first NUL) into dst (cap bytes, cap
 * >= 1), NUL-terminated, with each byte outside ' '..'~' written as
 * \xNN; cut at a whole character if it does not fit. Returns whether
 * src had such bytes or no NUL in its n (a runtime's texts have both). */
bool sess_text(char *dst, size_t cap, const char *src, size_t n);
/* The same in place: a string field of size bytes (a string that fills
 * it is fine here). Returns whether it had bytes to escape. */
bool sess_text_field(char *field, size_t size);

#endif
