/* A traced program that attacks gpux through the session segment
 * (abi/session.h) it finds through GPUX_SESSION: for half a second it
 * writes over the segment in one of several ways, then exits 0. gpux
 * must not crash, print no raw control byte from it, say the segment
 * was overwritten and exit 1. Usage:
 *   hostile SEED MODE
 * MODE: bytes | words | ones | ranges | strings | escapes | records |
 *       shrink (cuts the segment's file short, where it can, else
 *       writes all-ones: gpux's mapping must not fault) */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuda_events.h"
#include "host_rec.h"
#include "sess_layout.h"

static uint64_t rng;

static uint64_t next(void)
{
	/* xorshift64*: a seed gives the same attack every time */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static unsigned char *seg;
static int seg_fd;
static uint64_t len;
/* The layout as gpux wrote it, read once before the attack starts. */
static struct gpux_sess_hdr lay;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A pointer at off when [off, off + n) lies inside the segment. */
static void *at(uint64_t off, uint64_t n)
{
	return off <= len && n <= len - off ? seg + off : NULL;
}

static void put32(uint64_t off, uint32_t v)
{
	void *p = at(off, 4);
	if (p)
		memcpy(p, &v, 4);
}

static void put64(uint64_t off, uint64_t v)
{
	void *p = at(off, 8);
	if (p)
		memcpy(p, &v, 8);
}

#define HDR(f) offsetof(struct gpux_sess_hdr, f)

static uint64_t slot_off(uint32_t i)
{
	return lay.slots_off + (uint64_t)i * lay.slot_size;
}

static uint64_t host_off(uint32_t i)
{
	return lay.hosts_off + (uint64_t)i * lay.host_size;
}

/* A value near a limit: just past it, far past it, all ones, negative. */
static uint64_t edge(uint64_t limit)
{
	static const int64_t d[] = { 1, 8, 4096, 1 << 20 };
	switch (next() % 6) {
	case 0: return limit + (uint64_t)d[next() % 4];
	case 1: return limit - 1;
	case 2: return UINT64_MAX;
	case 3: return (uint64_t)INT64_MIN;
	case 4: return 0x80000000u;
	default: return next();
	}
}

/* Claimed-looking entries: slots, regions, names and messages in use. */
static void claim_all(void)
{
	put32(HDR(slots_used), 1 + (uint32_t)(next() % (GPUX_SESS_MAX_SLOTS + 4)));
	put32(HDR(hosts_used), 1 + (uint32_t)(next() % (GPUX_SESS_MAX_HOSTS + 4)));
	put32(HDR(names_used), (uint32_t)(next() % (GPUX_SESS_MAX_NAMES + 8)));
	for (uint32_t i = 0; i < lay.nslots; i++) {
		put32(slot_off(i) + offsetof(struct gpux_sess_slot, state), GPUX_SLOT_LIVE);
		put32(slot_off(i) + offsetof(struct gpux_sess_slot, pid), (uint32_t)next());
	}
	for (uint32_t i = 0; i < lay.nhosts; i++) {
		put32(host_off(i) + offsetof(struct gpux_sess_host, state), GPUX_SLOT_LIVE);
		put32(host_off(i) + offsetof(struct gpux_sess_host, pid), 1 + (uint32_t)(next() % 4096));
	}
}

static void ranges(void)
{
	claim_all();
	put32(HDR(msgs_used), (uint32_t)edge(GPUX_SESS_MAX_MSGS));
	put32(HDR(msgs_lost), (uint32_t)next());
	uint32_t i = (uint32_t)(next() % lay.nslots);
	uint64_t s = slot_off(i);
	put64(s + offsetof(struct gpux_sess_slot, ring_head), edge(lay.ring_size));
	put64(s + offsetof(struct gpux_sess_slot, ring_drops), edge(1ull << 60));
	/* a record header with a length past the ring or the head */
	uint64_t ring = s + GPUX_SESS_SLOT_RING_OFF;
	put32(ring, (uint32_t)edge(lay.ring_size));
	put32(ring + 4, (uint32_t)next());
	/* map areas: drop counters and values near the limits */
	for (uint64_t o = s + GPUX_SESS_SLOT_RING_OFF + lay.ring_size; o + 8 <= s + lay.slot_size;
	     o += 8 * (1 + next() % 64))
		put64(o, edge(1ull << 60));
	uint32_t r = (uint32_t)(next() % (lay.nhosts ? lay.nhosts : 1));
	uint64_t h = host_off(r);
	if (lay.nhosts) {
		put64(h + offsetof(struct gpux_sess_host, ring_head), edge(GPUX_SESS_HRING_SIZE));
		put64(h + offsetof(struct gpux_sess_host, failures), edge(1ull << 48));
		put64(h + offsetof(struct gpux_sess_host, dumps), 1 + next() % 4);
		put64(h + offsetof(struct gpux_sess_host, kend_drops), edge(1ull << 48));
		for (int k = 0; k < GPUX_ACT_COUNT; k++)
			put64(h + offsetof(struct gpux_sess_host, acts) +
			      k * sizeof(struct gpux_act_count), edge(1ull << 48));
		/* the dump: a map index past the object's, a count past the dump */
		uint64_t dump = h + ((sizeof(struct gpux_sess_host) + 63) & ~63ull) +
				GPUX_SESS_HRING_SIZE;
		put32(dump, next() % 2 ? (uint32_t)edge(0x80000000u) : (uint32_t)(next() % 4));
		put32(dump + 4, (uint32_t)edge(next() % 2 ? lay.dump_size : 4));
	}
	/* the segment's own layout, just out of range */
	static const size_t fields[] = { HDR(slots_off), HDR(slot_size), HDR(names_off),
					 HDR(hosts_off), HDR(host_size), HDR(msgs_off),
					 HDR(dump_size), HDR(size) };
	if (next() % 4 == 0)
		put64(fields[next() % 8], edge(len));
}

/* Fills a text field with f(k) for every byte, no NUL. */
static void text(uint64_t off, size_t n, const char *what)
{
	unsigned char *p = at(off, n);
	size_t w = strlen(what);
	for (size_t k = 0; p && k < n; k++)
		p[k] = (unsigned char)what[k % w];
}

static void strings(const char *what)
{
	claim_all();
	put32(HDR(msgs_used), 1 + (uint32_t)(next() % GPUX_SESS_MAX_MSGS));
	for (uint32_t i = 0; i < GPUX_SESS_MAX_MSGS; i++) {
		uint64_t m = lay.msgs_off + (uint64_t)i * sizeof(struct gpux_sess_msg);
		put32(m, 1);
		text(m + offsetof(struct gpux_sess_msg, text), GPUX_SESS_MSG_LEN, what);
	}
	for (uint32_t i = 0; i < 64; i++) {
		uint64_t n = lay.names_off + (uint64_t)i * sizeof(struct gpux_sess_name);
		put32(n, 1);
		text(n + offsetof(struct gpux_sess_name, name), GPUX_SESS_NAME_LEN, what);
	}
	for (uint32_t i = 0; i < lay.nhosts; i++) {
		uint64_t h = host_off(i);
		put64(h + offsetof(struct gpux_sess_host, failures), 1);
		text(h + offsetof(struct gpux_sess_host, error), 128, what);
	}
}

/* Writing frames into host region i's ring after what gpux has read. */
struct hring {
	uint64_t h, ring, pos;
};

/* False when the region's tail is not in the segment. */
static bool hring_open(uint32_t i, struct hring *w)
{
	w->h = host_off(i);
	w->ring = w->h + ((sizeof(struct gpux_sess_host) + 63) & ~63ull);
	void *tp = at(w->h + offsetof(struct gpux_sess_host, ring_tail), 8);
	if (!tp)
		return false;
	memcpy(&w->pos, tp, 8);
	return true;
}

/* A frame of n bytes: false when it would cross the ring's end; else
 * true, and *p its bytes to fill (NULL when not in the segment). */
static bool hring_frame(struct hring *w, uint32_t n, unsigned char **p)
{
	uint64_t o = w->ring + w->pos % GPUX_SESS_HRING_SIZE;
	if (w->pos % GPUX_SESS_HRING_SIZE + n + 8 > GPUX_SESS_HRING_SIZE)
		return false;
	put32(o, n + 8);
	put32(o + 4, n);
	*p = at(o + 8, n);
	w->pos += n + 8;
	return true;
}

/* fill(w) on every host region's ring, the frames it wrote then
 * published to gpux. */
static void each_hring(void (*fill)(struct hring *w))
{
	claim_all();
	for (uint32_t i = 0; i < lay.nhosts; i++) {
		struct hring w;
		if (!hring_open(i, &w))
			return;
		fill(&w);
		put64(w.h + offsetof(struct gpux_sess_host, ring_head), w.pos);
	}
}

/* Well-framed records of the host ring with kinds and ids of any sort:
 * a watchpoint, an exit, a print of map 7 with div 0... */
static void records(struct hring *w)
{
	unsigned char *p;
	uint64_t end = w->pos + 4096;
	while (w->pos < end) {
		uint32_t n = 8 * (uint32_t)(2 + next() % 8);
		if (!hring_frame(w, n, &p))
			break;
		struct host_rec_hdr r = { (uint32_t)(1 + next() % HOST_REC_CEV),
					  (uint32_t)(next() % 4) };
		if (next() % 4 == 0)
			r.kind = HOST_REC_WATCH;
		if (p) {
			for (uint32_t k = 0; k < n; k++)
				p[k] = (unsigned char)next();
			memcpy(p, &r, sizeof(r));
			if (r.kind == HOST_REC_PRINT)
				memset(p + 16, next() % 2 ? 0 : 0xff, 8);
		}
	}
}

/* Timeline events (HOST_REC_CEV) of the right sizes with any content:
 * escapes in every string, any ids, times, grids; then one of no event
 * (the overwrite gpux must report). */
static void events(struct hring *w)
{
	static const char esc[] = "\x1b]0;owned\x07\x1b[2J\"\\\x9b" "31m\r\b\x7f";
	unsigned char *p;
	for (uint32_t k = 0; k <= 4 * GPUX_CEV_COUNT; k++) {
		uint32_t ev = k % GPUX_CEV_COUNT;
		uint32_t n = (uint32_t)(sizeof(struct host_rec_hdr) + sizeof(struct host_rec_cev) +
					gpux_cev_size(ev));
		if (k == 4 * GPUX_CEV_COUNT)
			ev = 1000; /* no event */
		if (!hring_frame(w, n, &p))
			break;
		if (p) {
			for (uint32_t b = 0; b < n; b++)
				p[b] = k & 1 ? (unsigned char)next() : (unsigned char)esc[b % (sizeof(esc) - 1)];
			struct host_rec_hdr r = { HOST_REC_CEV, ev };
			memcpy(p, &r, sizeof(r));
		}
	}
}

static void attack(const char *mode)
{
	if (!strcmp(mode, "bytes")) {
		for (int k = 0; k < 4096; k++)
			seg[next() % len] = (unsigned char)next();
	} else if (!strcmp(mode, "words")) {
		for (int k = 0; k < 4096; k++)
			put64((next() % len) & ~7ull, next());
	} else if (!strcmp(mode, "ones")) {
		memset(seg, 0xff, len);
	} else if (!strcmp(mode, "ranges")) {
		ranges();
	} else if (!strcmp(mode, "strings")) {
		strings("ABCDEFGHIJKLMNOPQRSTUVWXYZ");
	} else if (!strcmp(mode, "escapes")) {
		strings("\x1b]0;owned\x07\x1b[2J\x9b" "31m\r\b\x7f");
	} else if (!strcmp(mode, "records")) {
		each_hring(records);
	} else if (!strcmp(mode, "events")) {
		each_hring(events);
	} else if (!strcmp(mode, "shrink")) {
		/* gpux seals the file against this; then it scribbles */
		if (ftruncate(seg_fd, (off_t)(next() % 4096)) == 0)
			return; /* cut short: the mapping is gone */
		memset(seg, 0xff, len);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: hostile SEED MODE\n");
		return 2;
	}
	rng = strtoull(argv[1], NULL, 0) * 0x9e3779b97f4a7c15ull | 1;
	const char *env = getenv(GPUX_SESS_ENV);
	struct stat st;
	uint32_t ctl;
	uint64_t token[2];
	if (!env || gpux_sess_env_parse(env, &ctl, &seg_fd, token) || fstat(seg_fd, &st) ||
	    (uint64_t)st.st_size < sizeof(lay)) {
		fprintf(stderr, "hostile: no session segment\n");
		return 2;
	}
	len = (uint64_t)st.st_size;
	seg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, seg_fd, 0);
	if (seg == MAP_FAILED)
		return 2;
	memcpy(&lay, seg, sizeof(lay));
	if (lay.nslots > GPUX_SESS_MAX_SLOTS || lay.nhosts > GPUX_SESS_MAX_HOSTS)
		return 2;
	double t0 = now();
	while (now() - t0 < 0.5)
		attack(argv[2]);
	return 0;
}
