/* Session segment layout (sess_layout.h), shared by gpux and libgpux-rt.so. */
#include "sess_layout.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

uint64_t gpux_sess_area_size(const struct gpux_sess_map *m)
{
	return sizeof(struct gpux_sess_map_area) +
	       gpux_sess_shards(m) * GPUX_SHARD_BYTES(m->max_entries, m->key_size, m->value_size);
}

/* Offsets of everything for spec; returns the total size. */
static uint64_t layout(const struct gpux_sess_spec *spec, struct gpux_sess_hdr *h)
{
	uint64_t at = align_up(sizeof(*h), 64);
	h->probes_off = at;
	at = align_up(at + (uint64_t)spec->nprobes * sizeof(struct gpux_sess_probe), 64);
	h->maps_off = at;
	at = align_up(at + (uint64_t)spec->nmaps * sizeof(struct gpux_sess_map), 64);
	h->ptx_off = at;
	at = align_up(at + spec->ptx_len + 1, 64);
	h->link_ptx_off = at;
	at = align_up(at + spec->link_ptx_len + 1, 64);
	h->names_off = at;
	at = align_up(at + (uint64_t)GPUX_SESS_MAX_NAMES * sizeof(struct gpux_sess_name), 4096);
	h->slots_off = at;
	uint64_t slot = align_up(sizeof(struct gpux_sess_slot), 64) + GPUX_SESS_RING_SIZE;
	for (uint32_t i = 0; i < spec->nmaps; i++)
		slot += align_up(gpux_sess_area_size(&spec->maps[i]), 128);
	h->slot_size = align_up(slot, 4096);
	h->nslots = GPUX_SESS_MAX_SLOTS;
	at += h->slot_size * h->nslots;
	h->hobj_off = at;
	at = align_up(at + spec->hobj_len, 64);
	h->hbind_off = at;
	at = align_up(at + (uint64_t)spec->nhbind * sizeof(struct gpux_sess_hbind), 4096);
	h->hosts_off = at;
	h->host_size = 0;
	h->nhosts = 0;
	if (spec->hobj_len) {
		h->host_size = align_up(align_up(sizeof(struct gpux_sess_host), 64) +
					GPUX_SESS_HRING_SIZE + spec->dump_size, 4096);
		h->nhosts = GPUX_SESS_MAX_HOSTS;
	}
	at = align_up(at + h->host_size * h->nhosts, 64);
	h->msgs_off = at;
	return at + (uint64_t)GPUX_SESS_MAX_MSGS * sizeof(struct gpux_sess_msg);
}

uint64_t gpux_sess_size(const struct gpux_sess_spec *spec)
{
	struct gpux_sess_hdr h;
	return layout(spec, &h);
}

void gpux_sess_plan(const struct gpux_sess_spec *spec, struct gpux_sess_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->size = layout(spec, h);
	h->magic = GPUX_SESS_MAGIC;
	h->version = GPUX_SESS_VERSION;
	h->nprobes = spec->nprobes;
	h->nmaps = spec->nmaps;
	h->ring_size = GPUX_SESS_RING_SIZE;
	h->ptx_len = spec->ptx_len;
	h->link_ptx_len = spec->link_ptx_len;
	h->hobj_len = spec->hobj_len;
	h->nhbind = spec->nhbind;
	h->dump_size = spec->dump_size;
	h->cev_mask = spec->cev_mask;
}

void gpux_sess_plan_maps(const struct gpux_sess_spec *spec, struct gpux_sess_map *maps)
{
	uint64_t at = GPUX_SESS_SLOT_RING_OFF + GPUX_SESS_RING_SIZE;
	for (uint32_t i = 0; i < spec->nmaps; i++) {
		maps[i] = spec->maps[i];
		maps[i].area_off = at;
		maps[i].area_size = gpux_sess_area_size(&maps[i]);
		at += align_up(maps[i].area_size, 128);
	}
}

void gpux_sess_init(void *seg, const struct gpux_sess_spec *spec)
{
	struct gpux_sess_hdr *h = seg;
	gpux_sess_plan(spec, h);
	gpux_sess_plan_maps(spec, gpux_sess_maps(h));
	if (spec->nprobes)
		memcpy(gpux_sess_probes(h), spec->probes,
		       spec->nprobes * sizeof(struct gpux_sess_probe));
	if (spec->ptx_len)
		memcpy((char *)h + h->ptx_off, spec->ptx, spec->ptx_len);
	if (spec->link_ptx_len)
		memcpy((char *)h + h->link_ptx_off, spec->link_ptx, spec->link_ptx_len);
	for (uint32_t i = 0; i < h->nslots; i++)
		gpux_sess_slot_at(h, i)->ring_off = GPUX_SESS_SLOT_RING_OFF;
	if (spec->hobj_len)
		memcpy((char *)h + h->hobj_off, spec->hobj, spec->hobj_len);
	if (spec->nhbind)
		memcpy(gpux_sess_hbinds(h), spec->hbind, spec->nhbind * sizeof(*spec->hbind));
	for (uint32_t i = 0; i < h->nhosts; i++) {
		struct gpux_sess_host *r = gpux_sess_host_at(h, i);
		r->ring_off = align_up(sizeof(*r), 64);
		r->dump_off = r->ring_off + GPUX_SESS_HRING_SIZE;
	}
}

int gpux_sess_check(const void *seg, uint64_t len)
{
	const struct gpux_sess_hdr *h = seg;
	if (len < sizeof(*h) || h->magic != GPUX_SESS_MAGIC ||
	    h->version != GPUX_SESS_VERSION || h->size > len)
		return -1;
	if (h->slots_off + h->slot_size * h->nslots > len || h->ptx_off + h->ptx_len >= len ||
	    h->link_ptx_off + h->link_ptx_len >= len)
		return -1;
	if (h->hobj_off + h->hobj_len > len || h->hbind_off + (uint64_t)h->nhbind *
	    sizeof(struct gpux_sess_hbind) > len || h->hosts_off + h->host_size * h->nhosts > len ||
	    h->msgs_off + (uint64_t)GPUX_SESS_MAX_MSGS * sizeof(struct gpux_sess_msg) > len)
		return -1;
	return 0;
}

void gpux_sess_env_format(char buf[GPUX_SESS_ENV_SIZE], uint32_t pid, int fd,
			  const uint64_t token[2])
{
	snprintf(buf, GPUX_SESS_ENV_SIZE, "%" PRIu32 ":%d:%016" PRIx64 "%016" PRIx64, pid, fd,
		 token[0], token[1]);
}

/* n hex digits at s into *v */
static bool hex(const char *s, int n, uint64_t *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return false;
		*v = *v << 4 | (uint64_t)d;
	}
	return true;
}

int gpux_sess_env_parse(const char *s, uint32_t *pid, int *fd, uint64_t token[2])
{
	unsigned long p = 0, f = 0;
	int i = 0, j;
	for (j = i; s[i] >= '0' && s[i] <= '9' && i - j < 10; i++)
		p = p * 10 + (unsigned long)(s[i] - '0');
	if (i == j || s[i++] != ':')
		return -1;
	for (j = i; s[i] >= '0' && s[i] <= '9' && i - j < 9; i++)
		f = f * 10 + (unsigned long)(s[i] - '0');
	if (i == j || s[i++] != ':' || p == 0 || p > UINT32_MAX)
		return -1;
	if (strlen(s + i) != 32 || !hex(s + i, 16, &token[0]) || !hex(s + i + 16, 16, &token[1]))
		return -1;
	*pid = (uint32_t)p;
	*fd = (int)f;
	return 0;
}
