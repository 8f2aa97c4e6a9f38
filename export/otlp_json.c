/* OTLP/HTTP's JSON encoding of an ExportMetricsServiceRequest
 * (ms_render.h): 64-bit integers as decimal strings, enums as numbers,
 * as the protobuf JSON mapping OTLP uses says. count() and sum() are
 * monotonic cumulative sums, hist() and lhist() cumulative histograms
 * (bounds inclusive, as Prometheus's le; no sum: the maps keep none),
 * stats() summaries, the rest gauges. */
#include "ms_render.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

enum { CUMULATIVE = 2 }; /* AggregationTemporality */

static void put_str(FILE *o, const char *s)
{
	fputc('"', o);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(o, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", o);
		else if ((unsigned char)*s < 0x20)
			fprintf(o, "\\u%04x", (unsigned)(unsigned char)*s);
		else
			fputc(*s, o);
	}
	fputc('"', o);
}

static void put_attr(FILE *o, bool first, const char *key, const char *val)
{
	fputs(first ? "{\"key\":" : ",{\"key\":", o);
	put_str(o, key);
	fputs(",\"value\":{\"stringValue\":", o);
	put_str(o, val);
	fputs("}}", o);
}

/* A data point's attributes and times, up to its value. */
static void put_point_head(FILE *o, const struct metric_set *s, const struct ms_family *f,
			   const struct ms_series *x)
{
	fputs("{\"attributes\":[", o);
	for (int j = 0; j < f->nkeys; j++) {
		char name[16];
		snprintf(name, sizeof(name), f->nkeys == 1 ? "key" : "key%d", j);
		put_attr(o, j == 0, name, x->labels[j]);
	}
	if (f->kind == MS_INFO)
		put_attr(o, f->nkeys == 0, "value", x->text ? x->text : "");
	fprintf(o, "],\"startTimeUnixNano\":\"%" PRIu64 "\",\"timeUnixNano\":\"%" PRIu64 "\"",
		s->start_ns, s->time_ns);
}

/* asInt is an int64: counts past its range are held at its top. */
static void put_int(FILE *o, const struct ms_family *f, int64_t v)
{
	if (f->is_unsigned && v < 0)
		v = INT64_MAX;
	fprintf(o, ",\"asInt\":\"%" PRId64 "\"}", v);
}

static void put_histogram_point(FILE *o, const struct ms_family *f, const struct ms_series *x)
{
	fprintf(o, ",\"count\":\"%" PRIu64 "\",\"bucketCounts\":[", x->count);
	for (int i = 0; i < f->nb; i++)
		fprintf(o, "%s\"%" PRIu64 "\"", i ? "," : "", x->bk[i]);
	fputs("],\"explicitBounds\":[", o);
	for (int i = 0; i < f->nb - 1; i++)
		fprintf(o, "%s%" PRId64, i ? "," : "", f->le[i]);
	fputs("]}", o);
}

static void put_metric(FILE *o, const struct metric_set *s, const struct ms_family *f)
{
	fputs("{\"name\":", o);
	put_str(o, f->name);
	fputs(",\"description\":", o);
	put_str(o, f->help);
	switch (f->kind) {
	case MS_COUNTER:
		fprintf(o, ",\"sum\":{\"aggregationTemporality\":%d,\"isMonotonic\":true,", CUMULATIVE);
		break;
	case MS_HISTOGRAM:
		fprintf(o, ",\"histogram\":{\"aggregationTemporality\":%d,", CUMULATIVE);
		break;
	case MS_SUMMARY:
		fputs(",\"summary\":{", o);
		break;
	case MS_GAUGE:
	case MS_INFO:
		fputs(",\"gauge\":{", o);
		break;
	}
	fputs("\"dataPoints\":[", o);
	for (size_t i = 0; i < f->n; i++) {
		const struct ms_series *x = &f->s[i];
		if (i)
			fputc(',', o);
		put_point_head(o, s, f, x);
		if (f->kind == MS_HISTOGRAM)
			put_histogram_point(o, f, x);
		else if (f->kind == MS_SUMMARY)
			fprintf(o, ",\"count\":\"%" PRIu64 "\",\"sum\":%" PRId64 "}", x->count, x->sum);
		else
			put_int(o, f, f->kind == MS_INFO ? 1 : x->v);
	}
	fputs("]}}", o);
}

static void put_dropped(FILE *o, const struct metric_set *s)
{
	fputs(",{\"name\":\"" MS_DROPPED_NAME "\",\"description\":\"" MS_DROPPED_HELP "\","
	      "\"gauge\":{\"dataPoints\":[", o);
	for (int i = 0; i < s->n; i++) {
		fputs(i ? ",{\"attributes\":[" : "{\"attributes\":[", o);
		put_attr(o, true, "map", s->f[i].map);
		fprintf(o, "],\"startTimeUnixNano\":\"%" PRIu64 "\",\"timeUnixNano\":\"%" PRIu64
			"\",\"asInt\":\"%zu\"}", s->start_ns, s->time_ns, s->f[i].dropped);
	}
	fputs("]}}", o);
}

char *otlp_json(const struct metric_set *s, const char *host, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *o = open_memstream(&buf, &n);
	if (!o)
		return NULL;
	fputs("{\"resourceMetrics\":[{\"resource\":{\"attributes\":[", o);
	put_attr(o, true, "service.name", "gpux");
	if (host && *host)
		put_attr(o, false, "host.name", host);
	fputs("]},\"scopeMetrics\":[{\"scope\":{\"name\":\"gpux\",\"version\":\"" GPUX_VERSION
	      "\"},\"metrics\":[", o);
	for (int i = 0; i < s->n; i++) {
		if (i)
			fputc(',', o);
		put_metric(o, s, &s->f[i]);
	}
	if (s->n)
		put_dropped(o, s);
	fputs("]}]}]}\n", o);
	if (fclose(o)) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}
