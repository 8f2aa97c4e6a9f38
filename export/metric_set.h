/* A snapshot of a run's maps as metric families (metric_set.c), which
 * the Prometheus text (prom_text.c) and OTLP JSON (otlp_json.c) render.
 * Each map is one family named gpux_NAME (@ alone: gpux_map); its keys
 * become label values, as print() writes them, cleaned to printable
 * ASCII (other bytes as \xNN; newlines kept for stacks). At most
 * max_series keys of a map are series of their own: the keys admitted
 * stay while they exist, new ones take free places in key order, and
 * the rest fold into one overflow series (labels "__overflow__"). */
#ifndef GPUX_METRIC_SET_H
#define GPUX_METRIC_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host_obj.h"
#include "output.h"

#define MS_OVERFLOW "__overflow__"

enum ms_kind {
	MS_COUNTER,   /* count(), sum() */
	MS_GAUGE,     /* min(), max(), avg(), integers assigned */
	MS_SUMMARY,   /* stats(): sum and count */
	MS_HISTOGRAM, /* hist(), lhist() */
	MS_INFO,      /* any other value: 1, the value as a label */
};

struct ms_series {
	char **labels;   /* a value per key component, clean text */
	bool overflow;   /* the series other keys fold into */
	int64_t v;       /* counter, gauge */
	int64_t sum;     /* avg, summary */
	uint64_t count;  /* avg, summary, histogram (all buckets) */
	uint64_t *bk;    /* histogram: nb counts, not cumulative */
	char *text;      /* info: the value, clean text */
};

struct ms_family {
	char *name;       /* gpux_foo */
	char *help;       /* what the map is, for HELP lines */
	char *map;        /* @foo */
	enum ms_kind kind;
	enum agg_kind agg;
	bool is_unsigned; /* v is a u64 */
	int nkeys;
	int nb;           /* histogram buckets; the last has no upper bound */
	int64_t *le;      /* histogram: bucket i holds values <= le[i], i < nb - 1 */
	struct ms_series *s;
	size_t n;
	size_t dropped;   /* keys folded into the overflow series or left out */
};

struct metric_set {
	struct ms_family *f;
	int n, cap;
	uint64_t start_ns, time_ns; /* wall clock: the run's start, the snapshot */
};

/* The keys each map has admitted, kept from one snapshot to the next. */
struct ms_admitted {
	char *map;
	unsigned char *keys; /* n keys of ks bytes, in key order */
	size_t n, ks;
};

struct ms_caps {
	struct ms_admitted *m;
	int n;
	size_t max_series;
};

/* The metric name of a map: gpux_NAME, gpux_map for @ (malloc'd). */
char *ms_metric_name(const char *map);

/* Adds map hm with its elements e (as out_entries describes them) to s.
 * 0; 1 when another map already has its metric name (left out); -1 if
 * memory ran out. */
int ms_add_map(struct metric_set *s, struct ms_caps *caps, const struct host_map *hm,
	       const struct out_entries *e);
void ms_free(struct metric_set *s);
void ms_caps_free(struct ms_caps *c);

/* Clean text of s[0..n): printable ASCII and newlines as they are, other
 * bytes as \xNN (malloc'd, NULL if memory ran out). */
char *ms_clean(const char *s, size_t n);

#endif
