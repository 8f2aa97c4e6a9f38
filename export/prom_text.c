/* Prometheus's text exposition format, version 0.0.4 (ms_render.h):
 * a HELP and a TYPE line per family, then its samples. Histogram
 * buckets are cumulative with inclusive upper bounds (le), every bucket
 * of the map's layout in every series, so that sums over series and
 * over machines line up; hist() and lhist() know no sum, so a histogram
 * has _bucket and _count only. */
#include "ms_render.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const type_names[] = {
	[MS_COUNTER] = "counter", [MS_GAUGE] = "gauge", [MS_SUMMARY] = "summary",
	[MS_HISTOGRAM] = "histogram", [MS_INFO] = "gauge",
};

/* A label value: backslash, double quote and newline escaped. HELP text
 * escapes the same but for quotes. */
static void put_escaped(FILE *o, const char *s, bool quotes)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", o);
		else if (*s == '\n')
			fputs("\\n", o);
		else if (*s == '"' && quotes)
			fputs("\\\"", o);
		else
			fputc(*s, o);
	}
}

/* {key="a"}, {key0="a",key1="b"}, with extra (le, value) last; nothing
 * for a series without labels. */
static void put_labels(FILE *o, const struct ms_family *f, const struct ms_series *x,
		       const char *extra, const char *extra_val)
{
	if (!f->nkeys && !extra)
		return;
	fputc('{', o);
	for (int j = 0; j < f->nkeys; j++) {
		if (f->nkeys == 1)
			fputs("key=\"", o);
		else
			fprintf(o, "%skey%d=\"", j ? "," : "", j);
		put_escaped(o, x->labels[j], true);
		fputc('"', o);
	}
	if (extra) {
		fprintf(o, "%s%s=\"", f->nkeys ? "," : "", extra);
		put_escaped(o, extra_val, true);
		fputc('"', o);
	}
	fputc('}', o);
}

static void put_histogram(FILE *o, const struct ms_family *f, const struct ms_series *x)
{
	uint64_t cum = 0;
	char le[32];
	for (int i = 0; i < f->nb - 1; i++) {
		cum += x->bk[i];
		snprintf(le, sizeof(le), "%" PRId64, f->le[i]);
		fprintf(o, "%s_bucket", f->name);
		put_labels(o, f, x, "le", le);
		fprintf(o, " %" PRIu64 "\n", cum);
	}
	fprintf(o, "%s_bucket", f->name);
	put_labels(o, f, x, "le", "+Inf");
	fprintf(o, " %" PRIu64 "\n%s_count", x->count, f->name);
	put_labels(o, f, x, NULL, NULL);
	fprintf(o, " %" PRIu64 "\n", x->count);
}

static void put_family(FILE *o, const struct ms_family *f)
{
	fprintf(o, "# HELP %s ", f->name);
	put_escaped(o, f->help, false);
	fprintf(o, "\n# TYPE %s %s\n", f->name, type_names[f->kind]);
	for (size_t i = 0; i < f->n; i++) {
		const struct ms_series *x = &f->s[i];
		switch (f->kind) {
		case MS_COUNTER:
		case MS_GAUGE:
			fputs(f->name, o);
			put_labels(o, f, x, NULL, NULL);
			if (f->is_unsigned)
				fprintf(o, " %" PRIu64 "\n", (uint64_t)x->v);
			else
				fprintf(o, " %" PRId64 "\n", x->v);
			break;
		case MS_SUMMARY:
			fprintf(o, "%s_sum", f->name);
			put_labels(o, f, x, NULL, NULL);
			fprintf(o, " %" PRId64 "\n%s_count", x->sum, f->name);
			put_labels(o, f, x, NULL, NULL);
			fprintf(o, " %" PRIu64 "\n", x->count);
			break;
		case MS_HISTOGRAM:
			put_histogram(o, f, x);
			break;
		case MS_INFO:
			fputs(f->name, o);
			put_labels(o, f, x, "value", x->text ? x->text : "");
			fputs(" 1\n", o);
			break;
		}
	}
}

char *prom_text(const struct metric_set *s, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *o = open_memstream(&buf, &n);
	if (!o)
		return NULL;
	for (int i = 0; i < s->n; i++)
		put_family(o, &s->f[i]);
	if (s->n) {
		fputs("# HELP " MS_DROPPED_NAME " " MS_DROPPED_HELP "\n"
		      "# TYPE " MS_DROPPED_NAME " gauge\n", o);
		for (int i = 0; i < s->n; i++) {
			fputs(MS_DROPPED_NAME "{map=\"", o);
			put_escaped(o, s->f[i].map, true);
			fprintf(o, "\"} %zu\n", s->f[i].dropped);
		}
	}
	if (fclose(o)) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}
