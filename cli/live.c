/* A live session (live.h): the program, the generations of its session
 * file, the entries they were compiled from. Generation 0 has no probes
 * and holds the kernel names and the runtime's messages for all. */
#include "live_priv.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dev_print.h"
#include "attach_runtime.h"
#include "frontend.h"
#include "sess_layout.h"
#include "traced_cmd.h"

#define MOVE_WAIT_MS 3000 /* for the program to move to a new generation */
#define TERM_WAIT_MS 2000
#define SRC_NAME "repl"

static uint64_t page_up(uint64_t v)
{
	return (v + 4095) & ~(uint64_t)4095;
}

static uint64_t gen_end(const struct live_gen *g)
{
	return page_up(g->off + g->size);
}

/* A generation without probes at off: the first, or all detached. */
static int empty_gen(struct live *lv, struct live_gen *g, uint64_t off)
{
	static const char none[] = "";
	struct gpux_sess_spec spec = { .ptx = none, .ptx_len = 0 };
	memset(g, 0, sizeof(*g));
	g->off = off;
	g->size = gpux_sess_size(&spec);
	if (ftruncate(lv->fd, (off_t)(off + g->size)))
		return -1;
	void *p = mmap(NULL, g->size, PROT_READ | PROT_WRITE, MAP_SHARED, lv->fd, (off_t)off);
	if (p == MAP_FAILED)
		return -1;
	gpux_sess_init(p, &spec);
	g->h = p;
	return 0;
}

static void gen_free(struct live_gen *g)
{
	if (g->prog) {
		dev_session_close(&g->ds);
		program_free(g->prog);
	} else if (g->h) {
		munmap(g->h, g->size);
	}
	g->h = NULL;
	g->prog = NULL;
}

static int child_env(void *arg)
{
	struct live *lv = arg;
	setpgid(0, 0); /* the terminal's Ctrl-C is the prompt's */
	return spawn_runtime_env(lv->fd, lv->rt);
}

struct live *live_start(const struct options *o, FILE *out, char *const *first, size_t n)
{
	struct live *lv = calloc(1, sizeof(*lv));
	if (!lv)
		return NULL;
	lv->out = out;
	lv->pid = -1;
	lv->verbose = o->verbose;
	lv->no_cache = o->no_cache;
	lv->fd = dev_session_fd();
	if (spawn_runtime_path(lv->rt, sizeof(lv->rt))) { /* it said why */
		live_end(lv);
		return NULL;
	}
	if (lv->fd < 0 || !(lv->g = calloc(1, sizeof(*lv->g))) || empty_gen(lv, &lv->g[0], 0)) {
		fprintf(stderr, "gpux: ERROR: cannot create the session: %s\n", strerror(errno));
		live_end(lv);
		return NULL;
	}
	lv->ng = 1;
	struct gpux_sess_hdr *h = lv->g[0].h;
	h->flags |= GPUX_SESS_LIVE | GPUX_SESS_TOP | (o->verbose ? GPUX_SESS_VERBOSE : 0) |
		    (o->no_cache ? GPUX_SESS_NO_CACHE : 0);
	if (dev_session_claim(h)) {
		fprintf(stderr, "gpux: ERROR: cannot make the session's token: %s\n", strerror(errno));
		live_end(lv);
		return NULL;
	}
	/* read before the program starts: the segment is the program's too */
	lv->names = (struct gpux_sess_name *)((char *)h + h->names_off);
	lv->msgs_off = h->msgs_off;
	sess_trust_init(&lv->trust, h, h);
	if (o->pid) { /* --repl -p: the runtime loaded into the process */
		char env[GPUX_SESS_ENV_SIZE], err[512];
		uint32_t bound = 0;
		gpux_sess_env_format(env, (uint32_t)getpid(), lv->fd, h->token);
		if (attach_runtime((pid_t)o->pid, lv->rt, env, &bound, err, sizeof(err))) {
			fprintf(stderr, "gpux: ERROR: %s\n", err);
			live_end(lv);
			return NULL;
		}
		lv->pid = (pid_t)o->pid;
		lv->attached = true;
		if (!bound)
			fprintf(stderr, "gpux: WARNING: pid %d has no binding to the CUDA driver: "
				"nothing to trace there\n", lv->pid);
		for (size_t i = 0; i < n; i++)
			live_attach(lv, first[i], strlen(first[i]));
		return lv;
	}
	struct spawn_signals sig;
	sigprocmask(SIG_SETMASK, NULL, &sig.mask);
	sigaction(SIGINT, NULL, &sig.sigint);
	sigaction(SIGTERM, NULL, &sig.sigterm);
	sigaction(SIGUSR1, NULL, &sig.sigusr1);
	sigaction(SIGCHLD, NULL, &sig.sigchld);
	int go = -1;
	lv->pid = spawn_held(o, &sig, &go, child_env, lv);
	if (lv->pid < 0) {
		live_end(lv);
		return NULL;
	}
	setpgid(lv->pid, lv->pid); /* either side may get there first */
	/* the program is held: no runtime yet, which starts at the newest
	 * generation, so these run from the first launch */
	for (size_t i = 0; i < n; i++)
		live_attach(lv, first[i], strlen(first[i]));
	spawn_release(go);
	return lv;
}

void live_poll(struct live *lv)
{
	live_read_msgs(lv);
	for (int i = 0; i < lv->ng; i++)
		if (lv->g[i].prog)
			dev_ring_drain(&lv->g[i].ds);
	fflush(lv->out);
	if (lv->attached && !lv->reaped && kill(lv->pid, 0) && errno == ESRCH) {
		lv->reaped = true; /* not ours: its status is its parent's */
		fprintf(stderr, "gpux: pid %d has exited\n", lv->pid);
	}
	if (!lv->attached && lv->pid > 0 && !lv->reaped && spawn_reaped(lv->pid, &lv->status)) {
		lv->reaped = true;
		fflush(stdout);
		if (WIFSIGNALED(lv->status))
			fprintf(stderr, "gpux: the program was killed by signal %d\n",
				WTERMSIG(lv->status));
		else
			fprintf(stderr, "gpux: the program exited with status %d\n",
				WEXITSTATUS(lv->status));
	}
}

bool live_running(const struct live *lv)
{
	return lv->pid > 0 && !lv->reaped;
}

void live_end(struct live *lv)
{
	if (!lv)
		return;
	for (int i = 0; i < lv->ng; i++)
		if (lv->g[i].h)
			__atomic_store_n(&lv->g[i].h->stop, 1, __ATOMIC_RELEASE);
	if (lv->attached) { /* stopped probing: the process goes on */
		live_poll(lv);
	} else if (lv->pid > 0 && !lv->reaped) {
		live_poll(lv);
		if (!lv->reaped) {
			spawn_signal_tree(lv->pid, SIGTERM);
			for (long t = 0; t < TERM_WAIT_MS && !lv->reaped; t += 5) {
				spawn_sleep_ms(5);
				live_poll(lv);
			}
			if (!lv->reaped) {
				spawn_signal_tree(lv->pid, SIGKILL);
				while (waitpid(lv->pid, &lv->status, 0) < 0 && errno == EINTR)
					;
			}
		}
	}
	live_poll(lv);
	for (int i = lv->ng - 1; i >= 0; i--)
		gen_free(&lv->g[i]);
	free(lv->g);
	for (int i = 0; i < lv->ne; i++)
		free(lv->e[i].text);
	free(lv->e);
	dev_msgs_free(&lv->msgs);
	map_base_free(&lv->bases);
	if (lv->fd >= 0)
		close(lv->fd);
	free(lv);
}

/* ---- generations ---- */

/* The text of a generation: with kept, first the detached entries
 * (*kept_lines lines), then the active ones and text (may be NULL). */
static char *union_text(const struct live *lv, const char *text, size_t len, bool kept,
			int *kept_lines, size_t *out)
{
	size_t n = len + 2;
	for (int i = 0; i < lv->ne; i++)
		n += strlen(lv->e[i].text) + 1;
	char *s = malloc(n);
	if (!s)
		return NULL;
	size_t k = 0;
	*kept_lines = 0;
	for (int pass = kept ? 0 : 1; pass < 2; pass++) {
		for (int i = 0; i < lv->ne; i++)
			if (lv->e[i].active == (pass == 1)) {
				size_t m = strlen(lv->e[i].text);
				memcpy(s + k, lv->e[i].text, m);
				k += m;
				s[k++] = '\n';
			}
		for (size_t j = 0; pass == 0 && j < k; j++)
			*kept_lines += s[j] == '\n';
	}
	if (text) {
		memcpy(s + k, text, len);
		k += len;
		s[k++] = '\n';
	}
	s[k] = '\0';
	*out = k;
	return s;
}

/* The probes of detached entries (the first lines lines) make no code:
 * their maps stay, laid out as before and written by nothing, so that
 * the generation carries them on and a probe attached again goes on
 * from their counts. */
static void keep_maps_only(struct program *prog, int lines)
{
	for (struct node *p = prog->probes; p; p = p->next)
		p->u.probe.maps_only = p->span.first_line <= lines;
}

/* Every probe of prog runs on the device: a live session moves only
 * the device's probes from one generation to the next. */
static int device_only(struct program *prog, struct diags *d)
{
	int rc = 0;
	for (struct node *p = prog->probes; p; p = p->next)
		if (!place_is_device(p->u.probe.place)) {
			diag_error(d, p->span,
				   "a live session attaches gdev: probes; run host and driver "
				   "probes with gpux -e or a script");
			rc = -1;
		}
	return rc;
}

/* Maps of g that continue the same-named map of prev: same layout. */
static void set_carry(struct live_gen *g, const struct live_gen *prev)
{
	if (!prev->prog)
		return;
	/* the map table where gpux laid it out, compared on gpux's copies */
	struct gpux_sess_map *m =
		(struct gpux_sess_map *)((char *)g->h + g->ds.trust.plan.maps_off);
	const struct gpux_sess_map *pm = prev->ds.maps;
	for (uint32_t i = 0; i < g->ds.nmaps; i++)
		for (uint32_t j = 0; j < prev->ds.nmaps; j++) {
			const struct gpux_sess_map *a = &g->ds.maps[i], *b = &pm[j];
			if (!strcmp(g->ds.hmaps[i].name, prev->ds.hmaps[j].name) &&
			    a->key_size == b->key_size && a->value_size == b->value_size &&
			    a->max_entries == b->max_entries && a->agg == b->agg &&
			    a->kind == b->kind && a->area_size == b->area_size)
				m[i].carry = g->ds.maps[i].carry = j + 1;
		}
	/* gpux wrote the table again: fingerprint what it holds now */
	sess_trust_init(&g->ds.trust, g->h, &g->ds.trust.plan);
}

/* Makes g the newest generation and waits for the program to move to
 * it (not at all if it has not started CUDA yet: it starts there). */
static void publish(struct live *lv, struct live_gen *g)
{
	struct live_gen *prev = &lv->g[lv->ng - 1];
	struct gpux_sess_hdr *h = g->h;
	h->flags |= GPUX_SESS_LIVE | GPUX_SESS_TOP | (lv->verbose ? GPUX_SESS_VERBOSE : 0) |
		    (lv->no_cache ? GPUX_SESS_NO_CACHE : 0);
	h->ctl_pid = (uint32_t)getpid();
	set_carry(g, prev);
	lv->g[lv->ng++] = *g;
	__atomic_store_n(&prev->h->next_off, g->off, __ATOMIC_RELEASE);
	for (long t = 0; t < MOVE_WAIT_MS && live_running(lv); t += 2) {
		if (__atomic_load_n(&prev->h->moved, __ATOMIC_ACQUIRE) ||
		    !__atomic_load_n(&lv->g[0].h->runtimes, __ATOMIC_ACQUIRE))
			break;
		spawn_sleep_ms(2);
		live_poll(lv);
	}
	live_poll(lv);
}

/* g compiled from the active entries and text (NULL: none), with the
 * detached entries' maps when kept; diagnostics printed when loud. 1:
 * nothing to compile. */
static int compile_gen(struct live *lv, struct live_gen *g, uint64_t off, const char *text,
		       size_t len, bool kept, bool loud)
{
	size_t n;
	int lines;
	char *src = union_text(lv, text, len, kept, &lines, &n);
	if (!src)
		return -1;
	if (!n) {
		free(src);
		return 1;
	}
	g->prog = program_new(SRC_NAME, src, n);
	free(src);
	if (!g->prog)
		return -1;
	struct diags d;
	diags_init(&d, &g->prog->arena);
	int fd = dup(lv->fd);
	int rc = frontend_check(g->prog, &d, FE_STOP_SEMA);
	if (rc == 0)
		rc = device_only(g->prog, &d);
	if (rc == 0) {
		keep_maps_only(g->prog, lines);
		if (fd >= 0) {
			rc = dev_session_open_at(&g->ds, g->prog, lv->out, false, NULL, fd, off, &d);
			fd = -1; /* the session's now, closed on failure too */
		}
	}
	if (loud || rc == 0)
		diags_print(&d, &g->prog->src, stderr);
	if (fd >= 0)
		close(fd);
	if (rc) {
		program_free(g->prog);
		g->prog = NULL;
		return -1;
	}
	return 0;
}

/* A new generation from the active entries and text (NULL: none). The
 * detached entries' maps are kept when they check with the rest (a map
 * of the same name used another way leaves them out). */
static int regenerate(struct live *lv, const char *text, size_t len)
{
	struct live_gen *v = realloc(lv->g, sizeof(*v) * (size_t)(lv->ng + 1));
	if (!v)
		return -1;
	lv->g = v;
	struct live_gen g = { 0 };
	uint64_t off = gen_end(&lv->g[lv->ng - 1]);
	bool detached = false;
	for (int i = 0; i < lv->ne; i++)
		detached |= !lv->e[i].active;
	int rc = detached ? compile_gen(lv, &g, off, text, len, true, false) : -1;
	if (rc < 0)
		rc = compile_gen(lv, &g, off, text, len, false, true);
	if (rc < 0)
		return -1;
	if (rc > 0) {
		if (empty_gen(lv, &g, off))
			return -1;
		publish(lv, &g);
		return 0;
	}
	g.h = g.ds.h;
	g.off = off;
	g.size = g.ds.size;
	g.ds.names = lv->names;
	if (g.ds.mod.reads_clock)
		g.h->flags |= GPUX_SESS_CLOCK;
	dev_output_init(&g.ds);
	publish(lv, &g);
	return 0;
}

/* The attach points of text's probes, "a, b" (malloc'd). */
static char *attach_points(const char *text, size_t len)
{
	struct program *p = program_new(SRC_NAME, text, len);
	struct diags d;
	char *s = NULL;
	if (!p)
		return NULL;
	diags_init(&d, &p->arena);
	if (frontend_check(p, &d, FE_STOP_PARSE) == 0) {
		size_t n = 1;
		for (struct node *q = p->probes; q; q = q->next)
			for (struct node *a = q->u.probe.attach; a; a = a->next)
				n += strlen(a->u.attach.text) + 2;
		if ((s = malloc(n))) {
			*s = '\0';
			for (struct node *q = p->probes; q; q = q->next)
				for (struct node *a = q->u.probe.attach; a; a = a->next)
					strcat(strcat(s, *s ? ", " : ""), a->u.attach.text);
		}
	}
	program_free(p);
	return s;
}

int live_attach(struct live *lv, const char *text, size_t len)
{
	/* the entry alone first, so its messages have its own lines */
	struct program *p = program_new(SRC_NAME, text, len);
	if (!p)
		return -1;
	struct diags d;
	diags_init(&d, &p->arena);
	int rc = frontend_check(p, &d, FE_STOP_SEMA);
	if (rc == 0)
		rc = device_only(p, &d);
	diags_print(&d, &p->src, stderr);
	program_free(p);
	struct live_entry *v = rc ? NULL : realloc(lv->e, sizeof(*v) * (size_t)(lv->ne + 1));
	if (!v)
		return -1;
	lv->e = v;
	if (regenerate(lv, text, len))
		return -1;
	struct live_entry *e = &lv->e[lv->ne];
	*e = (struct live_entry){ ++lv->last_id, strndup(text, len), true };
	if (!e->text)
		return -1;
	lv->ne++;
	char *what = attach_points(text, len);
	fprintf(lv->out, "Attached %d: %s\n", e->id, what ? what : "");
	free(what);
	return e->id;
}

int live_detach(struct live *lv, int id)
{
	for (int i = 0; i < lv->ne; i++)
		if (lv->e[i].id == id && lv->e[i].active) {
			lv->e[i].active = false;
			if (regenerate(lv, NULL, 0)) {
				lv->e[i].active = true;
				return -1;
			}
			fprintf(lv->out, "Detached %d\n", id);
			return 0;
		}
	fprintf(stderr, "gpux: ERROR: no active probe %d (:probes lists them)\n", id);
	return -1;
}

void live_list(struct live *lv, FILE *out)
{
	for (int i = 0; i < lv->ne; i++)
		if (lv->e[i].active) {
			fprintf(out, "%3d  ", lv->e[i].id);
			/* one line: the entry's own line breaks as spaces */
			for (const char *c = lv->e[i].text; *c; c++)
				fputc(*c == '\n' || *c == '\t' ? ' ' : *c, out);
			fputc('\n', out);
		}
}

int live_pause(struct live *lv, bool pause)
{
	struct gpux_sess_hdr *h = lv->g[0].h;
	__atomic_store_n(&h->pause, pause ? 1u : 0u, __ATOMIC_RELEASE);
	if (!pause)
		return 0;
	for (long t = 0; t < MOVE_WAIT_MS; t++) {
		if (!__atomic_load_n(&h->inflight, __ATOMIC_ACQUIRE))
			return 0;
		spawn_sleep_ms(1);
	}
	fprintf(stderr, "gpux: WARNING: a launch is still going in after %d ms\n", MOVE_WAIT_MS);
	return -1;
}

int live_kill(struct live *lv, int sig)
{
	if (!live_running(lv) || kill(lv->pid, sig)) {
		fprintf(stderr, "gpux: ERROR: no program to signal\n");
		return -1;
	}
	return 0;
}

void live_wait(struct live *lv, long ms, volatile sig_atomic_t *stop)
{
	for (long t = 0; (ms < 0 || t < ms) && !*stop; t += 5) {
		live_poll(lv);
		if (ms < 0 && !live_running(lv))
			break;
		spawn_sleep_ms(ms >= 0 && ms - t < 5 ? ms - t : 5);
	}
	live_poll(lv);
}

/* A map in generation i that a newer one has too was reported there. */
static bool newer_has(const struct live *lv, int i, const char *name)
{
	for (int j = i + 1; j < lv->ng; j++)
		for (int k = 0; lv->g[j].prog && k < lv->g[j].ds.mod.nmaps; k++)
			if (!strcmp(lv->g[j].ds.hmaps[k].name, name))
				return true;
	return false;
}

void live_map_names(struct live *lv, void (*cb)(const char *name, void *arg), void *arg)
{
	for (int i = lv ? lv->ng - 1 : -1; i >= 0; i--)
		for (int k = 0; lv->g[i].prog && k < lv->g[i].ds.mod.nmaps; k++)
			if (!newer_has(lv, i, lv->g[i].ds.hmaps[k].name))
				cb(lv->g[i].ds.hmaps[k].name, arg);
}
