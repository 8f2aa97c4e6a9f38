/* clear() and zero() from BEGIN, END or interval probes on maps that live
 * elsewhere (the device's, and cuda: probes' in the traced processes):
 * gpux cannot reset them in place while they are updated, so it keeps
 * what they held at that moment and prints the difference from it. Only
 * maps whose values add up can be taken apart this way: count, sum, avg,
 * stats, hist and lhist (map_base_supported). */
#ifndef GPUX_MAP_BASE_H
#define GPUX_MAP_BASE_H

#include <stdbool.h>

#include "output.h"

struct map_base {
	const char *name;   /* the map's, from the program */
	unsigned char *kv;  /* entries as out_entries holds them, sorted by key */
	size_t n, ks, vs;
	bool keep;          /* zero(): keys stay, with a zero value */
};

struct map_bases {
	struct map_base *v;
	int n;
};

bool map_base_supported(const struct host_map *hm);
/* Remembers e (the map's current elements) as name's baseline. 0 or -1. */
int map_base_take(struct map_bases *b, const char *name, const struct out_entries *e,
		  bool keep);
/* e minus name's baseline, in place: a cleared map's keys without news
 * are dropped. */
void map_base_apply(const struct map_bases *b, const char *name, struct out_entries *e);
void map_base_free(struct map_bases *b);

#endif
