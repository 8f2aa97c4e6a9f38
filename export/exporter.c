/* The exporter (export.h): when a snapshot is wanted, the maps the loop
 * adds become one metric set (metric_set.h), rendered once for each
 * export that wants it and handed to the module's server or pusher
 * (export_net.h). */
#include "export.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "export_net.h"
#include "metric_set.h"
#include "ms_render.h"

/* Scrapes closer together than this share a snapshot: however often
 * clients scrape, the maps are read at most a few times a second. */
#define SCRAPE_GAP_NS 250000000L

struct exporter {
	const struct export_net *net;
	struct prom_server *ps;
	struct otlp_pusher *op;
	struct ms_caps caps;
	struct metric_set set; /* being made, between exporter_due and publish */
	uint64_t start_ns;     /* wall clock at open */
	int64_t interval_ns, next_push; /* CLOCK_MONOTONIC */
	int64_t last_prom;     /* CLOCK_MONOTONIC of the last text served */
	uint64_t prom_upto;    /* scrapes this snapshot answers; 0: none */
	bool want_prom, want_otlp, clash_said;
	char host[256];
};

static int64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static uint64_t wall_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int start_one(struct exporter *x, const struct export_spec *s, FILE *info, char *err,
		     size_t elen)
{
	if (s->kind == EXPORT_OTLP)
		return x->net->otlp_start(&x->op, s->url, err, elen);
	char where[300];
	if (x->net->prom_start(&x->ps, s->host, s->port, where, sizeof(where), err, elen))
		return -1;
	if (info)
		fprintf(info, "gpux: metrics on %s (GET /metrics)\n", where);
	return 0;
}

int exporter_open(struct exporter **out, const struct export_cfg *c, char *err, size_t elen)
{
	*out = NULL;
	struct exporter *x = calloc(1, sizeof(*x));
	if (!x) {
		snprintf(err, elen, "out of memory");
		return -1;
	}
	x->net = c->net;
	x->start_ns = wall_ns();
	x->interval_ns = (c->interval_ms > 0 ? c->interval_ms : EXPORT_DEFAULT_INTERVAL_MS) * 1000000;
	x->next_push = mono_ns() + x->interval_ns;
	x->caps.max_series = (size_t)(c->max_series > 0 ? c->max_series : EXPORT_DEFAULT_MAX_SERIES);
	if (gethostname(x->host, sizeof(x->host) - 1))
		x->host[0] = '\0';
	for (int i = 0; i < c->nspecs; i++) {
		struct export_spec s;
		int rc = export_spec_parse(c->specs[i], &s, err, elen);
		bool twice = !rc && (s.kind == EXPORT_OTLP ? x->op != NULL : x->ps != NULL);
		if (twice) {
			snprintf(err, elen, "--export %s given twice",
				 s.kind == EXPORT_OTLP ? "otlp" : "prometheus");
			rc = -1;
		}
		if (!rc && !x->net) {
			snprintf(err, elen, "--export without the exporter's module (%s)",
				 EXPORT_NET_MODULE);
			rc = -1;
		}
		if (!rc)
			rc = start_one(x, &s, c->info, err, elen);
		if (rc) {
			exporter_close(x, NULL);
			return -1;
		}
	}
	*out = x;
	return 0;
}

int exporter_fd(const struct exporter *x)
{
	return x->ps ? x->net->prom_fd(x->ps) : -1;
}

int64_t exporter_wait_ns(const struct exporter *x)
{
	if (!x->op)
		return -1;
	int64_t w = x->next_push - mono_ns();
	return w > 0 ? w : 0;
}

bool exporter_due(struct exporter *x, bool final)
{
	int64_t now = mono_ns();
	x->prom_upto = x->ps ? x->net->prom_wanted(x->ps) : 0;
	x->want_prom = x->ps && (final || x->prom_upto);
	if (x->want_prom && !final && x->last_prom && now - x->last_prom < SCRAPE_GAP_NS) {
		x->net->prom_publish(x->ps, NULL, 0, x->prom_upto); /* the last text */
		x->want_prom = false;
	}
	if (x->want_prom)
		x->last_prom = now;
	x->want_otlp = x->op && (final || now >= x->next_push);
	if (x->want_otlp)
		x->next_push = now + x->interval_ns;
	if (!x->want_prom && !x->want_otlp)
		return false;
	ms_free(&x->set);
	x->set.start_ns = x->start_ns;
	x->set.time_ns = wall_ns();
	return true;
}

int exporter_add(struct exporter *x, const struct host_map *hm, const struct out_entries *e)
{
	int rc = ms_add_map(&x->set, &x->caps, hm, e);
	if (rc == 1 && !x->clash_said) {
		x->clash_said = true;
		fprintf(stderr, "gpux: WARNING: map @%s is not exported: another map exports as "
			"gpux_%s\n", hm->name, *hm->name ? hm->name : "map");
	}
	return rc < 0 ? -1 : 0;
}

int exporter_publish(struct exporter *x)
{
	int rc = 0;
	size_t len = 0;
	if (x->want_prom) {
		char *text = prom_text(&x->set, &len);
		rc |= text ? 0 : -1;
		/* answered even without text: the scrapes get the last one */
		x->net->prom_publish(x->ps, text, len, x->prom_upto);
	}
	if (x->want_otlp) {
		char *body = otlp_json(&x->set, x->host, &len);
		if (body)
			x->net->otlp_post(x->op, body, len);
		else
			rc = -1;
	}
	x->want_prom = x->want_otlp = false;
	ms_free(&x->set);
	return rc;
}

void exporter_close(struct exporter *x, FILE *err)
{
	if (!x)
		return;
	if (x->ps)
		x->net->prom_stop(x->ps);
	if (x->op)
		x->net->otlp_stop(x->op, err);
	ms_free(&x->set);
	ms_caps_free(&x->caps);
	free(x);
}
