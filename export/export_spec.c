/* --export SPEC (export.h). */
#include "export.h"

#include <stdlib.h>
#include <string.h>

static bool prefixed(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static int fail(char *err, size_t n, const char *why, const char *spec)
{
	snprintf(err, n, "%s in --export '%s'", why, spec);
	return -1;
}

static int parse_port(const char *s, struct export_spec *o)
{
	if (!*s || strlen(s) > 5 || strspn(s, "0123456789") != strlen(s) || atol(s) > 65535)
		return -1;
	snprintf(o->port, sizeof(o->port), "%ld", atol(s));
	return 0;
}

static int parse_prometheus(const char *rest, const char *spec, struct export_spec *o,
			    char *err, size_t n)
{
	const char *port = rest;
	size_t hl = 0;
	if (*rest == '[') { /* [IPv6]:PORT */
		const char *end = strchr(rest, ']');
		if (!end || end[1] != ':')
			return fail(err, n, "an IPv6 address is written [ADDR]:PORT", spec);
		rest++;
		hl = (size_t)(end - rest);
		port = end + 2;
	} else if (strchr(rest, ':')) {
		port = strrchr(rest, ':') + 1;
		hl = (size_t)(port - 1 - rest);
		if (memchr(rest, ':', hl))
			return fail(err, n, "an IPv6 address is written [ADDR]:PORT", spec);
	}
	if ((port != rest && !hl) || hl >= sizeof(o->host))
		return fail(err, n, "a bad address", spec);
	memcpy(o->host, rest, hl);
	o->host[hl] = '\0';
	if (parse_port(port, o))
		return fail(err, n, "the port must be a number from 0 to 65535", spec);
	return 0;
}

int export_spec_parse(const char *spec, struct export_spec *o, char *err, size_t n)
{
	*o = (struct export_spec){ 0 };
	if (prefixed(spec, "prometheus:")) {
		o->kind = EXPORT_PROMETHEUS;
		return parse_prometheus(spec + strlen("prometheus:"), spec, o, err, n);
	}
	if (prefixed(spec, "otlp:")) {
		o->kind = EXPORT_OTLP;
		o->url = spec + strlen("otlp:");
		const char *host = prefixed(o->url, "http://") ? o->url + 7
				 : prefixed(o->url, "https://") ? o->url + 8 : NULL;
		if (!host || !*host || *host == '/')
			return fail(err, n, "the URL must start with http:// or https:// and name a host",
				    spec);
		return 0;
	}
	return fail(err, n, "unknown export (prometheus:[ADDR:]PORT or otlp:URL)", spec);
}
