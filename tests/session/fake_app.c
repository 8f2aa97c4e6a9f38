/* A stand-in for a CUDA program traced by gpux: it does to the session
 * segment (abi/session.h) what libgpux-rt.so would, without a GPU,
 * so that the controller's side is tested in CI. Usage:
 *   fake_app SCENARIO [ARG]
 * Each scenario goes with one program text (session_test.sh) and knows
 * its map table (checked: a mismatch exits 99). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpux_dev.h"
#include "sess_layout.h"
#include "types.h"

static struct gpux_sess_hdr *h;

static void die(const char *what)
{
	fprintf(stderr, "fake_app: %s\n", what);
	exit(99);
}

static void attach(void)
{
	const char *env = getenv(GPUX_SESS_ENV);
	if (!env)
		die("no " GPUX_SESS_ENV);
	uint32_t ctl;
	int fd;
	uint64_t token[2];
	if (gpux_sess_env_parse(env, &ctl, &fd, token))
		die("bad " GPUX_SESS_ENV);
	struct stat st;
	if (fstat(fd, &st))
		die("bad session fd");
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED || gpux_sess_check(p, (uint64_t)st.st_size))
		die("not a session segment");
	h = p;
	__atomic_store_n(&h->cuda_seen, 1, __ATOMIC_RELEASE); /* as a CUDA program's runtime */
}

static struct gpux_sess_slot *claim(uint32_t pid)
{
	uint32_t i = __atomic_fetch_add(&h->slots_used, 1, __ATOMIC_ACQ_REL);
	if (i >= h->nslots)
		die("no slot left");
	struct gpux_sess_slot *s = gpux_sess_slot_at(h, i);
	s->pid = pid;
	__atomic_store_n(&s->state, GPUX_SLOT_LIVE, __ATOMIC_RELEASE);
	return s;
}

static uint32_t name(const char *n)
{
	uint32_t id = __atomic_fetch_add(&h->names_used, 1, __ATOMIC_ACQ_REL);
	struct gpux_sess_name *e = &gpux_sess_names(h)[id];
	e->pid = (uint32_t)getpid();
	snprintf(e->name, sizeof(e->name), "%s", n);
	__atomic_store_n(&e->ready, 1, __ATOMIC_RELEASE);
	return id;
}

static void expect_map(uint32_t map, int agg, uint32_t key_size, uint32_t value_size)
{
	struct gpux_sess_map *m = &gpux_sess_maps(h)[map];
	if (map >= h->nmaps || (int)m->agg != agg || m->key_size != key_size ||
	    m->value_size != value_size) {
		fprintf(stderr, "fake_app: map %u is not %d/%u/%u\n", map, agg, key_size, value_size);
		exit(99);
	}
}

/* A snapshot: seq odd while it is written. */
static void begin(struct gpux_sess_slot *s)
{
	__atomic_fetch_add(&s->seq, 1, __ATOMIC_ACQ_REL);
}

static void end(struct gpux_sess_slot *s)
{
	__atomic_fetch_add(&s->seq, 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&s->snapshots, 1, __ATOMIC_RELEASE);
}

static void put_state(struct gpux_sess_slot *s, uint32_t map, uint32_t idx, uint32_t state,
		      const void *key, const void *val)
{
	struct gpux_sess_map *m = &gpux_sess_maps(h)[map];
	struct gpux_sess_map_area *a = gpux_sess_area(h, s, map);
	if (m->kind == GPUX_MAP_ARRAY) {
		/* as the device writes an array map: the key is the slot, and
		 * only sum() sets the state (a half-inserted or deleted slot
		 * has no counterpart) */
		uint64_t k;
		memcpy(&k, key, 8);
		if (k >= m->max_entries) {
			fprintf(stderr, "fake_app: key %llu past array map %u\n",
				(unsigned long long)k, map);
			exit(99);
		}
		if (state != GPUX_SLOT_FULL)
			return;
		if (m->agg == AGG_SUM)
			gpux_area_state(a)[k] = state;
		memcpy(gpux_area_values(a, m) + (size_t)k * m->value_size, val, m->value_size);
		return;
	}
	gpux_area_state(a)[idx] = state;
	memcpy(gpux_area_keys(a, m) + (size_t)idx * m->key_size, key, m->key_size);
	memcpy(gpux_area_values(a, m) + (size_t)idx * m->value_size, val, m->value_size);
}

static void put(struct gpux_sess_slot *s, uint32_t map, uint32_t idx, const void *key,
		const void *val)
{
	put_state(s, map, idx, GPUX_SLOT_FULL, key, val);
}

/* An entry with 8-byte key k and 8-byte value v. */
static void put1(struct gpux_sess_slot *s, uint32_t map, uint32_t idx, uint64_t k, int64_t v)
{
	put(s, map, idx, &k, &v);
}

/* ---- event ring ---- */

/* Writes a record at byte position at (bytes ever written) without
 * publishing it; len 0: the record's own rounded length. Returns len. */
static uint32_t ring_put(struct gpux_sess_slot *s, uint64_t at, uint32_t fmt, uint32_t mask,
			 uint32_t arg_size, const uint64_t *words, uint32_t len)
{
	unsigned char *ring = gpux_sess_ring(s);
	uint64_t pos = at & (h->ring_size - 1);
	struct gpux_rec_hdr rh = { 0, fmt, mask, arg_size };
	uint32_t payload = (uint32_t)__builtin_popcount(mask) * arg_size;
	if (!len)
		len = (uint32_t)(sizeof(rh) + payload + GPUX_REC_ALIGN - 1) & ~(GPUX_REC_ALIGN - 1u);
	if (pos + len > h->ring_size)
		die("record past the ring's end");
	if (words)
		memcpy(ring + pos + sizeof(rh), words, payload);
	rh.len = len;
	memcpy(ring + pos, &rh, sizeof(rh));
	return len;
}

static void publish(struct gpux_sess_slot *s, uint64_t bytes)
{
	__atomic_store_n(&s->ring_head, s->ring_head + bytes, __ATOMIC_RELEASE);
}

static void ring_write(struct gpux_sess_slot *s, uint32_t fmt, uint32_t mask,
		       uint32_t arg_size, const uint64_t *words, uint32_t len)
{
	publish(s, ring_put(s, s->ring_head, fmt, mask, arg_size, words, len));
}

static void wait_consumed(struct gpux_sess_slot *s)
{
	for (int i = 0; i < 5000; i++) {
		if (__atomic_load_n(&s->ring_tail, __ATOMIC_ACQUIRE) == s->ring_head)
			return;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	die("the controller did not consume the ring");
}

/* ---- scenarios ---- */

/* gdev:kernel_exit { @[kernel] = count(); } */
static uint32_t counts(struct gpux_sess_slot *s, int64_t vec)
{
	expect_map(0, AGG_COUNT, 8, 8);
	uint32_t v = name("vecAdd(float const*, float const*, float*, int)");
	uint32_t g = name("gemm(float*, float*, float*, int)");
	begin(s);
	put1(s, 0, 5, v, vec);
	put1(s, 0, 9, g, 3);
	put1(s, 0, 100, 7, 1); /* an id with no name */
	put_state(s, 0, 12, GPUX_SLOT_DEAD, &(uint64_t){ g }, &(int64_t){ 999 });
	put_state(s, 0, 13, GPUX_SLOT_BUSY, &(uint64_t){ v }, &(int64_t){ 77 });
	end(s);
	return v;
}

/* @s[kernel] = stats(nsecs); @a = avg(warp); @mn = min(sm); @mx = max(sm);
 * @sm = sum(sm); @x = sm; @n[blockIdx.x, kernel] = count(); */
static void aggs(struct gpux_sess_slot *s)
{
	expect_map(0, AGG_STATS, 8, 16);
	expect_map(1, AGG_AVG, 8, 16);
	expect_map(6, AGG_COUNT, 16, 8);
	uint32_t a = name("alpha"), b = name("beta");
	begin(s);
	put(s, 0, 1, &(uint64_t){ a }, (int64_t[]){ 4, 100 });
	put(s, 0, 2, &(uint64_t){ b }, (int64_t[]){ 2, 90 });
	put(s, 1, 0, &(uint64_t){ 0 }, (int64_t[]){ 3, 10 });
	put1(s, 2, 0, 0, -4);
	put1(s, 3, 0, 0, 107);
	put1(s, 4, 0, 0, -20);
	put1(s, 5, 0, 0, 12);
	put(s, 6, 3, (uint64_t[]){ 2, b }, &(int64_t){ 5 });
	put(s, 6, 4, (uint64_t[]){ 1, a }, &(int64_t){ 7 });
	put(s, 6, 5, (uint64_t[]){ 1, b }, &(int64_t){ 1 });
	end(s);
}

/* @h = hist(addr); @k[kernel] = hist(size); @l = lhist(warp, 0, 32, 4);
 * @l2[sm] = lhist(sm, 0, 10, 3); */
static void hist(struct gpux_sess_slot *s)
{
	expect_map(0, AGG_HIST, 8, 66 * 8);
	expect_map(2, AGG_LHIST, 8, 10 * 8);
	expect_map(3, AGG_LHIST, 8, 6 * 8);
	uint32_t k = name("copy");
	uint64_t bk[66] = { 0 };
	bk[1] = 2;  /* 0 */
	bk[2] = 1;  /* 1 */
	bk[5] = 8;  /* [8, 16) */
	bk[13] = 3; /* [2K, 4K) */
	begin(s);
	put(s, 0, 0, &(uint64_t){ 0 }, bk);
	memset(bk, 0, sizeof(bk));
	bk[0] = 1; /* negative */
	bk[6] = 4; /* [16, 32) */
	put(s, 1, 7, &(uint64_t){ k }, bk);
	memset(bk, 0, sizeof(bk));
	/* an all-zero entry of a hashed map (@l2's key is unbounded): an
	 * array map's all-zero entries are the ones nothing touched */
	put(s, 3, 8, &(uint64_t){ 42 }, bk);
	memset(bk, 0, sizeof(bk));
	bk[1] = 5; /* [0, 4) */
	bk[4] = 2; /* [12, 16) */
	bk[9] = 1; /* >= 32 */
	put(s, 2, 0, &(uint64_t){ 0 }, bk);
	/* ceil(10 / 3) + 2 = 6 device buckets, bpftrace's 5: 9 and 11 both
	 * land in its last */
	memset(bk, 0, sizeof(bk));
	bk[2] = 1; /* [3, 6) */
	bk[4] = 2; /* [9, 12) */
	bk[5] = 3; /* >= 12 */
	put(s, 3, 0, &(uint64_t){ 3 }, bk);
	end(s);
}

/* @[kernel] = count(); @h = hist(nsecs); @add += 2; @last = warp;
 * @mn = min(sm); @mx = max(sm); @st = stats(sm); over two slots */
static void merge(void)
{
	expect_map(3, AGG_NONE, 8, 8);
	struct gpux_sess_slot *s0 = claim(100), *s1 = claim(200);
	uint32_t v0 = name("vecAdd"), v1 = name("vecAdd"), g = name("gemm");
	uint64_t bk[66] = { 0 };
	begin(s0);
	put1(s0, 0, 1, v0, 10);
	bk[3] = 1;
	bk[4] = 2;
	put(s0, 1, 0, &(uint64_t){ 0 }, bk);
	put1(s0, 2, 0, 0, 10);
	put1(s0, 3, 0, 0, 5);
	put1(s0, 4, 0, 0, 3);
	put1(s0, 5, 0, 0, -1);
	put(s0, 6, 0, &(uint64_t){ 0 }, (int64_t[]){ 2, 10 });
	end(s0);
	begin(s1);
	put1(s1, 0, 7, v1, 32);
	put1(s1, 0, 8, g, 4);
	bk[3] = 0;
	bk[4] = 5;
	bk[6] = 1;
	put(s1, 1, 0, &(uint64_t){ 0 }, bk);
	put1(s1, 2, 0, 0, 32);
	put1(s1, 3, 0, 0, 9);
	put1(s1, 4, 0, 0, -2);
	put1(s1, 5, 0, 0, 6);
	put(s1, 6, 0, &(uint64_t){ 0 }, (int64_t[]){ 1, 5 });
	end(s1);
	__atomic_store_n(&s0->state, GPUX_SLOT_DONE, __ATOMIC_RELEASE);
	__atomic_store_n(&s1->state, GPUX_SLOT_DONE, __ATOMIC_RELEASE);
}

/* printf("%s block %d warp %d lane %d\n", kernel, blockIdx.x, warp, lane);
 * printf("done\n"); */
static void printfs(struct gpux_sess_slot *s)
{
	uint32_t k = name("vecAdd(float const*, float const*, float*, int)");
	uint64_t w[32 * 4];
	for (int i = 0; i < 3; i++) { /* lanes 0, 1, 3 */
		int lane = i < 2 ? i : 3;
		uint64_t v[4] = { k, 7, 2, (uint64_t)lane };
		memcpy(w + 4 * i, v, sizeof(v));
	}
	ring_write(s, 0, 0xb, 32, w, 0);
	/* pad to just before the end: the next record fits there, then a
	 * filler takes the ring's last 16 bytes */
	uint32_t used = (uint32_t)s->ring_head;
	ring_write(s, GPUX_SESS_FILLER, 0, 0, NULL, h->ring_size - used - 80);
	ring_write(s, 1, 1u << 5, 8, (uint64_t[]){ 0 }, 0);
	ring_write(s, 1, 1u << 31, 8, (uint64_t[]){ 0 }, 0);
	ring_write(s, GPUX_SESS_FILLER, 0, 0, NULL, 16);
	wait_consumed(s);
	/* wrapped: a full warp */
	for (int lane = 0; lane < 32; lane++) {
		uint64_t v[4] = { k, 1, (uint64_t)(lane / 8), (uint64_t)lane };
		memcpy(w + 4 * lane, v, sizeof(v));
	}
	ring_write(s, 0, 0xffffffffu, 32, w, 0);
}

/* Records gpux must skip, each with at most one warning. */
static void badrecs(struct gpux_sess_slot *s)
{
	ring_write(s, 1, 1, 8, (uint64_t[]){ 0 }, 0);     /* fine: "done" */
	ring_write(s, 9, 1, 8, (uint64_t[]){ 0 }, 0);     /* unknown format */
	ring_write(s, 9, 3, 8, (uint64_t[]){ 0, 0 }, 0);  /* again: no second warning */
	ring_write(s, 0, 1, 16, (uint64_t[]){ 1, 2 }, 0); /* wrong arg_size */
	ring_write(s, 1, 1, 8, (uint64_t[]){ 0 }, 0);     /* fine */
	wait_consumed(s);
	ring_write(s, 0, 0xffffffffu, 32, NULL, 48);      /* shorter than its lanes */
	ring_write(s, 1, 1, 8, (uint64_t[]){ 0 }, 0);     /* fine */
	wait_consumed(s);
	/* a length that is not a multiple of 16: what was published with
	 * it goes too */
	unsigned char *ring = gpux_sess_ring(s);
	uint64_t pos = s->ring_head & (h->ring_size - 1);
	memcpy(ring + pos, &(struct gpux_rec_hdr){ 40, 1, 1, 8 }, 16);
	uint32_t lost = ring_put(s, s->ring_head + 48, 1, 1, 8, (uint64_t[]){ 0 }, 0);
	publish(s, 48 + lost);
	wait_consumed(s);
	ring_write(s, 1, 1, 8, (uint64_t[]){ 0 }, 0);     /* after it: printed */
}

/* Answers snap_req with count bumped, until gpux ends us. */
static void serve(struct gpux_sess_slot *s, uint32_t kernel, int64_t count, uint32_t seen,
		  const char *ready)
{
	if (ready) { /* our pid, once the snapshot is there */
		FILE *f = fopen(ready, "w");
		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
	}
	for (int i = 0; i < 20000; i++) {
		uint32_t now = __atomic_load_n(&h->snap_req, __ATOMIC_ACQUIRE);
		if (now != seen) {
			seen = now;
			begin(s);
			put1(s, 0, 5, kernel, ++count);
			end(s);
		}
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	die("not stopped");
}

int main(int argc, char **argv)
{
	if (argc < 2)
		die("usage: fake_app SCENARIO [ARG]");
	const char *sc = argv[1];
	if (!strcmp(sc, "env")) {
		/* what the traced program sees; its output is its own */
		printf("session fd %s\n", getenv(GPUX_SESS_ENV) ? "set" : "missing");
		printf("LD_PRELOAD=%s\n", getenv("LD_PRELOAD"));
		printf("CUPY_COMPILE_WITH_PTX=%s\n", getenv("CUPY_COMPILE_WITH_PTX"));
		return 0;
	}
	attach();
	if (!strcmp(sc, "merge")) {
		merge();
		return 0;
	}
	struct gpux_sess_slot *s = claim((uint32_t)getpid());
	if (!strcmp(sc, "counts") || !strcmp(sc, "status3") || !strcmp(sc, "drops")) {
		counts(s, 10240);
		if (!strcmp(sc, "drops")) {
			gpux_sess_area(h, s, 0)->drops = 5;
			s->ring_drops = 2;
		}
	} else if (!strcmp(sc, "sharded")) {
		/* the count map has shards: vecAdd's 10240 is 10237 in shard
		 * 0 and 3 in the last shard (in another slot of that table);
		 * gpux must print the merged count */
		const struct gpux_sess_map *m = &gpux_sess_maps(h)[0];
		uint32_t last = gpux_sess_shards(m) - 1;
		if (!last)
			die("the count map has no shards");
		uint32_t v = counts(s, 10237);
		begin(s);
		unsigned char *t = gpux_area_table(gpux_sess_area(h, s, 0), m, last);
		uint64_t key = v;
		int64_t three = 3;
		uint32_t full = GPUX_SLOT_FULL, at = 7;
		if (m->kind == GPUX_MAP_ARRAY)
			at = v; /* the slot is the key; no state, no key words */
		else
			memcpy(t + 4 * at, &full, 4);
		memcpy(t + GPUX_SHARD_KEYS(m->max_entries) + at * m->key_size, &key, 8);
		memcpy(t + GPUX_SHARD_VALUES(m->max_entries, m->key_size) + at * m->value_size,
		       &three, 8);
		end(s);
	} else if (!strcmp(sc, "aggs")) {
		aggs(s);
	} else if (!strcmp(sc, "hist")) {
		hist(s);
	} else if (!strcmp(sc, "printf")) {
		printfs(s);
	} else if (!strcmp(sc, "badrec")) {
		badrecs(s);
	} else if (!strcmp(sc, "exit")) {
		uint32_t k = counts(s, 1);
		/* read before exit is set: gpux asks for a snapshot after */
		uint32_t seen = __atomic_load_n(&h->snap_req, __ATOMIC_ACQUIRE);
		__atomic_store_n(&h->exit, 1, __ATOMIC_RELEASE);
		serve(s, k, 1, seen, argc > 2 ? argv[2] : NULL);
	} else if (!strcmp(sc, "wait")) {
		uint32_t k = counts(s, 1);
		serve(s, k, 1, __atomic_load_n(&h->snap_req, __ATOMIC_ACQUIRE),
		      argc > 2 ? argv[2] : NULL);
	} else if (!strcmp(sc, "crash")) {
		counts(s, 10240);
		/* a snapshot cut short: seq stays odd */
		begin(s);
		put1(s, 0, 9, 1, 4);
		setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
		raise(SIGSEGV);
	} else {
		die("unknown scenario");
	}
	__atomic_store_n(&s->state, GPUX_SLOT_DONE, __ATOMIC_RELEASE);
	return strcmp(sc, "status3") ? 0 : 3;
}
