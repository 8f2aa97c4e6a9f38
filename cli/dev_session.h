/* The controller's side of a session segment (abi/session.h): it
 * compiles a program's device probes, lays out the probe and map tables,
 * creates the segment as a memfd the traced program inherits, and reads
 * back what the device runtimes publish there (dev_print.h).
 *
 * The segment is writable by every traced process, so nothing the
 * controller needs to find its way around in it (offsets, sizes, the map
 * table) is read back from it: those are kept here, from the layout gpux
 * planned. Only the fields the runtimes own are read, and each is
 * checked before use (sess_trust.h). */
#ifndef GPUX_DEV_SESSION_H
#define GPUX_DEV_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ast.h"
#include "dev_lower.h"
#include "diag.h"
#include "host_obj.h"
#include "records.h"
#include "sess_layout.h"
#include "sess_trust.h"

/* Bytes of a kernel name as a map key or printf argument: the names
 * table's longest, NUL-terminated. */
#define DEV_STR_SIZE (GPUX_SESS_NAME_LEN + 8)

struct dev_session {
	struct program *prog;
	struct dev_module mod;
	int fd;                   /* the memfd, inherited by the program */
	uint64_t off;             /* where the segment starts in it */
	struct gpux_sess_hdr *h;  /* mapped MAP_SHARED */
	/* Kernel names: NULL, the segment's own table; a live session's
	 * later generations use the first one's. */
	struct gpux_sess_name *names;
	uint64_t size;
	/* Private copies of the layout (see above). */
	uint64_t slots_off, slot_size, ring_off, names_off, msgs_off;
	uint32_t nslots, ring_size, nmaps, nprobes;
	uint32_t nattach; /* attach points, as "Attaching N probes" counts them */
	struct gpux_sess_map *maps;
	struct sess_trust trust;
	/* Printing. */
	FILE *out;
	bool json;
	struct host_map *hmaps;   /* one per device map (dev_output.c) */
	bool *additive;           /* plain maps only ever added to */
	struct host_fmt *fmts;    /* one per dev_printf, by id */
	unsigned char *lane;      /* one lane's record, as out_printf takes it */
	const struct rec_tap *tap; /* who else takes printf lines, or NULL */
	size_t lane_cap;
	uint64_t tail[GPUX_SESS_MAX_SLOTS]; /* each event ring's, ours */
};

/* The segment's descriptor, made before the traced program is forked so
 * that it inherits it (sized and filled later). -1 with errno. */
int dev_session_fd(void);
/* Makes this process the session's controller: h's ctl_pid, and a fresh
 * random token the traced processes must name to join (abi/session.h).
 * 0, or -1 with errno. */
int dev_session_claim(struct gpux_sess_hdr *h);
/* Compiles prog's device probes and lays the segment out in fd (which
 * ds owns from then on, closed by dev_session_close, on failure too).
 * With sh (cuda: probes, sess_host.h), the segment carries their part.
 * 0, or -1 with diagnostics. */
struct sess_host;
int dev_session_open(struct dev_session *ds, struct program *prog, FILE *out,
		     bool json, struct sess_host *sh, int fd, struct diags *diags);
/* The same at offset off of fd (page-aligned): a live session's later
 * generations (GPUX_SESS_LIVE). */
int dev_session_open_at(struct dev_session *ds, struct program *prog, FILE *out, bool json,
			struct sess_host *sh, int fd, uint64_t off, struct diags *diags);
void dev_session_close(struct dev_session *ds);

/* The runtimes' messages (a module they could not patch, a slot they
 * could not map), each entry read once and each distinct text given
 * once, however many processes or contexts say it. */
struct dev_msgs {
	uint32_t next;                     /* entries read so far */
	char *said[GPUX_SESS_MAX_MSGS];    /* the distinct texts given */
	int nsaid;
};
/* The next new text of the messages of segment h, which the controller
 * laid out with them at msgs_off, into text, escaped (sess_text): false
 * when there is none yet. A text with bytes no runtime writes is
 * reported to t. */
#define DEV_MSG_SIZE SESS_TEXT_SIZE(GPUX_SESS_MSG_LEN)
bool dev_msgs_next(struct dev_msgs *m, const struct gpux_sess_hdr *h, uint64_t msgs_off,
		   struct sess_trust *t, char text[DEV_MSG_SIZE]);
/* After the last message: the lost ones' count, checked against the
 * entries claimed (a runtime counts one lost only once all are taken). */
uint32_t dev_msgs_lost(const struct gpux_sess_hdr *h, struct sess_trust *t);
void dev_msgs_free(struct dev_msgs *m);

/* Asks every slot for a snapshot (snap_req), remembering in before
 * (GPUX_SESS_MAX_SLOTS entries) how many each had; dev_session_snapped
 * then tells whether every slot that was live has a newer one or is
 * done. */
void dev_session_snap_ask(const struct dev_session *ds, uint64_t *before, uint32_t *n);
bool dev_session_snapped(const struct dev_session *ds, const uint64_t *before, uint32_t n);

/* Slot i (i < nslots), found through the private layout. */
struct gpux_sess_slot *dev_session_slot(const struct dev_session *ds, uint32_t i);
/* Slots claimed so far, at most nslots. */
uint32_t dev_session_slots(const struct dev_session *ds);
/* Whether claimed slot i is in use: a runtime that claims a slot and
 * cannot set its context up leaves it FREE, and it is ignored; so is a
 * slot in a state no runtime writes (reported). */
bool dev_session_used(struct dev_session *ds, uint32_t i);
/* The name of kernel id into buf (NUL-terminated, at most len - 1 bytes,
 * len > GPUX_SESS_NAME_LEN): the names table's entry once it is ready,
 * escaped (sess_text), else "kernel#ID". */
void dev_session_kernel(struct dev_session *ds, uint64_t id, char *buf, size_t len);
/* Everything the segment says at the end that can be checked: the
 * layout and read-only parts (sess_trust_check). False if tampered. */
bool dev_session_check(struct dev_session *ds);

#endif
