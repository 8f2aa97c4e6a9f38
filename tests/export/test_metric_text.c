/* The export's renderings of every kind of map against golden files:
 *   test_metric_text GOLDEN_DIR
 * compares the Prometheus text and the OTLP JSON of one snapshot with
 * GOLDEN_DIR/metrics.prom and metrics.otlp.json (GPUX_UPDATE_GOLDEN=1
 * writes them instead), then checks the series cap's admission from one
 * snapshot to the next. Maps are laid out as the VM holds them
 * (output.h): keys of 8-byte integers and strings, a bucket map's key
 * ending in its bucket index. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metric_set.h"
#include "ms_render.h"

#define STR 16 /* bytes of a string key or value */

static int failures;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "FAIL: %s\n", what);
		failures++;
	}
}

/* Entries of ks + vs bytes, appended. */
struct ents {
	unsigned char buf[64 * 64];
	struct out_entries e;
};

static void begin(struct ents *x, size_t ks, size_t vs)
{
	memset(x, 0, sizeof(*x));
	x->e = (struct out_entries){ x->buf, 0, ks, vs };
}

static unsigned char *add(struct ents *x)
{
	return x->buf + x->e.n++ * (x->e.ks + x->e.vs);
}

static void put64(unsigned char *p, int64_t v)
{
	memcpy(p, &v, 8);
}

static const struct type T_INT = { .kind = TY_INT, .bits = 64, .is_signed = true };
static const struct type T_UINT = { .kind = TY_INT, .bits = 64 };
static const struct type T_STR = { .kind = TY_STR };

static struct host_key key_int[] = { { { .kind = TY_INT, .bits = 64, .is_signed = true }, 0, 8 } };
static struct host_key key_str[] = { { { .kind = TY_STR }, 0, STR } };
static struct host_key key_int_str[] = {
	{ { .kind = TY_INT, .bits = 64 }, 0, 8 }, { { .kind = TY_STR }, 8, STR } };

static struct host_map map_of(const char *name, enum agg_kind agg, struct host_key *keys,
			      int nkeys)
{
	struct type v = { .kind = TY_AGG, .agg = agg };
	return (struct host_map){ .name = name, .value = v, .keys = keys, .nkeys = nkeys,
				  .bucket = agg == AGG_HIST || agg == AGG_LHIST };
}

static void add_map(struct metric_set *s, struct ms_caps *c, const struct host_map *hm,
		    const struct ents *x)
{
	check(ms_add_map(s, c, hm, &x->e) == 0, hm->name);
}

/* count() without keys, and one by an integer key (at the cap: 3 keys) */
static void counts(struct metric_set *s, struct ms_caps *c)
{
	struct ents x;
	struct host_map m = map_of("", AGG_COUNT, NULL, 0);
	begin(&x, 8, 8);
	put64(add(&x) + 8, 7);
	add_map(s, c, &m, &x);
	m = map_of("calls", AGG_COUNT, key_int, 1);
	begin(&x, 8, 8);
	for (int k = 3; k >= 1; k--) {
		unsigned char *e = add(&x);
		put64(e, k);
		put64(e + 8, 10 * k);
	}
	add_map(s, c, &m, &x);
	/* five keys over a cap of three: two fold into __overflow__ */
	m = map_of("many", AGG_COUNT, key_int, 1);
	begin(&x, 8, 8);
	for (int k = 0; k < 5; k++) {
		unsigned char *e = add(&x);
		put64(e, k);
		put64(e + 8, k + 1);
	}
	add_map(s, c, &m, &x);
}

/* sum() by strings that need escaping; min() and max() by two keys */
static void sums(struct metric_set *s, struct ms_caps *c)
{
	static const char *names[] = { "a\"b", "back\\slash", "new\nline", "\xff\x01x" };
	struct ents x;
	struct host_map m = map_of("bytes", AGG_SUM, key_str, 1);
	begin(&x, STR, 8);
	for (int k = 0; k < 3; k++) {
		unsigned char *e = add(&x);
		strncpy((char *)e, names[k], STR);
		put64(e + STR, -5 + 100 * k);
	}
	add_map(s, c, &m, &x);
	for (int agg = AGG_MIN; agg <= AGG_MAX; agg++) {
		m = map_of(agg == AGG_MIN ? "lo" : "hi", agg, key_int_str, 2);
		begin(&x, 8 + STR, 16);
		for (int k = 0; k < 2; k++) {
			unsigned char *e = add(&x);
			put64(e, (int64_t)k);
			strncpy((char *)e + 8, names[3], STR);
			put64(e + 8 + STR, agg == AGG_MIN ? -3 - k : 40 + k);
			put64(e + 16 + STR, 1);
		}
		add_map(s, c, &m, &x);
	}
}

/* avg() and stats(): {sum, count}; a plain integer; string values */
static void values(struct metric_set *s, struct ms_caps *c)
{
	struct ents x;
	struct host_map m = map_of("lat", AGG_AVG, NULL, 0);
	begin(&x, 8, 16);
	unsigned char *e = add(&x);
	put64(e + 8, 1001);
	put64(e + 16, 10);
	add_map(s, c, &m, &x);
	m = map_of("st", AGG_STATS, key_int, 1);
	begin(&x, 8, 16);
	e = add(&x);
	put64(e, 4);
	put64(e + 8, 300);
	put64(e + 16, 3);
	add_map(s, c, &m, &x);
	/* plain integers, four keys over the cap: one left out, no overflow */
	m = (struct host_map){ .name = "last", .value = T_INT, .keys = key_int, .nkeys = 1 };
	begin(&x, 8, 8);
	for (int k = 0; k < 4; k++) {
		e = add(&x);
		put64(e, k);
		put64(e + 8, -k);
	}
	add_map(s, c, &m, &x);
	m = (struct host_map){ .name = "big", .value = T_UINT };
	begin(&x, 8, 8);
	put64(add(&x) + 8, -1);
	add_map(s, c, &m, &x);
	m = (struct host_map){ .name = "who", .value = T_STR, .keys = key_int, .nkeys = 1,
			       .value_str = STR };
	begin(&x, 8, STR);
	e = add(&x);
	put64(e, 1);
	strncpy((char *)e + 8, "x=\"1\"", STR);
	add_map(s, c, &m, &x);
}

/* hist() by key (one key folds into __overflow__) and lhist() */
static void hists(struct metric_set *s, struct ms_caps *c)
{
	struct ents x;
	struct host_map m = map_of("size", AGG_HIST, key_int, 1);
	begin(&x, 16, 8);
	for (int k = 0; k < 4; k++)
		for (int b = 1; b <= 4; b++) {
			unsigned char *e = add(&x);
			put64(e, k);
			put64(e + 8, b + k); /* bucket: [0], [1], [2, 4), ... */
			put64(e + 16, b);
		}
	add_map(s, c, &m, &x);
	m = map_of("lin", AGG_LHIST, NULL, 0);
	m.lhist[0] = 0, m.lhist[1] = 30, m.lhist[2] = 10;
	begin(&x, 16, 8);
	for (int b = 0; b < 5; b++) { /* (..., 0), [0, 10), [10, 20), [20, 30), [30, ...) */
		unsigned char *e = add(&x);
		put64(e + 8, b);
		put64(e + 16, b + 1);
	}
	add_map(s, c, &m, &x);
}

static int golden(const char *dir, const char *name, const char *text, size_t len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (getenv("GPUX_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");
		return f && fwrite(text, 1, len, f) == len && !fclose(f) ? 0 : -1;
	}
	FILE *f = fopen(path, "r");
	static char want[1 << 20];
	size_t n = f ? fread(want, 1, sizeof(want), f) : 0;
	if (f)
		fclose(f);
	if (n == len && !memcmp(want, text, len))
		return 0;
	fprintf(stderr, "FAIL: %s differs; this run's text:\n%.*s\n", path, (int)len, text);
	return -1;
}

/* Admission keeps the keys admitted while they exist; a key gone frees
 * its place for the first new key in key order. */
static void admission(void)
{
	struct ms_caps c = { .max_series = 2 };
	struct host_map m = map_of("k", AGG_COUNT, key_int, 1);
	static const int rounds[3][4] = { { 5, 9, 0, 0 }, { 1, 5, 9, 0 }, { 1, 2, 9, 0 } };
	static const char *want[3] = { "5 9 -", "5 9 o", "1 9 o" };
	for (int r = 0; r < 3; r++) {
		struct ents x;
		begin(&x, 8, 8);
		for (int i = 0; i < 4 && rounds[r][i]; i++) {
			unsigned char *e = add(&x);
			put64(e, rounds[r][i]);
			put64(e + 8, 1);
		}
		struct metric_set s = { 0 };
		check(ms_add_map(&s, &c, &m, &x.e) == 0, "admission: add");
		char got[64] = "";
		bool over = false;
		for (size_t i = 0; i < s.f[0].n; i++) {
			if (s.f[0].s[i].overflow)
				over = true;
			else
				snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s ",
					 s.f[0].s[i].labels[0]);
		}
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s", over ? "o" : "-");
		if (strcmp(got, want[r]))
			fprintf(stderr, "admission round %d: '%s', want '%s'\n", r, got, want[r]);
		check(!strcmp(got, want[r]), "admission");
		ms_free(&s);
	}
	ms_caps_free(&c);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_metric_text GOLDEN_DIR\n");
		return 2;
	}
	struct metric_set s = { .start_ns = 1700000000000000000ull,
				.time_ns = 1700000010000000000ull };
	struct ms_caps c = { .max_series = 3 };
	counts(&s, &c);
	sums(&s, &c);
	values(&s, &c);
	hists(&s, &c);
	/* a second map that exports as gpux_map, as @ does, is left out */
	struct host_map clash = map_of("map", AGG_COUNT, NULL, 0);
	struct ents x;
	begin(&x, 8, 8);
	check(ms_add_map(&s, &c, &clash, &x.e) == 1, "name clash");
	size_t len;
	char *prom = prom_text(&s, &len);
	check(prom && !golden(argv[1], "metrics.prom", prom, len), "prometheus text");
	char *json = otlp_json(&s, "node1", &len);
	/* the scope's version is gpux's: the golden file says VERSION */
	static const char ver[] = "\"version\":\"" GPUX_VERSION "\"";
	static const char any[] = "\"version\":\"VERSION\"";
	char *v = json ? strstr(json, ver) : NULL;
	char *fixed = v ? malloc(len + sizeof(any)) : NULL;
	if (fixed) {
		size_t head = (size_t)(v - json);
		memcpy(fixed, json, head);
		memcpy(fixed + head, any, strlen(any));
		strcpy(fixed + head + strlen(any), v + strlen(ver));
		len = strlen(fixed);
		free(json);
		json = fixed;
	}
	check(fixed && !golden(argv[1], "metrics.otlp.json", json, len), "otlp json");
	free(prom);
	free(json);
	ms_free(&s);
	ms_caps_free(&c);
	admission();
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}
