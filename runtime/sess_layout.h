/* Laying out a session segment (abi/session.h) and checking one: the
 * controller sizes and fills it, the runtime checks what it mapped.
 * Linked into both as gpux_session. */
#ifndef GPUX_SESS_LAYOUT_H
#define GPUX_SESS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "session.h"

struct gpux_sess_spec {
	const struct gpux_sess_probe *probes;
	uint32_t nprobes;
	const struct gpux_sess_map *maps; /* area_off/area_size are computed */
	uint32_t nmaps;
	const char *ptx;
	size_t ptx_len;
	const char *link_ptx; /* the link form (session.h), or NULL */
	size_t link_ptx_len;
	const void *hobj; /* host object, or NULL */
	size_t hobj_len;
	const struct gpux_sess_hbind *hbind;
	uint32_t nhbind;
	uint64_t dump_size;
	uint32_t cev_mask;
};

/* Bytes a map's area takes: header, state words (padded to 8), keys,
 * values. */
uint64_t gpux_sess_area_size(const struct gpux_sess_map *m);
/* The segment's total size for spec. */
uint64_t gpux_sess_size(const struct gpux_sess_spec *spec);
/* Where a slot's event ring starts, from the slot's start. */
#define GPUX_SESS_SLOT_RING_OFF ((sizeof(struct gpux_sess_slot) + 63) & ~(uint64_t)63)
/* The header gpux_sess_init writes for spec, into h (the controller's
 * private copy: the segment itself is the traced program's to write),
 * and the map table with its areas placed (spec->nmaps entries). */
void gpux_sess_plan(const struct gpux_sess_spec *spec, struct gpux_sess_hdr *h);
void gpux_sess_plan_maps(const struct gpux_sess_spec *spec, struct gpux_sess_map *maps);
/* Lays out and fills a zeroed segment of gpux_sess_size(spec) bytes. */
void gpux_sess_init(void *seg, const struct gpux_sess_spec *spec);
/* Checks a mapped segment of len bytes: 0, or -1 if it is not one. */
int gpux_sess_check(const void *seg, uint64_t len);

/* GPUX_SESS_ENV's value (abi/session.h): "PID:FD:TOKEN". Parse returns
 * 0, or -1 when s is not of that form. */
#define GPUX_SESS_ENV_SIZE 64
void gpux_sess_env_format(char buf[GPUX_SESS_ENV_SIZE], uint32_t pid, int fd,
			  const uint64_t token[2]);
int gpux_sess_env_parse(const char *s, uint32_t *pid, int *fd, uint64_t token[2]);

#endif
