/* Trust in a session segment (sess_trust.h). */
#include "sess_trust.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sess_layout.h"

/* FNV-1a over 8-byte words: a fingerprint against scribbles, not a MAC
 * (the program can read the segment and forge any sum). */
static uint64_t sum_range(uint64_t sum, const unsigned char *p, uint64_t n)
{
	const uint64_t prime = 0x100000001b3ull;
	uint64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		sum = (sum ^ w) * prime;
	}
	for (; i < n; i++)
		sum = (sum ^ p[i]) * prime;
	return sum;
}

/* The parts of the segment only gpux writes, besides the header: the
 * probe and map tables and the probe module, the host object and its
 * bindings, and each slot's and host region's ring offsets. */
static uint64_t fixed_sum(const struct gpux_sess_hdr *h, const struct gpux_sess_hdr *plan)
{
	const unsigned char *b = (const unsigned char *)h;
	uint64_t sum = 0xcbf29ce484222325ull;
	sum = sum_range(sum, b + plan->probes_off, plan->names_off - plan->probes_off);
	sum = sum_range(sum, b + plan->hobj_off, plan->hosts_off - plan->hobj_off);
	for (uint32_t i = 0; i < plan->nslots; i++) {
		const struct gpux_sess_slot *s = (const struct gpux_sess_slot *)
			(b + plan->slots_off + (uint64_t)i * plan->slot_size);
		uint64_t off = __atomic_load_n(&s->ring_off, __ATOMIC_RELAXED);
		sum = sum_range(sum, (const unsigned char *)&off, 8);
	}
	for (uint32_t i = 0; i < plan->nhosts; i++) {
		const struct gpux_sess_host *r = (const struct gpux_sess_host *)
			(b + plan->hosts_off + (uint64_t)i * plan->host_size);
		uint64_t w[2] = { __atomic_load_n(&r->ring_off, __ATOMIC_RELAXED),
				  __atomic_load_n(&r->dump_off, __ATOMIC_RELAXED) };
		sum = sum_range(sum, (const unsigned char *)w, sizeof(w));
	}
	return sum;
}

void sess_trust_init(struct sess_trust *t, const struct gpux_sess_hdr *h,
		     const struct gpux_sess_hdr *plan)
{
	struct gpux_sess_hdr p = *plan; /* plan may be t's own */
	memset(t, 0, sizeof(*t));
	t->h = h;
	t->plan = p;
	t->fixed_sum = fixed_sum(h, plan);
}

void sess_corrupt(struct sess_trust *t, const char *what)
{
	if (t->corrupt)
		return;
	t->corrupt = true;
	fprintf(stderr, "gpux: WARNING: the traced program overwrote gpux's shared memory (%s); "
		"results from it are not trustworthy\n", what);
}

bool sess_count_ok(struct sess_trust *t, uint64_t v, uint64_t max, const char *what)
{
	if (v <= max)
		return true;
	sess_corrupt(t, what);
	return false;
}

bool sess_pid_ok(struct sess_trust *t, uint32_t pid)
{
	if (pid && pid < SESS_MAX_PID)
		return true;
	sess_corrupt(t, "a process id out of range");
	return false;
}

/* The header's fields that gpux lays out and no runtime writes. */
static bool same_layout(const struct gpux_sess_hdr *a, const struct gpux_sess_hdr *p)
{
#define SAME(f) (__atomic_load_n(&a->f, __ATOMIC_RELAXED) == p->f)
	return SAME(magic) && SAME(version) && SAME(size) && SAME(probes_off) &&
	       SAME(maps_off) && SAME(ptx_off) && SAME(names_off) && SAME(slots_off) &&
	       SAME(slot_size) && SAME(ptx_len) && SAME(nprobes) && SAME(nmaps) &&
	       SAME(nslots) && SAME(ring_size) && SAME(msgs_off) && SAME(link_ptx_off) &&
	       SAME(link_ptx_len) && SAME(hobj_off) && SAME(hobj_len) && SAME(hbind_off) &&
	       SAME(nhbind) && SAME(nhosts) && SAME(hosts_off) && SAME(host_size) &&
	       SAME(dump_size) && SAME(cev_mask);
#undef SAME
}

bool sess_trust_check(struct sess_trust *t)
{
	if (!t->h)
		return true;
	if (!same_layout(t->h, &t->plan)) {
		sess_corrupt(t, "the segment's header");
		return false;
	}
	if (fixed_sum(t->h, &t->plan) != t->fixed_sum) {
		sess_corrupt(t, "the probe and map tables");
		return false;
	}
	return true;
}

bool sess_text(char *dst, size_t cap, const char *src, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	bool odd = false;
	size_t o = 0, i = 0;
	for (; i < n; i++) {
		/* one byte at a time: src may change under us */
		unsigned char c = (unsigned char)__atomic_load_n(&src[i], __ATOMIC_RELAXED);
		if (!c)
			break;
		bool plain = c >= ' ' && c <= '~';
		size_t w = plain ? 1 : 4;
		if (o + w >= cap) {
			odd |= !plain;
			break;
		}
		if (plain) {
			dst[o++] = (char)c;
			continue;
		}
		odd = true;
		dst[o++] = '\\';
		dst[o++] = 'x';
		dst[o++] = hex[c >> 4];
		dst[o++] = hex[c & 15];
	}
	dst[o] = '\0';
	return odd || i == n; /* the runtime ends its texts inside the field */
}

bool sess_text_field(char *field, size_t size)
{
	size_t n = strnlen(field, size);
	bool odd = false;
	for (size_t i = 0; i < n && !odd; i++)
		odd = (unsigned char)field[i] < ' ' || (unsigned char)field[i] > '~';
	char *buf = odd ? malloc(size) : NULL;
	if (!buf) { /* nothing to escape; or, without memory, blank it */
		if (odd)
			memset(field, 0, size);
		return odd;
	}
	sess_text(buf, size, field, n);
	memset(field, 0, size);
	memcpy(field, buf, strlen(buf));
	free(buf);
	return true;
}
