/* Thrashing detection (thrashing.h). Written from the driver's
 * documented behaviour; the topology is fixed to one GPU on PCIe and the
 * CPU: the GPU can map host memory, the CPU cannot map the GPU's, and no
 * processor has fast (NVLink + native atomics) access to another. No
 * floating point, no libc beyond calloc/free/memset (kmod builds it). */
#include "thrashing.h"

#include <stdlib.h>
#include <string.h>

/* Names prefixed: kmod/ builds this in one unit with uvm.c and the
 * kernel's headers. */
#define THR_BIT(p) (1u << (p))
#define THR_MAX_EVENTS 7 /* the driver's 3-bit counter saturates */

struct thr_page {
	uint64_t last;         /* stamp of the last event; 0: none */
	uint64_t throttle_end; /* stamp; 0: no throttling period */
	uint64_t deadline;     /* stamp of the pin's end; 0: for good */
	uint8_t events;        /* consecutive events within a lapse */
	uint8_t procs;         /* processors thrashing on it */
	uint8_t throttled;     /* processors throttled on it */
	uint8_t throttle_count;
	int8_t dnt;            /* the processor not throttled this period */
	int8_t pinned;         /* where it is pinned, THR_NOPROC if not */
};

struct thr_block {
	struct thr_page *pages; /* NULL until two processors alternate */
	uint64_t last, last_thrashing;
	int8_t last_proc;
	uint8_t resets;
	uint16_t npinned;
	uint64_t thrashing[THR_WORDS], pinned[THR_WORDS];
};

/* Stamps are the clock + 1, so that 0 can mean "never" at time 0. */
static uint64_t thr_stamp(uint64_t now) { return now + 1; }

static bool thr_tst(const uint64_t *m, uint32_t i) { return m[i / 64] >> (i % 64) & 1; }
static void thr_mset(uint64_t *m, uint32_t i) { m[i / 64] |= 1ull << (i % 64); }
static void thr_mclr(uint64_t *m, uint32_t i) { m[i / 64] &= ~(1ull << (i % 64)); }

void thr_params_set(struct thr_params *t, const struct uvm_params *p)
{
	uint64_t lapse = (uint64_t)p->thrashing_lapse_usec * 1000;
	t->enable = p->thrashing_enable != 0;
	t->threshold = p->thrashing_threshold;
	t->pin_threshold = p->thrashing_pin_threshold;
	t->max_resets = p->thrashing_max_resets;
	t->lapse_ns = lapse;
	t->nap_ns = lapse * p->thrashing_nap;
	t->epoch_ns = lapse * p->thrashing_epoch;
	t->pin_ns = lapse * p->thrashing_pin;
}

static void thr_unpin(struct thr_block *b, struct thr_page *pg, uint32_t i)
{
	pg->pinned = THR_NOPROC;
	pg->deadline = 0;
	thr_mclr(b->pinned, i);
	b->npinned--;
}

/* Throttled processors go free; the period ends only if there were
 * any (as the driver's per-processor release does). */
static void thr_end_throttling(struct thr_page *pg)
{
	if (pg->throttled)
		pg->throttle_end = 0;
	pg->throttled = 0;
}

/* Forgets the page's thrashing (not its throttle count or do-not-throttle
 * processor, which the driver keeps across resets). */
static void thr_reset_page(struct thr_block *b, uint32_t i)
{
	struct thr_page *pg = &b->pages[i];
	thr_end_throttling(pg);
	if (pg->pinned != THR_NOPROC)
		thr_unpin(b, pg, i);
	pg->last = 0;
	pg->events = 0;
	pg->procs = 0;
	thr_mclr(b->thrashing, i);
}

int thr_migrated(struct thr_block **tb, const struct thr_params *p, const uint64_t *mask,
		 int proc, uint64_t now, struct uvm_stats *st)
{
	if (!p->enable)
		return 0;
	if (!*tb) {
		*tb = calloc(1, sizeof(**tb));
		if (!*tb)
			return -1;
		(*tb)->last_proc = THR_NOPROC;
	}
	struct thr_block *b = *tb;
	uint64_t t = thr_stamp(now);
	if (!b->pages) {
		/* tracking starts when the block moves between processors
		 * within a lapse */
		if (!b->last || b->last_proc == proc || t - b->last > p->lapse_ns)
			goto done;
		b->pages = calloc(SIM_BLOCK_PAGES, sizeof(*b->pages));
		if (!b->pages)
			goto done;
		for (uint32_t i = 0; i < SIM_BLOCK_PAGES; i++)
			b->pages[i].dnt = b->pages[i].pinned = THR_NOPROC;
	}
	for (uint32_t i = 0; i < SIM_BLOCK_PAGES; i++) {
		if (!thr_tst(mask, i))
			continue;
		struct thr_page *pg = &b->pages[i];
		uint64_t last = pg->last;
		pg->procs |= (uint8_t)THR_BIT(proc);
		pg->last = t;
		if (!last)
			continue;
		if (t - last <= p->lapse_ns) {
			if (pg->events < THR_MAX_EVENTS)
				pg->events++;
			if (pg->events == p->threshold) {
				thr_mset(b->thrashing, i);
				st->thrashing++;
			}
			if (pg->events >= p->threshold)
				b->last_thrashing = t;
		} else if (pg->events >= p->threshold && pg->pinned == THR_NOPROC) {
			thr_reset_page(b, i);
		}
	}
done:
	b->last = t;
	b->last_proc = (int8_t)proc;
	return 0;
}

/* The driver's unpinning worker, run lazily: a pin past its deadline
 * (within the worker's granularity) ends, the GPU's remote mapping goes
 * and the page starts over. */
static bool thr_expire(struct thr_block *b, uint32_t i, uint64_t t, uint64_t *remote)
{
	struct thr_page *pg = &b->pages[i];
	if (pg->pinned == THR_NOPROC || !pg->deadline ||
	    pg->deadline > t + SIM_THRASHING_TIMER_NS)
		return false;
	if (remote)
		thr_mclr(remote, i);
	thr_reset_page(b, i);
	return true;
}

static void thr_expire_all(struct thr_block *b, uint64_t t, uint64_t *remote)
{
	for (uint32_t i = 0; i < SIM_BLOCK_PAGES && b->npinned; i++)
		if (thr_tst(b->pinned, i))
			thr_expire(b, i, t, remote);
}

bool thr_pinned(struct thr_block *b, uint32_t page, uint64_t now)
{
	if (!b || !b->pages || b->pages[page].pinned == THR_NOPROC)
		return false;
	return !thr_expire(b, page, thr_stamp(now), NULL);
}

/* Who may access whose memory: the GPU maps host memory, the CPU cannot
 * map the GPU's. */
static uint8_t thr_accessible_from(int proc)
{
	return proc == THR_CPU ? THR_BIT(THR_CPU) | THR_BIT(THR_GPU) : THR_BIT(THR_GPU);
}

/* Where every thrashing processor can reach: the requester if they all
 * can, else the host (the only memory both can map). */
static int thr_pin_location(const struct thr_page *pg, int requester)
{
	if ((pg->procs & ~thr_accessible_from(requester)) == 0)
		return requester;
	return (pg->procs & THR_BIT(THR_CPU)) ? THR_CPU : requester;
}

/* get_hint_for_migration_thrashing without a preferred location, and
 * with the fast-access path never taken (PCIe). */
static struct thr_hint_out thr_migration_hint(const struct thr_params *p,
					  const struct thr_page *pg, int requester)
{
	struct thr_hint_out h = { THR_HINT_NONE, THR_NOPROC, 0 };
	if (pg->pinned != THR_NOPROC) {
		if (requester == pg->dnt) {
			h.type = THR_HINT_PIN;
			h.residency = thr_pin_location(pg, requester);
		} else if (thr_accessible_from(pg->pinned) & THR_BIT(requester)) {
			h.type = THR_HINT_PIN;
			h.residency = pg->pinned;
		} else {
			h.type = THR_HINT_THROTTLE;
		}
	} else if (requester != pg->dnt) {
		h.type = THR_HINT_THROTTLE;
	} else if (pg->throttle_count >= p->pin_threshold) {
		h.type = THR_HINT_PIN;
		h.residency = requester;
	}
	return h;
}

static void thr_pin(struct thr_block *b, const struct thr_params *p, uint32_t i, uint64_t t,
		int where, struct uvm_stats *st)
{
	struct thr_page *pg = &b->pages[i];
	if (pg->pinned != where)
		thr_end_throttling(pg); /* first pin, or a move */
	if (pg->pinned == THR_NOPROC) {
		pg->deadline = p->pin_ns ? t + p->pin_ns : 0;
		pg->throttle_count = 0;
		thr_mset(b->pinned, i);
		b->npinned++;
		st->thrashing_pins++;
	}
	pg->pinned = (int8_t)where;
}

struct thr_hint_out thr_hint(struct thr_block *b, const struct thr_params *p, uint32_t page,
			     int requester, uint64_t now, uint64_t *remote, struct uvm_stats *st)
{
	struct thr_hint_out h = { THR_HINT_NONE, THR_NOPROC, 0 };
	if (!p->enable || !b || !b->pages)
		return h;
	uint64_t t = thr_stamp(now);
	thr_expire_all(b, t, remote);
	if (b->last_thrashing && t - b->last_thrashing > p->epoch_ns && !b->npinned &&
	    b->resets < p->max_resets) {
		/* no thrashing for an epoch: start the block over */
		b->resets++;
		free(b->pages);
		b->pages = NULL;
		b->last_proc = THR_NOPROC;
		b->last = b->last_thrashing = 0;
		memset(b->thrashing, 0, sizeof(b->thrashing));
		return h;
	}
	struct thr_page *pg = &b->pages[page];
	if (pg->events < p->threshold)
		return h;
	if (pg->throttled & THR_BIT(requester)) {
		if (t < pg->throttle_end && requester != pg->dnt) {
			h.type = THR_HINT_THROTTLE;
			h.throttle_end = pg->throttle_end - 1;
			return h;
		}
		pg->throttled &= (uint8_t)~THR_BIT(requester);
		if (!pg->throttled)
			pg->throttle_end = 0;
	}
	if (t - pg->last > p->lapse_ns && pg->pinned == THR_NOPROC)
		return h; /* no longer thrashing */
	pg->procs |= (uint8_t)THR_BIT(requester);
	/* a new throttling period: the other processor keeps the page */
	if (t > pg->throttle_end) {
		pg->throttle_end = t + p->nap_ns;
		pg->dnt = pg->dnt == requester ? THR_NOPROC : (int8_t)requester;
	} else if (pg->dnt == THR_NOPROC) {
		pg->dnt = (int8_t)requester;
	}
	h = thr_migration_hint(p, pg, requester);
	if (h.type == THR_HINT_PIN) {
		thr_pin(b, p, page, t, h.residency, st);
	} else if (h.type == THR_HINT_THROTTLE) {
		if (!(pg->throttled & THR_BIT(requester))) {
			pg->throttled |= (uint8_t)THR_BIT(requester);
			if (pg->pinned == THR_NOPROC && pg->throttle_count < 255)
				pg->throttle_count++;
			st->thrashing_throttles++;
		}
		h.throttle_end = pg->throttle_end - 1;
	}
	return h;
}

const uint64_t *thr_thrashing(const struct thr_block *b)
{
	if (!b || !b->pages)
		return NULL;
	for (uint32_t w = 0; w < THR_WORDS; w++)
		if (b->thrashing[w])
			return b->thrashing;
	return NULL;
}

void thr_forget(struct thr_block *b, uint32_t page)
{
	if (b && b->pages && (thr_tst(b->thrashing, page) || b->pages[page].last))
		thr_reset_page(b, page);
}

void thr_free(struct thr_block *b)
{
	if (!b)
		return;
	free(b->pages);
	free(b);
}
