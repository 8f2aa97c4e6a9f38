/* Making the session segment (dev_session.h): device code, probe table,
 * map table, the memfd. */
#include "dev_session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "compile.h"
#include "ptx_library.h"
#include "probe_site.h"
#include "progress.h"
#include "sess_host.h"

/* The site kind of an event: its index in abi/probe_site.h's names. */
static const char *const site_names[] = PTX_SITE_NAMES;

static int site_of(const char *event)
{
	for (size_t i = 0; i < sizeof(site_names) / sizeof(site_names[0]); i++)
		if (!strcmp(site_names[i], event))
			return (int)i;
	return -1;
}

/* The attach node of a probe, for a located message. */
static struct span attach_span(const struct dev_probe *p, int i)
{
	const struct node *a = p->node->u.probe.attach;
	for (; a && i > 0; i--)
		a = a->next;
	return a ? a->span : p->node->span;
}

/* One entry per (probe, attach point, event). NULL with diagnostics if
 * a name does not fit the table or an event has no runtime site. */
static struct gpux_sess_probe *probe_table(struct dev_session *ds, uint32_t *n,
					   struct diags *diags)
{
	ds->nattach = 0;
	const struct dev_module *mod = &ds->mod;
	uint32_t cap = 0, k = 0;
	for (int i = 0; i < mod->nprobes; i++)
		for (int j = 0; j < mod->probes[i].nattach; j++)
			cap += (uint32_t)mod->probes[i].attach[j].nevents;
	struct gpux_sess_probe *t = arena_zalloc(&ds->prog->arena, sizeof(*t) * (cap + 1));
	int bad = 0;
	for (int i = 0; i < mod->nprobes; i++) {
		const struct dev_probe *p = &mod->probes[i];
		if (strlen(p->func_name) >= sizeof(t->func)) {
			diag_error_nospan(diags, "probe function name %s is too long", p->func_name);
			return NULL;
		}
		for (int j = 0; j < p->nattach; j++) {
			const struct dev_attach *a = &p->attach[j];
			const char *glob = a->filter ? a->filter : "";
			if (strlen(glob) >= sizeof(t->glob)) {
				diag_error(diags, attach_span(p, j),
					   "the filter '%s' is too long for the runtime: %zu bytes, at most %zu",
					   glob, strlen(glob), sizeof(t->glob) - 1);
				bad = 1;
				continue;
			}
			for (int e = 0; e < a->nevents; e++) {
				int site = site_of(a->events[e]);
				if (site < 0) {
					diag_error(diags, attach_span(p, j),
						   "gdev:%s cannot be attached by this build",
						   a->events[e]);
					bad = 1;
					continue;
				}
				ds->nattach++;
				/* a probe that can change nothing is not spliced
				 * in at all: it costs nothing */
				if (!dev_prog_has_effects(&p->prog))
					continue;
				t[k].site = (uint32_t)site;
				t[k].only = site == PTX_SITE_ACCESS ? p->access_only : 0;
				if (site == PTX_SITE_ACCESS && p->counted.ninsns)
					t[k].only |= GPUX_SITE_COUNT;
				if (site == PTX_SITE_KERNEL_EXIT && p->anytime)
					t[k].only |= GPUX_SITE_ANYTIME;
				strcpy(t[k].glob, glob);
				strcpy(t[k].func, p->func_name);
				k++;
			}
		}
	}
	*n = k;
	return bad ? NULL : t;
}


/* Shards (GPUX_MAP_SHARD_SHIFT): up to 32 whole tables, one per group of
 * SMs, for maps the device only aggregates into, so one hot key is not
 * one hot line; within 4 MiB a map, which every snapshot copies. An
 * array keyed by kernel id has 80 MiB: a snapshot copies only the rows
 * of the ids in use, and without shards every warp of a kernel would
 * add into one line. */
static uint32_t shards_for(const struct dev_map *dm, bool read)
{
	if (read || dm->agg == AGG_NONE)
		return 1;
	uint64_t one = GPUX_SHARD_BYTES(dm->max_entries, dm->key_size, dm->value_size);
	uint64_t budget = dm->kernel_rows ? (80u << 20) : (4u << 20);
	uint32_t s = 32;
	while (s > 1 && one * s > budget)
		s >>= 1;
	return s;
}

static int make_segment(struct dev_session *ds, const struct gpux_sess_spec *spec,
			struct diags *diags)
{
	/* the layout is planned here and never read back (dev_session.h) */
	struct gpux_sess_hdr plan;
	gpux_sess_plan(spec, &plan);
	ds->size = plan.size;
	ds->maps = arena_zalloc(&ds->prog->arena, sizeof(*ds->maps) * (spec->nmaps + 1));
	gpux_sess_plan_maps(spec, ds->maps);
	if (ftruncate(ds->fd, (off_t)(ds->off + ds->size))) {
		diag_error_nospan(diags, "cannot create the session segment: %s", strerror(errno));
		return -1;
	}
	void *seg = mmap(NULL, ds->size, PROT_READ | PROT_WRITE, MAP_SHARED, ds->fd,
			 (off_t)ds->off);
	if (seg == MAP_FAILED) {
		diag_error_nospan(diags, "cannot map the session segment: %s", strerror(errno));
		return -1;
	}
	ds->h = seg;
	gpux_sess_init(seg, spec);
	ds->slots_off = plan.slots_off;
	ds->slot_size = plan.slot_size;
	ds->names_off = plan.names_off;
	ds->msgs_off = plan.msgs_off;
	ds->nslots = plan.nslots < GPUX_SESS_MAX_SLOTS ? plan.nslots : GPUX_SESS_MAX_SLOTS;
	ds->ring_size = plan.ring_size;
	ds->ring_off = GPUX_SESS_SLOT_RING_OFF;
	ds->nmaps = plan.nmaps;
	ds->nprobes = plan.nprobes;
	sess_trust_init(&ds->trust, ds->h, &plan);
	return 0;
}

/* The probe module in one link form, malloc'd into *text. */
static int module_text(struct dev_session *ds, const char *lib, size_t lib_len,
		       enum ptx_link link, char **text, size_t *len, struct diags *diags)
{
	FILE *m = open_memstream(text, len);
	if (!m) {
		diag_error_nospan(diags, "out of memory");
		return -1;
	}
	int rc = dev_write_ptx(m, &ds->mod, "sm_80", lib, lib_len, link, diags);
	if (fclose(m))
		rc = -1;
	return rc;
}

int dev_session_fd(void)
{
	/* Not close-on-exec: the traced program inherits it. Sealed so that
	 * the program cannot cut the file short under gpux's mapping (a
	 * SIGBUS in gpux) nor change the seals; it may only grow, as a live
	 * session's generations do. */
	int fd = memfd_create("gpux-session", MFD_ALLOW_SEALING);
	if (fd >= 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL)) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int dev_session_claim(struct gpux_sess_hdr *h)
{
	uint64_t t[2];
	size_t got = 0;
	while (got < sizeof(t)) {
		ssize_t n = getrandom((char *)t + got, sizeof(t) - got, 0);
		if (n < 0 && errno != EINTR)
			return -1;
		got += n > 0 ? (size_t)n : 0;
	}
	h->token[0] = t[0];
	h->token[1] = t[1];
	/* the runtimes turn their probes off once this process is gone */
	h->ctl_pid = (uint32_t)getpid();
	return 0;
}

int dev_session_open(struct dev_session *ds, struct program *prog, FILE *out,
		     bool json, struct sess_host *sh, int fd, struct diags *diags)
{
	/* a run's compile (the run stops it before attaching); not the
	 * REPL's, which has no end of compiling to stop it at */
	progress_set("compiling device probes");
	return dev_session_open_at(ds, prog, out, json, sh, fd, 0, diags);
}

int dev_session_open_at(struct dev_session *ds, struct program *prog, FILE *out, bool json,
			struct sess_host *sh, int fd, uint64_t off, struct diags *diags)
{
	memset(ds, 0, sizeof(*ds));
	ds->prog = prog;
	ds->fd = fd;
	ds->off = off;
	ds->out = out;
	ds->json = json;
	if (dev_compile(prog, &ds->mod, diags))
		return -1;
	size_t lib_len = 0;
	const char *lib = ptx_helper_library(&lib_len);
	char *ptx = NULL, *link_ptx = NULL;
	size_t ptx_len = 0, link_len = 0;
	int rc = module_text(ds, lib, lib_len, PTX_LINK_SAME_MODULE, &ptx, &ptx_len, diags);
	/* the form the runtime links with the library's cubin; none without
	 * a library (then there is no cubin either) */
	if (rc == 0 && lib)
		rc = module_text(ds, lib, lib_len, PTX_LINK_LIBRARY_CUBIN, &link_ptx, &link_len,
				 diags);
	struct gpux_sess_spec spec = { .ptx = ptx, .ptx_len = ptx_len,
				       .link_ptx = link_ptx, .link_ptx_len = link_len };
	struct gpux_sess_probe *probes = rc ? NULL : probe_table(ds, &spec.nprobes, diags);
	if (!probes)
		rc = -1;
	spec.probes = probes;
	spec.nmaps = (uint32_t)ds->mod.nmaps;
	struct gpux_sess_map *maps = arena_zalloc(&prog->arena, sizeof(*maps) * (spec.nmaps + 1));
	if (sh && sh->obj && compile_check_shared(&ds->mod, sh->obj, diags))
		rc = -1;
	for (uint32_t i = 0; i < spec.nmaps; i++) {
		const struct dev_map *dm = &ds->mod.maps[i];
		maps[i] = (struct gpux_sess_map){ dm->key_size, dm->value_size, dm->max_entries,
						  (uint32_t)dm->agg, dm->lhist_min, dm->lhist_step,
						  0, 0, shards_for(dm, ds->mod.map_meta[i].read_on_device),
						  dm->array ? GPUX_MAP_ARRAY : GPUX_MAP_HASH,
						  dm->kernel_rows ? GPUX_SESS_ROWS_KERNELS
								  : GPUX_SESS_ROWS_ALL, 0 };
	}
	spec.maps = maps;
	if (rc == 0 && sh)
		sess_host_spec(sh, ds, &spec);
	if (rc == 0)
		rc = make_segment(ds, &spec, diags);
	free(ptx);
	free(link_ptx);
	if (rc)
		dev_session_close(ds);
	return rc;
}

void dev_session_close(struct dev_session *ds)
{
	if (ds->h)
		munmap(ds->h, ds->size);
	if (ds->fd >= 0)
		close(ds->fd);
	free(ds->lane);
	ds->h = NULL;
	ds->fd = -1;
	ds->lane = NULL;
}

struct gpux_sess_slot *dev_session_slot(const struct dev_session *ds, uint32_t i)
{
	return (struct gpux_sess_slot *)((char *)ds->h + ds->slots_off + (uint64_t)i * ds->slot_size);
}

uint32_t dev_session_slots(const struct dev_session *ds)
{
	uint32_t n = __atomic_load_n(&ds->h->slots_used, __ATOMIC_ACQUIRE);
	return n < ds->nslots ? n : ds->nslots;
}

bool dev_session_used(struct dev_session *ds, uint32_t i)
{
	uint32_t state = __atomic_load_n(&dev_session_slot(ds, i)->state, __ATOMIC_ACQUIRE);
	if (state > GPUX_SLOT_DONE) {
		sess_corrupt(&ds->trust, "a slot's state");
		return false;
	}
	return state != GPUX_SLOT_FREE;
}

void dev_session_kernel(struct dev_session *ds, uint64_t id, char *buf, size_t len)
{
	if (id < GPUX_SESS_MAX_NAMES) {
		struct gpux_sess_name *n =
			(ds->names ? ds->names
				   : (struct gpux_sess_name *)((char *)ds->h + ds->names_off)) + id;
		uint32_t ready = __atomic_load_n(&n->ready, __ATOMIC_ACQUIRE);
		if (ready > 1)
			sess_corrupt(&ds->trust, "the kernel names table");
		else if (ready) {
			/* the writer may not have NUL-terminated it, nor kept to
			 * the characters of a symbol */
			if (sess_text(buf, len, n->name, sizeof(n->name)))
				sess_corrupt(&ds->trust, "a kernel name");
			return;
		}
	}
	snprintf(buf, len, "kernel#%llu", (unsigned long long)id);
}

bool dev_session_check(struct dev_session *ds)
{
	return sess_trust_check(&ds->trust) && !ds->trust.corrupt;
}

bool dev_msgs_next(struct dev_msgs *m, const struct gpux_sess_hdr *h, uint64_t msgs_off,
		   struct sess_trust *t, char text[DEV_MSG_SIZE])
{
	uint32_t used = __atomic_load_n(&h->msgs_used, __ATOMIC_ACQUIRE);
	used = used < GPUX_SESS_MAX_MSGS ? used : GPUX_SESS_MAX_MSGS;
	const struct gpux_sess_msg *v = (const struct gpux_sess_msg *)((const char *)h + msgs_off);
	for (; m->next < used; m->next++) {
		const struct gpux_sess_msg *e = &v[m->next];
		uint32_t ready = __atomic_load_n(&e->ready, __ATOMIC_ACQUIRE);
		if (!ready)
			return false; /* being written: next time */
		if (ready > 1) {
			sess_corrupt(t, "the runtime's messages");
			continue;
		}
		if (sess_text(text, DEV_MSG_SIZE, e->text, sizeof(e->text)))
			sess_corrupt(t, "a message of the runtime");
		bool dup = false;
		for (int i = 0; i < m->nsaid && !dup; i++)
			dup = !strcmp(m->said[i], text);
		if (dup)
			continue;
		char *copy = m->nsaid < GPUX_SESS_MAX_MSGS ? strdup(text) : NULL;
		if (copy) /* without memory to remember it, it may be said again */
			m->said[m->nsaid++] = copy;
		m->next++;
		return true;
	}
	return false;
}

uint32_t dev_msgs_lost(const struct gpux_sess_hdr *h, struct sess_trust *t)
{
	uint32_t used = __atomic_load_n(&h->msgs_used, __ATOMIC_ACQUIRE);
	uint32_t lost = __atomic_load_n(&h->msgs_lost, __ATOMIC_RELAXED);
	uint32_t could = used > GPUX_SESS_MAX_MSGS ? used - GPUX_SESS_MAX_MSGS : 0;
	if (lost > could) {
		sess_corrupt(t, "the count of lost messages");
		return 0;
	}
	return lost;
}

void dev_msgs_free(struct dev_msgs *m)
{
	for (int i = 0; i < m->nsaid; i++)
		free(m->said[i]);
	m->nsaid = 0;
}

void dev_session_snap_ask(const struct dev_session *ds, uint64_t *before, uint32_t *n)
{
	*n = dev_session_slots(ds);
	for (uint32_t i = 0; i < *n; i++)
		before[i] = __atomic_load_n(&dev_session_slot(ds, i)->snapshots, __ATOMIC_ACQUIRE);
	__atomic_fetch_add(&ds->h->snap_req, 1, __ATOMIC_RELEASE);
}

bool dev_session_snapped(const struct dev_session *ds, const uint64_t *before, uint32_t n)
{
	bool all = true;
	for (uint32_t i = 0; i < n; i++) {
		struct gpux_sess_slot *s = dev_session_slot(ds, i);
		/* any state but LIVE: nothing to wait for */
		all &= __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != GPUX_SLOT_LIVE ||
		       __atomic_load_n(&s->snapshots, __ATOMIC_ACQUIRE) != before[i];
	}
	return all;
}
