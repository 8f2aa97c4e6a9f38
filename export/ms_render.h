/* A metric set (metric_set.h) as text for others to read: Prometheus's
 * text exposition format 0.0.4 (prom_text.c) and OTLP's JSON encoding of
 * an ExportMetricsServiceRequest (otlp_json.c). Both malloc the text
 * (*len bytes, NUL-terminated) and return NULL if memory ran out. */
#ifndef GPUX_MS_RENDER_H
#define GPUX_MS_RENDER_H

#include <stddef.h>

#include "metric_set.h"

#define MS_DROPPED_NAME "gpux_export_dropped_series"
#define MS_DROPPED_HELP "Keys of the map beyond the export's cap (--export-max-series): " \
	"folded into its __overflow__ series, or left out where its values are not aggregations"

/* Every family, then MS_DROPPED_NAME, a gauge per map. */
char *prom_text(const struct metric_set *s, size_t *len);
/* One resource (service.name gpux, host.name host), one scope; sums and
 * histograms cumulative from s->start_ns. */
char *otlp_json(const struct metric_set *s, const char *host, size_t *len);

#endif
