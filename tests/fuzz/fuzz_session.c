/* libFuzzer target: the controller's readers of the session segment
 * (cli/dev_session.h, sess_host.h, dev_print.h) over segments a traced
 * program could have written. One real segment is laid out for a fixed
 * program of gdev: and cuda: probes, a runtime's claims are played on it
 * (a slot, a host region, names, a message), and each input patches it
 * before every reader runs: event rings, host rings, messages, every map
 * merged and printed (text or json, by the input's length), the end-of-run reports and the
 * layout check. It must never crash, hang or leak.
 *
 * An input is a list of patches: u8 area, u32 offset (taken modulo the
 * area's size), u8 length, then that many bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev_print.h"
#include "frontend.h"
#include "llvm_host.h"
#include "sess_host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char program[] =
	"cuda:launch { @k[kernel] = count(); @s = stats(1); @str = kernel;"
	" @m = max(2); printf(\"%s %d\\n\", kernel, 1); @h2 = hist(3); }\n"
	"gdev:kernel_exit { @h = hist(nsecs); @n[kernel] = count(); @a = avg(warp);"
	" @l = lhist(warp, 0, 32, 4); @x = sm; @st = stats(sm);"
	" printf(\"%s %d %d\\n\", kernel, warp, lane); }\n";

struct fixture {
	struct program *prog;
	struct diags diags;
	struct host_obj obj;
	struct rec_state rs;
	struct dev_session ds;
	struct sess_host sh;
	unsigned char *pristine;
	FILE *sink;
	bool ok;
};

static struct fixture fx;

static int no_print(void *ctx, int map, uint64_t top, uint64_t div)
{
	struct fixture *f = ctx;
	struct out_entries e;
	if (map < 0 || map >= f->obj.nmaps || sess_host_entries(&f->sh, map, &e))
		return -1;
	out_map_entries(f->sink, false, &f->obj.maps[map], &e, top, div);
	free(e.kv);
	return 0;
}

static void no_reset(void *ctx, int map)
{
	struct fixture *f = ctx;
	sess_host_reset(&f->sh, map, false);
}

/* What a runtime does first: a slot, a host region, three names and a
 * message. */
static void play_runtime(struct gpux_sess_hdr *h)
{
	h->slots_used = 1;
	struct gpux_sess_slot *s = dev_session_slot(&fx.ds, 0);
	s->pid = 4242;
	s->state = GPUX_SLOT_LIVE;
	static const char *const names[] = { "vec_add", "_Z6reducePfi", "triton_poi_0" };
	struct gpux_sess_name *n = (struct gpux_sess_name *)((char *)h + fx.ds.names_off);
	for (int i = 0; i < 3; i++) {
		snprintf(n[i].name, sizeof(n[i].name), "%s", names[i]);
		n[i].pid = 4242;
		n[i].ready = 1;
	}
	h->names_used = 3;
	struct gpux_sess_msg *m = (struct gpux_sess_msg *)((char *)h + fx.ds.msgs_off);
	snprintf(m->text, sizeof(m->text), "module 1 of pid 4242: 3 kernels patched");
	m->pid = 4242;
	m->ready = 1;
	h->msgs_used = 1;
	if (fx.sh.nhosts) {
		h->hosts_used = 1;
		struct gpux_sess_host *r = sess_host_region(&fx.sh, 0);
		r->pid = 4242;
		r->state = GPUX_SLOT_LIVE;
		r->dumps = 1;
		memset((char *)r + SESS_HOST_RING_OFF + GPUX_SESS_HRING_SIZE, 0xff, 4);
	}
}

static int setup(void)
{
	fx.sink = fopen("/dev/null", "w");
	fx.prog = program_new("fuzz", program, sizeof(program) - 1);
	if (!fx.sink || !fx.prog)
		return -1;
	diags_init(&fx.diags, &fx.prog->arena);
	struct host_opts opts = { .optimize = true, .cmd = "app" };
	if (frontend_check(fx.prog, &fx.diags, FE_STOP_SEMA) ||
	    host_compile(fx.prog, &opts, &fx.obj, &fx.diags))
		return -1;
	fx.rs = (struct rec_state){ .out = fx.sink, .obj = &fx.obj,
				    .maps = { no_print, no_reset, no_reset, &fx } };
	bool *remote = calloc((size_t)fx.obj.nmaps + 1, sizeof(*remote));
	if (!remote)
		return -1;
	for (int i = 0; i < fx.obj.nmaps; i++)
		remote[i] = true;
	int rc = sess_host_init(&fx.sh, fx.prog, &fx.obj, &fx.rs, remote, &fx.diags);
	free(remote);
	int fd = dev_session_fd();
	if (rc || fd < 0 ||
	    dev_session_open(&fx.ds, fx.prog, fx.sink, false, &fx.sh, fd, &fx.diags) ||
	    sess_host_open(&fx.sh, &fx.ds, &fx.diags))
		return -1;
	fx.sh.ds = &fx.ds;
	dev_output_init(&fx.ds);
	play_runtime(fx.ds.h);
	fx.pristine = malloc(fx.ds.size);
	if (!fx.pristine)
		return -1;
	memcpy(fx.pristine, fx.ds.h, fx.ds.size);
	return 0;
}

/* Area k of the segment: [*off, *off + *len). */
static void area(uint8_t k, uint64_t *off, uint64_t *len)
{
	const struct dev_session *ds = &fx.ds;
	uint64_t host = fx.sh.nhosts ? fx.sh.hosts_off : ds->msgs_off;
	uint64_t host_len = fx.sh.nhosts ? fx.sh.host_size : 64;
	switch (k % 10) {
	case 0: *off = 0, *len = sizeof(struct gpux_sess_hdr); break;
	case 1: *off = ds->slots_off, *len = GPUX_SESS_SLOT_RING_OFF; break;
	case 2: *off = ds->slots_off + ds->ring_off, *len = 4096; break;
	case 3: *off = ds->slots_off + ds->ring_off + ds->ring_size,
		*len = ds->slot_size - ds->ring_off - ds->ring_size; break;
	case 4: *off = ds->names_off, *len = 8 * sizeof(struct gpux_sess_name); break;
	case 5: *off = ds->msgs_off, *len = 4 * sizeof(struct gpux_sess_msg); break;
	case 6: *off = host, *len = SESS_HOST_RING_OFF; break;
	case 7: *off = host + SESS_HOST_RING_OFF, *len = 4096; break;
	case 8: *off = host + SESS_HOST_RING_OFF + GPUX_SESS_HRING_SIZE,
		*len = host_len - SESS_HOST_RING_OFF - GPUX_SESS_HRING_SIZE; break;
	default: *off = 0, *len = ds->size; break;
	}
	if (*off >= ds->size)
		*off = 0;
	if (*len > ds->size - *off)
		*len = ds->size - *off;
}

static void read_all(bool json)
{
	struct dev_session *ds = &fx.ds;
	char text[DEV_MSG_SIZE];
	struct dev_msgs msgs = { 0 };
	while (dev_msgs_next(&msgs, ds->h, ds->msgs_off, &ds->trust, text))
		fputs(text, fx.sink);
	dev_msgs_free(&msgs);
	dev_msgs_lost(ds->h, &ds->trust);
	dev_ring_drain(ds);
	sess_host_drain(&fx.sh);
	for (int i = 0; i < ds->mod.nmaps; i++) {
		struct out_entries e;
		if (dev_map_entries(ds, i, &e) == 0)
			out_map_entries(fx.sink, json, &ds->hmaps[i], &e, 0, 1);
		free(e.kv);
	}
	for (int i = 0; i < fx.obj.nmaps; i++) {
		struct out_entries e;
		if (sess_host_entries(&fx.sh, i, &e) == 0)
			out_map_entries(fx.sink, json, &fx.obj.maps[i], &e, 0, 1);
		free(e.kv);
	}
	dev_report_drops(ds, fx.sink);
	sess_host_report(&fx.sh, fx.sink, true);
	dev_session_check(ds);
}

/* Puts back [off, off + len) as the runtime left it. */
static void restore(uint64_t off, uint64_t len)
{
	memcpy((unsigned char *)fx.ds.h + off, fx.pristine + off, len);
}

/* After an input: what it patched, and what the readers write (the
 * header, ring tails in the slots' and regions' headers); the segment
 * is 80 MB, too much to copy for every input. */
static void restore_all(const uint64_t (*patched)[2], size_t n)
{
	for (size_t i = 0; i < n; i++)
		restore(patched[i][0], patched[i][1]);
	restore(0, sizeof(struct gpux_sess_hdr));
	for (uint32_t i = 0; i < fx.ds.nslots; i++)
		restore(fx.ds.slots_off + (uint64_t)i * fx.ds.slot_size, GPUX_SESS_SLOT_RING_OFF);
	for (uint32_t i = 0; i < fx.sh.nhosts; i++)
		restore(fx.sh.hosts_off + (uint64_t)i * fx.sh.host_size, SESS_HOST_RING_OFF);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t patched[(1 << 16) / 6 + 1][2];
	size_t np = 0;
	if (!fx.ok) {
		if (setup()) {
			fputs("fuzz_session: cannot lay out the segment\n", stderr);
			diags_print(&fx.diags, &fx.prog->src, stderr);
			abort();
		}
		fx.ok = true;
	}
	if (size > sizeof(patched) / sizeof(patched[0]) * 6)
		return 0;
	unsigned char *seg = (unsigned char *)fx.ds.h;
	memset(fx.sh.tail, 0, sizeof(fx.sh.tail));
	memset(fx.ds.tail, 0, sizeof(fx.ds.tail));
	fx.ds.trust.corrupt = false;
	map_base_free(&fx.sh.bases);
	size_t i = 0;
	while (i + 6 <= size) {
		uint32_t at;
		memcpy(&at, data + i + 1, 4);
		uint64_t off, len;
		area(data[i], &off, &len);
		size_t n = data[i + 5];
		i += 6;
		if (n > size - i)
			n = size - i;
		if (len) {
			uint64_t o = off + at % len;
			size_t fit = o + n <= off + len ? n : (size_t)(off + len - o);
			memcpy(seg + o, data + i, fit);
			patched[np][0] = o;
			patched[np++][1] = fit;
		}
		i += n;
	}
	fx.rs.exited = false;
	read_all(size & 1); /* maps printed as text or json */
	restore_all(patched, np);
	return 0;
}
