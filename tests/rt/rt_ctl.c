/* Plays gpux's part for libgpux-rt.so: makes a session segment, runs a
 * command with the runtime preloaded, and when it has exited writes what
 * the runtime left in the segment, in a stable text form. Usage:
 *   rt_ctl [OPTIONS] -- CMD ARGS...
 *     --ptx FILE        the probe module (gpux --emit DIR's device.ptx)
 *     --link-ptx FILE   its form for the helper library's cubin
 *                       (device.link.ptx; unset: none in the segment)
 *     --probe S[/O]:GLOB:F  a probe table entry: site number (and its
 *                       GPUX_SITE_* bits), glob, function
 *     --map K:V:N       a map: key bytes, value bytes, max entries
 *     --preload LIBS    LD_PRELOAD for the command (unset: left alone)
 *     --no-session      do not set GPUX_SESSION
 *     --bad-token       GPUX_SESSION names the segment with a wrong token
 *     --attach LIB      start the command without the session, then after
 *                       300 ms load LIB (libgpux-rt.so) into it as gpux -p
 *                       does (attach/inject.c, gpux_rt_attach) and send it
 *                       SIGUSR1
 *     --verbose         GPUX_SESS_VERBOSE
 *     --no-cache        GPUX_SESS_NO_CACHE
 *     --controller-dies MS  a stand-in controller process (ctl_pid) is
 *                       SIGKILLed MS ms after the command starts
 *     --dump FILE       where the report goes (default stdout)
 *     --count           records are counted, not listed
 *     --consume         read the event rings while the command runs, as
 *                       gpux does, and ask for a snapshot every 20 ms;
 *                       records are counted, not listed, and each must
 *                       be fmt 0 with 2 words per lane: (0, lane)
 * The command inherits stdin, stdout and stderr; rt_ctl exits with its
 * status (128 + N for signal N). Report lines:
 *   slots N / names N / exit F
 *   slot I STATE pid=child|other device=D modules=M snapshots=yes|no
 *      ring_drops=R
 *   name I NAME                (names registered by this process)
 *   map M drops=D
 *   map M slot I [KEY] VALUE   (KEY: the kernel's name if the key is a
 *                               registered id, else a number; sorted)
 *   record slot I fmt=F mask=0xM arg_size=A words=W,W,...
 *   records slot I count=N     (--count)
 *   ring slot I head=H
 *   consumed slot I records=N lanes=L bad=B live_snapshots=yes|no */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpux_dev.h"
#include "inject.h"
#include "sess_layout.h"

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "rt_ctl: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(99);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		die("cannot read %s", path);
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	char chunk[65536];
	size_t k;
	while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, k, m);
	fclose(f);
	fclose(m);
	*len = n;
	return buf;
}

struct entry {
	uint64_t key;
	uint64_t value;
};

static int by_key(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

static const char *name_of(struct gpux_sess_hdr *h, uint64_t id, char *buf, size_t len)
{
	uint32_t used = h->names_used < GPUX_SESS_MAX_NAMES ? h->names_used : GPUX_SESS_MAX_NAMES;
	if (id < used && __atomic_load_n(&gpux_sess_names(h)[id].ready, __ATOMIC_ACQUIRE)) {
		snprintf(buf, len, "%.*s", GPUX_SESS_NAME_LEN, gpux_sess_names(h)[id].name);
		return buf;
	}
	snprintf(buf, len, "%llu", (unsigned long long)id);
	return buf;
}

static void report_maps(FILE *out, struct gpux_sess_hdr *h, struct gpux_sess_slot *s,
			uint32_t si)
{
	for (uint32_t m = 0; m < h->nmaps; m++) {
		struct gpux_sess_map *mp = &gpux_sess_maps(h)[m];
		struct gpux_sess_map_area *a = gpux_sess_area(h, s, m);
		fprintf(out, "map %u slot %u drops=%llu\n", m, si, (unsigned long long)a->drops);
		uint32_t *state = gpux_area_state(a);
		unsigned char *keys = gpux_area_keys(a, mp), *vals = gpux_area_values(a, mp);
		struct entry *e = calloc(mp->max_entries ? mp->max_entries : 1, sizeof(*e));
		size_t n = 0;
		for (uint32_t i = 0; i < mp->max_entries; i++) {
			if (state[i] == GPUX_SLOT_EMPTY)
				continue;
			if (state[i] != GPUX_SLOT_FULL || mp->key_size != 8 || mp->value_size != 8) {
				fprintf(out, "map %u slot %u entry %u state %u\n", m, si, i, state[i]);
				continue;
			}
			memcpy(&e[n].key, keys + (size_t)i * 8, 8);
			memcpy(&e[n].value, vals + (size_t)i * 8, 8);
			n++;
		}
		qsort(e, n, sizeof(*e), by_key);
		for (size_t i = 0; i < n; i++) {
			char nb[GPUX_SESS_NAME_LEN + 1];
			fprintf(out, "map %u slot %u [%s] %llu\n", m, si,
				name_of(h, e[i].key, nb, sizeof(nb)), (unsigned long long)e[i].value);
		}
		free(e);
	}
}

static int count_only;

static void report_ring(FILE *out, struct gpux_sess_hdr *h, struct gpux_sess_slot *s,
			uint32_t si)
{
	uint64_t count = 0;
	unsigned char *ring = gpux_sess_ring(s);
	uint64_t head = s->ring_head, size = h->ring_size;
	for (uint64_t t = s->ring_tail; t < head;) {
		struct gpux_rec_hdr r;
		memcpy(&r, ring + (t & (size - 1)), sizeof(r));
		if (r.len < sizeof(r) || r.len % GPUX_REC_ALIGN) {
			fprintf(out, "record slot %u damaged len=%u\n", si, r.len);
			break;
		}
		t += r.len;
		if (r.fmt == GPUX_SESS_FILLER)
			continue;
		count++;
		if (count_only)
			continue;
		fprintf(out, "record slot %u fmt=%u mask=0x%x arg_size=%u words=", si, r.fmt,
			r.mask, r.arg_size);
		uint32_t words = (r.len - (uint32_t)sizeof(r)) / 8;
		uint32_t used = (uint32_t)__builtin_popcount(r.mask) * r.arg_size / 8;
		for (uint32_t i = 0; i < used && i < words; i++) {
			uint64_t w;
			memcpy(&w, ring + ((t - r.len + sizeof(r) + 8 * i) & (size - 1)), 8);
			fprintf(out, "%s%llu", i ? "," : "", (unsigned long long)w);
		}
		fputc('\n', out);
	}
	if (count_only)
		fprintf(out, "records slot %u count=%llu\n", si, (unsigned long long)count);
	fprintf(out, "ring slot %u head=%llu\n", si, (unsigned long long)head);
}

/* What --consume saw of each slot. */
struct seen {
	uint64_t records, lanes, bad;
	int live_snap;
};

static void consume(struct gpux_sess_hdr *h, struct seen *seen)
{
	uint32_t n = __atomic_load_n(&h->slots_used, __ATOMIC_ACQUIRE);
	for (uint32_t si = 0; si < n && si < h->nslots; si++) {
		struct gpux_sess_slot *s = gpux_sess_slot_at(h, si);
		unsigned char *ring = gpux_sess_ring(s);
		uint64_t size = h->ring_size, t = s->ring_tail;
		uint64_t head = __atomic_load_n(&s->ring_head, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == GPUX_SLOT_LIVE &&
		    __atomic_load_n(&s->snapshots, __ATOMIC_ACQUIRE))
			seen[si].live_snap = 1;
		while (t < head) {
			struct gpux_rec_hdr r;
			memcpy(&r, ring + (t & (size - 1)), sizeof(r));
			if (r.len < sizeof(r) || r.len % GPUX_REC_ALIGN || r.len > head - t) {
				seen[si].bad++;
				t = head;
				break;
			}
			if (r.fmt != GPUX_SESS_FILLER) {
				uint32_t lanes = (uint32_t)__builtin_popcount(r.mask);
				seen[si].records++;
				seen[si].lanes += lanes;
				if (r.fmt != 0 || r.arg_size != 16 || r.len < sizeof(r) + lanes * 16u)
					seen[si].bad++;
				for (uint32_t l = 0; r.arg_size == 16 && l < lanes; l++) {
					uint64_t w[2];
					memcpy(w, ring + ((t + sizeof(r) + 16 * l) & (size - 1)), 16);
					if (w[0] != 0 || w[1] != l)
						seen[si].bad++;
				}
			}
			t += r.len;
		}
		__atomic_store_n(&s->ring_tail, t, __ATOMIC_RELEASE);
	}
}

int main(int argc, char **argv)
{
	static struct seen seen[GPUX_SESS_MAX_SLOTS];
	int consuming = 0;
	struct gpux_sess_probe probes[16];
	struct gpux_sess_map maps[16];
	uint32_t np = 0, nm = 0;
	const char *ptx_file = NULL, *link_file = NULL, *preload = NULL, *dump = NULL;
	int session = 1, verbose = 0, no_cache = 0, dies_ms = -1, bad_token = 0, i;
	const char *attach = NULL;
	memset(probes, 0, sizeof(probes));
	memset(maps, 0, sizeof(maps));
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--attach") && v) {
			attach = v;
			i++;
			continue;
		}
		if (!strcmp(a, "--bad-token")) {
			bad_token = 1;
			continue;
		}
		if (!strcmp(a, "--no-session")) {
			session = 0;
			continue;
		}
		if (!strcmp(a, "--count")) {
			count_only = 1;
			continue;
		}
		if (!strcmp(a, "--consume")) {
			consuming = 1;
			continue;
		}
		if (!strcmp(a, "--verbose")) {
			verbose = 1;
			continue;
		}
		if (!strcmp(a, "--no-cache")) {
			no_cache = 1;
			continue;
		}
		if (!v)
			die("%s needs a value", a);
		i++;
		if (!strcmp(a, "--ptx")) {
			ptx_file = v;
		} else if (!strcmp(a, "--link-ptx")) {
			link_file = v;
		} else if (!strcmp(a, "--preload")) {
			preload = v;
		} else if (!strcmp(a, "--dump")) {
			dump = v;
		} else if (!strcmp(a, "--controller-dies")) {
			dies_ms = atoi(v);
		} else if (!strcmp(a, "--probe") && np < 16) {
			char *c1 = strchr(v, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
			if (!c2 || (size_t)(c2 - c1 - 1) >= sizeof(probes[0].glob) ||
			    strlen(c2 + 1) >= sizeof(probes[0].func))
				die("bad --probe %s", v);
			probes[np].site = (uint32_t)atoi(v);
			const char *o = strchr(v, '/');
			if (o && o < c1)
				probes[np].only = (uint32_t)atoi(o + 1);
			memcpy(probes[np].glob, c1 + 1, (size_t)(c2 - c1 - 1));
			strcpy(probes[np].func, c2 + 1);
			np++;
		} else if (!strcmp(a, "--map") && nm < 16) {
			if (sscanf(v, "%u:%u:%u", &maps[nm].key_size, &maps[nm].value_size,
				   &maps[nm].max_entries) != 3)
				die("bad --map %s", v);
			nm++;
		} else {
			die("unknown option %s", a);
		}
	}
	if (i + 1 >= argc)
		die("%s", "no command after --");
	char **cmd = argv + i + 1;

	size_t ptx_len = 0, link_len = 0;
	char *ptx = ptx_file ? slurp(ptx_file, &ptx_len) : NULL;
	char *link = link_file ? slurp(link_file, &link_len) : NULL;
	struct gpux_sess_spec spec = { .probes = probes, .nprobes = np, .maps = maps, .nmaps = nm,
				       .ptx = ptx, .ptx_len = ptx_len,
				       .link_ptx = link, .link_ptx_len = link_len };
	uint64_t size = gpux_sess_size(&spec);
	int fd = memfd_create("rt-ctl-session", 0); /* inherited */
	if (fd < 0 || ftruncate(fd, (off_t)size))
		die("memfd: %s", strerror(errno));
	struct gpux_sess_hdr *h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	gpux_sess_init(h, &spec);
	if (verbose)
		h->flags |= GPUX_SESS_VERBOSE;
	if (no_cache)
		h->flags |= GPUX_SESS_NO_CACHE;
	h->flags |= GPUX_SESS_CLOCK; /* the clock handshake is under test too */
	/* what the environment must name (gpux's is random) */
	h->token[0] = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	h->token[1] = h->token[0] * 0xbf58476d1ce4e5b9ull + 1;
	free(ptx);
	free(link);

	fflush(NULL);
	pid_t ctl = 0;
	if (dies_ms >= 0) {
		if ((ctl = fork()) < 0)
			die("fork: %s", strerror(errno));
		if (ctl == 0)
			for (;;)
				pause();
		h->ctl_pid = (uint32_t)ctl;
	}
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		char num[GPUX_SESS_ENV_SIZE];
		gpux_sess_env_format(num, (uint32_t)getppid(), fd, h->token);
		char *last = num + strlen(num) - 1;
		if (bad_token) /* names the segment, but not its token */
			*last = *last == '0' ? '1' : '0';
		if (session && !attach)
			setenv(GPUX_SESS_ENV, num, 1);
		else
			close(fd);
		if (preload && !attach)
			setenv("LD_PRELOAD", preload, 1);
		execvp(cmd[0], cmd);
		fprintf(stderr, "rt_ctl: cannot run %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	if (attach) { /* as gpux -p: load the runtime into it, then let it go on */
		char num[GPUX_SESS_ENV_SIZE], err[512];
		uint64_t bound = 0;
		gpux_sess_env_format(num, (uint32_t)getpid(), fd, h->token);
		nanosleep(&(struct timespec){ 0, 300000000 }, NULL);
		uint64_t at = 0;
		/* as gpux: the entry answers from a thread of its own */
		if (inject_library(pid, attach, GPUX_ATTACH_ENTRY, num, &at, 2000, err,
				   sizeof(err)) ||
		    ((int64_t)at >= 0 && inject_wait_word(pid, at, (uint64_t)GPUX_ATTACH_PENDING,
							  10000, &bound, err, sizeof(err)))) {
			kill(pid, SIGKILL);
			die("%s", err);
		}
		if ((int64_t)at < 0)
			bound = at;
		fprintf(stderr, "rt_ctl: attached, %d bindings\n", (int)(int32_t)bound);
		kill(pid, SIGUSR1);
	}
	int status;
	for (int tick = 0;; tick++) {
		if (ctl && tick >= dies_ms) {
			kill(ctl, SIGKILL);
			waitpid(ctl, NULL, 0);
			ctl = 0;
		}
		pid_t r = waitpid(pid, &status, consuming || ctl ? WNOHANG : 0);
		if (r < 0 && errno != EINTR)
			die("waitpid: %s", strerror(errno));
		if (r == pid)
			break;
		if (consuming) {
			consume(h, seen);
			if (tick % 20 == 19)
				__atomic_add_fetch(&h->snap_req, 1, __ATOMIC_RELEASE);
		}
		if (consuming || ctl)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	if (ctl) { /* the command ended first */
		kill(ctl, SIGKILL);
		waitpid(ctl, NULL, 0);
	}
	if (consuming)
		consume(h, seen);
	/* the runtime's messages, as gpux prints them on its stderr */
	for (uint32_t i = 0; i < h->msgs_used && i < GPUX_SESS_MAX_MSGS; i++) {
		struct gpux_sess_msg *m = &gpux_sess_msgs(h)[i];
		if (m->ready)
			fprintf(stderr, "gpux: %.*s\n", GPUX_SESS_MSG_LEN, m->text);
	}

	FILE *out = dump ? fopen(dump, "w") : stdout;
	if (!out)
		die("cannot write %s", dump);
	uint32_t slots = h->slots_used < h->nslots ? h->slots_used : h->nslots;
	fprintf(out, "slots %u\nnames %u\nexit %u\n", h->slots_used, h->names_used, h->exit);
	for (uint32_t n = 0; n < h->names_used && n < GPUX_SESS_MAX_NAMES; n++) {
		struct gpux_sess_name *e = &gpux_sess_names(h)[n];
		fprintf(out, "name %u %.*s%s%s\n", n, GPUX_SESS_NAME_LEN, e->name,
			e->ready ? "" : " (not ready)", e->pid == (uint32_t)pid ? "" : " (pid?)");
	}
	for (uint32_t s = 0; s < slots; s++) {
		struct gpux_sess_slot *sl = gpux_sess_slot_at(h, s);
		static const char *const st[] = { "free", "live", "done" };
		fprintf(out, "slot %u %s pid=%s device=%u modules=%llu snapshots=%s ring_drops=%llu\n",
			s, sl->state < 3 ? st[sl->state] : "?",
			sl->pid == (uint32_t)pid ? "child" : "other", sl->device,
			(unsigned long long)sl->modules, sl->snapshots ? "yes" : "no",
			(unsigned long long)sl->ring_drops);
		if (sl->seq % 2)
			fprintf(out, "slot %u seq odd: a snapshot was left half written\n", s);
		report_maps(out, h, sl, s);
		report_ring(out, h, sl, s);
		if (consuming)
			fprintf(out, "consumed slot %u records=%llu lanes=%llu bad=%llu live_snapshots=%s\n",
				s, (unsigned long long)seen[s].records,
				(unsigned long long)seen[s].lanes, (unsigned long long)seen[s].bad,
				seen[s].live_snap ? "yes" : "no");
	}
	if (out != stdout)
		fclose(out);
	munmap(h, size);
	close(fd);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
