/* Ring buffer records (records.h). */
#include "records.h"

#include <errno.h>
#include <string.h>

#include "diag.h"
#include "output.h"

/* -k: a helper that failed, said as bpftrace says it, at the call, in
 * the output (where bpftrace 0.17 prints it, among the records). */
static void helper_failed(const struct rec_state *s, const struct host_site *site, int64_t ret)
{
	if (s->json) { /* bpftrace's record of it */
		fprintf(s->out, "{\"type\": \"helper_error\", \"helper\": \"%s\", \"retcode\": %lld, "
			"\"line\": %d, \"col\": %d}\n", site->helper, (long long)ret,
			site->span.first_line, site->span.first_column);
		return;
	}
	struct arena a;
	struct diags d;
	arena_init(&a);
	diags_init(&d, &a);
	if (ret == 0) /* a lookup that found nothing */
		diag_warning(&d, site->span, "Failed to %s: 0", site->helper);
	else
		diag_warning(&d, site->span, "Failed to %s: %s (%lld)", site->helper,
			     ret < 0 && ret > -4096 ? strerror((int)-ret) : "unknown error",
			     (long long)ret);
	diags_print(&d, s->src, s->out);
	arena_free(&a);
}

int rec_handle(void *arg, const void *data, size_t len)
{
	struct rec_state *s = arg;
	const unsigned char *d = data;
	struct host_rec_hdr h;
	if (len < sizeof(h))
		return 0;
	memcpy(&h, d, sizeof(h));
	if (h.kind == HOST_REC_WATCH && len >= 16) {
		/* even after exit(): its process waits for it */
		uint64_t addr;
		memcpy(&addr, d + 8, 8);
		if (s->watch.set)
			s->watch.set(s->watch.ctx, (int)h.id, addr, s->exited);
		return 0;
	}
	if (s->exited)
		return 0; /* after exit(), nothing more is acted on */
	const struct host_obj *o = s->obj;
	bool map_ok = h.id < (unsigned)o->nmaps, fmt_ok = h.id < (unsigned)o->nfmts;
	uint64_t a1 = 0, a2 = 0;
	if (len >= 24) {
		memcpy(&a1, d + 8, 8);
		memcpy(&a2, d + 16, 8);
	}
	switch (h.kind) {
	case HOST_REC_PRINTF:
		if (!fmt_ok || len != o->fmts[h.id].size)
			break;
		if (o->fmts[h.id].kind == HOST_FMT_CAT)
			out_cat(s->out, s->json, &o->fmts[h.id], d, len);
		else if (o->fmts[h.id].kind == HOST_FMT_SYSTEM)
			out_system(s->out, s->json, &o->fmts[h.id], d, len);
		else
			out_printf(s->out, s->json, &o->fmts[h.id], d, len);
		if (s->tap.printf && o->fmts[h.id].kind == HOST_FMT_PRINTF)
			s->tap.printf(s->tap.ctx, &o->fmts[h.id], d, len);
		break;
	case HOST_REC_EXIT:
		if (len >= 16)
			memcpy(&a1, d + 8, 8);
		s->exited = true;
		s->status = (int)(int64_t)a1;
		break;
	case HOST_REC_PRINT:
		if (map_ok && s->maps.print(s->maps.ctx, (int)h.id, a1, a2))
			s->failed = 1;
		break;
	case HOST_REC_CLEAR:
		if (map_ok)
			s->maps.clear(s->maps.ctx, (int)h.id);
		break;
	case HOST_REC_ZERO:
		if (map_ok)
			s->maps.zero(s->maps.ctx, (int)h.id);
		break;
	case HOST_REC_JOIN:
		if (fmt_ok && len >= HOST_JOIN_BYTES)
			out_join(s->out, s->json, o->fmts[h.id].fmt, d, len);
		break;
	case HOST_REC_TIME:
		if (fmt_ok)
			out_time(s->out, s->json, o->fmts[h.id].fmt);
		break;
	case HOST_REC_CEV:
		if (s->tap.cev)
			s->tap.cev(s->tap.ctx, h.id, d + sizeof(h), len - sizeof(h));
		break;
	case HOST_REC_HELPER_ERR:
		if (h.id < (unsigned)o->nsites && len >= 16 && s->src) {
			memcpy(&a1, d + 8, 8);
			helper_failed(s, &o->sites[h.id], (int64_t)a1);
		}
		break;
	case HOST_REC_UNWATCH:
		if (len >= 16 && s->watch.unset) {
			memcpy(&a1, d + 8, 8);
			s->watch.unset(s->watch.ctx, a1);
		}
		break;
	}
	return 0;
}
