/* The simulator's models on hand-computed cases: the default policy's
 * faults, migrations and evictions, the prefetch threshold, hooks and
 * kfuncs, the generators' and trace readers' event streams, and the
 * time-slice model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "timeslice.h"
#include "uvm.h"
#include "workload.h"

#include "../sim/sim_check.h"
#define BLK(i) (BASE + (uint64_t)(i) * 2 * MB)

static void touch(struct uvm *u, uint64_t va)
{
	uvm_access(u, 1, va);
	uvm_launch_end(u);
}

/* Two chunks, blocks A B C: C evicts A (least recently used); A again
 * refaults and evicts B. One page each: its 64 KiB big page comes. */
static void lru_eviction(void)
{
	struct uvm *u = uvm_new(4 * MB, NULL);
	uvm_alloc(u, 1, BASE, 8 * MB);
	touch(u, BLK(0));
	touch(u, BLK(1));
	touch(u, BLK(2));
	const struct uvm_stats *s = uvm_stats(u);
	EQ("faults", s->faults, 3);
	EQ("evictions", s->evictions, 1);
	EQ("htod", s->htod_bytes, 3 * 65536);
	EQ("dtoh", s->dtoh_bytes, 65536);
	EQ("refaults", s->refaults, 0);
	touch(u, BLK(0));
	EQ("refaults", s->refaults, 1);
	EQ("evictions", s->evictions, 2);
	uint32_t l[4];
	int n = uvm_list_chunks(u, UVM_LIST_USED, l, 4);
	EQ("used", n, 2);
	EQ("head is C", uvm_chunk_block(u, l[0]), BLK(2) >> 21);
	EQ("tail is A", uvm_chunk_block(u, l[1]), BLK(0) >> 21);
	/* a hit costs nothing */
	touch(u, BLK(2) + 4096 * 0);
	EQ("faults after a hit", s->faults, 4);
	EQ("batches", s->batches, 4);
	uvm_free(u);
}

/* 262 pages of one block in one launch: batch 1 (256 pages) stays
 * below 51% of the block; batch 2 passes it (262 > 261.12) and the rest
 * of the block is prefetched. */
static void prefetch_threshold(void)
{
	struct uvm *u = uvm_new(64 * MB, NULL);
	uvm_alloc(u, 1, BASE, 2 * MB);
	for (int p = 0; p < 262; p++)
		uvm_access(u, 1, BASE + (uint64_t)p * 4096);
	uvm_launch_end(u);
	const struct uvm_stats *s = uvm_stats(u);
	EQ("faults", s->faults, 262);
	EQ("batches", s->batches, 2);
	EQ("prefetched", s->prefetched_pages, 250);
	EQ("htod", s->htod_bytes, 2 * MB);
	uvm_free(u);
	/* 200 pages in one batch: their big pages fill 0..207, 81% of the
	 * first half (0..255), 41% of the block: the half comes */
	u = uvm_new(64 * MB, NULL);
	uvm_alloc(u, 1, BASE, 2 * MB);
	for (int p = 0; p < 200; p++)
		uvm_access(u, 1, BASE + (uint64_t)p * 4096);
	uvm_launch_end(u);
	s = uvm_stats(u);
	EQ("faults 200", s->faults, 200);
	EQ("prefetched 200", s->prefetched_pages, 56);
	EQ("htod 200", s->htod_bytes, 1 * MB);
	uvm_free(u);
	/* an allocation smaller than its block bounds the region: 64 pages,
	 * 40 touched: the region of 64 passes (62.5%) */
	u = uvm_new(64 * MB, NULL);
	uvm_alloc(u, 1, BASE, 64 * 4096);
	for (int p = 0; p < 40; p++)
		uvm_access(u, 1, BASE + (uint64_t)p * 4096);
	uvm_launch_end(u);
	EQ("bounded prefetch", uvm_stats(u)->prefetched_pages, 24);
	uvm_free(u);
}

/* ---- hooks ---- */

static int act_head(void *arg, struct uvm *u, uint32_t c, uint32_t t)
{
	(void)arg, (void)t;
	uvm_move_head(u, c);
	return UVM_DEFAULT;
}

static int whole_block(void *arg, struct uvm *u, const struct uvm_prefetch_call *c)
{
	(void)arg;
	uvm_set_prefetch_region(u, c->max_first, c->max_outer);
	return UVM_BYPASS;
}

static int bad_region(void *arg, struct uvm *u, const struct uvm_prefetch_call *c)
{
	(void)arg, (void)c;
	uvm_set_prefetch_region(u, 0, 4096);
	return UVM_BYPASS;
}

static int iter_level3(void *arg, struct uvm *u, const struct uvm_iter_call *c)
{
	(void)arg;
	if (c->level != 3)
		return UVM_DEFAULT;
	uvm_set_prefetch_region(u, c->first, c->outer);
	return UVM_BYPASS;
}

static int enter_loop(void *arg, struct uvm *u, const struct uvm_prefetch_call *c)
{
	(void)arg, (void)u, (void)c;
	return UVM_ENTER_LOOP;
}

static void hooks(void)
{
	/* new chunks to the head: the newest is evicted first (MRU-like) */
	struct uvm_policy p = { .activate = act_head };
	struct uvm *u = uvm_new(4 * MB, &p);
	uvm_alloc(u, 1, BASE, 8 * MB);
	touch(u, BLK(0));
	touch(u, BLK(1));
	touch(u, BLK(2)); /* evicts B, not A */
	uint32_t l[4];
	int n = uvm_list_chunks(u, UVM_LIST_USED, l, 4);
	EQ("used", n, 2);
	EQ("C at head", uvm_chunk_block(u, l[0]), BLK(2) >> 21);
	EQ("A kept", uvm_chunk_block(u, l[1]), BLK(0) >> 21);
	EQ("hook calls", uvm_stats(u)->hook_calls, 3);
	uvm_free(u);

	struct uvm_policy w = { .prefetch = whole_block };
	u = uvm_new(64 * MB, &w);
	uvm_alloc(u, 1, BASE, 4 * MB);
	touch(u, BASE + 5 * 4096);
	EQ("whole block: faults", uvm_stats(u)->faults, 1);
	EQ("whole block: prefetched", uvm_stats(u)->prefetched_pages, 511);
	uvm_free(u);

	struct uvm_policy b = { .prefetch = bad_region };
	u = uvm_new(64 * MB, &b);
	touch(u, BASE);
	EQ("bad region: error", uvm_stats(u)->policy_errors, 1);
	EQ("bad region: page only", uvm_stats(u)->htod_bytes, 4096);
	uvm_free(u);

	struct uvm_policy it = { .prefetch = enter_loop, .prefetch_iter = iter_level3 };
	u = uvm_new(64 * MB, &it);
	touch(u, BASE + 13 * 4096); /* level 3: pages 8..15 */
	EQ("iter: prefetched", uvm_stats(u)->prefetched_pages, 7);
	EQ("iter: calls", uvm_stats(u)->hook_calls, 1 + 9);
	uvm_free(u);

	/* moving a chunk that is not on a list is refused */
	u = uvm_new(4 * MB, NULL);
	EQ("move free chunk", uvm_move_head(u, 0), 0);
	EQ("move out of range", uvm_move_tail(u, 99), 0);
	EQ("errors", uvm_stats(u)->policy_errors, 2);
	uvm_free(u);
}

/* ---- workloads ---- */

static void count_events(const char *spec, uint64_t *allocs, uint64_t *acc, uint64_t *launches)
{
	char err[256];
	struct workload *w;
	*allocs = *acc = *launches = 0;
	if (workload_open(spec, &w, err, sizeof(err))) {
		fprintf(stderr, "FAIL %s: %s\n", spec, err);
		failed = 1;
		return;
	}
	struct wl_event ev;
	while (workload_next(w, &ev) > 0)
		*(ev.kind == WL_ALLOC ? allocs : ev.kind == WL_ACCESS ? acc : launches) += 1;
	workload_close(w);
}

static void generators(void)
{
	uint64_t a, x, l;
	count_events("seq:size=8m,chunk=4m,passes=1", &a, &x, &l);
	EQ("seq allocs", a, 1);
	EQ("seq accesses", x, 2048);
	EQ("seq launches", l, 2);
	count_events("stride:size=8m,chunk=4m,stride=8,passes=2", &a, &x, &l);
	EQ("stride accesses", x, 2 * 256);
	EQ("stride launches", l, 4);
	count_events("random:size=8m,touches=1000,batch=300", &a, &x, &l);
	EQ("random accesses", x, 2 * 1000);
	EQ("random launches", l, 2 * 4);
	count_events("layers:size=8m,layers=4,passes=3", &a, &x, &l);
	EQ("layers allocs", a, 4);
	EQ("layers accesses", x, 3 * 2048);
	count_events("mix:size=8m,chunk=2m,passes=1", &a, &x, &l);
	EQ("mix allocs", a, 2);
	EQ("mix launches", l, 4);
	char err[256];
	struct workload *w;
	EQ("unknown", workload_open("zipf", &w, err, sizeof(err)), (unsigned long long)-1);
	EQ("bad key", workload_open("seq:sise=1g", &w, err, sizeof(err)), (unsigned long long)-1);
	EQ("bad value", workload_open("seq:size=lots", &w, err, sizeof(err)), (unsigned long long)-1);
}

static char *write_tmp(const char *text)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/gpux_sim_test_XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		failed = 1;
		return path;
	}
	close(fd);
	return path;
}

static void traces(void)
{
	char spec[128], err[256];
	uint64_t a, x, l;
	char *p = write_tmp("# two tenants\nN 7 llama\nA 7 0x7f0000000000 8388608\n"
			    "T 7 0x7f0000000000 16384\nL\nT 9 0x7f0000001000\n"
			    "@touch[4177920, 3]: 900\n@touch[4177921, 2]: 100\n");
	snprintf(spec, sizeof(spec), "trace:%s,gpu=4m", p);
	count_events(spec, &a, &x, &l);
	EQ("trace allocs", a, 1);
	EQ("trace accesses", x, 4 + 1 + 2 * 512);
	EQ("trace launches", l, 1 + 2);
	struct workload *w;
	EQ("trace opens", workload_open(spec, &w, err, sizeof(err)), 0);
	EQ("trace gpu", workload_gpu_bytes(w), 4 * MB);
	struct wl_event ev;
	while (workload_next(w, &ev) > 0)
		;
	const struct wl_tenant *t;
	EQ("tenants (7, 9, and 1 of the keys without a pid)", workload_tenants(w, &t), 3);
	EQ("named", strcmp(t[0].comm, "llama"), 0);
	workload_close(w);
	unlink(p);

	p = write_tmp("A 1 0x1000 4096\nQ what\n");
	snprintf(spec, sizeof(spec), "trace:%s", p);
	EQ("bad trace opens", workload_open(spec, &w, err, sizeof(err)), 0);
	int r;
	while ((r = workload_next(w, &ev)) > 0)
		;
	EQ("bad trace fails", r, (unsigned long long)-1);
	EQ("says the line", strncmp(workload_error(w), "line 2:", 7), 0);
	workload_close(w);
	unlink(p);

	p = write_tmp("time_ms,hook_type,pid,owner_pid,va_space,cpu,chunk_addr,list_addr,"
		      "va_block,va_start,va_end,va_page_index\n"
		      "0,ACTIVATE,158056,158040,0xa,18,0xb,0xc,0xd,0x733f13800000,0x733f139fffff,0\n"
		      "1,EVICTION_PREPARE,158056,,,18,0xb,0xc,,,,0\n");
	snprintf(spec, sizeof(spec), "chunk_trace:%s", p);
	count_events(spec, &a, &x, &l);
	EQ("csv accesses", x, 512);
	EQ("csv launches", l, 1);
	unlink(p);
	EQ("missing file", workload_open("trace:/nonexistent/x", &w, err, sizeof(err)),
	   (unsigned long long)-1);
}

/* ---- scheduling ---- */

static void long_slice(void *arg, struct sched *s, struct sched_tsg *t)
{
	(void)arg;
	if (t->tenant == 1)
		sched_set_timeslice(s, 2048);
}

static void reject_two(void *arg, struct sched *s, struct sched_tsg *t)
{
	(void)arg;
	if (t->tenant == 2)
		sched_reject_bind(s);
}

static void scheduling(void)
{
	uint32_t pids[2] = { 1, 2 };
	uint64_t work[2] = { 10000, 10000 };
	struct sched_result r;
	sched_run(pids, work, 2, NULL, &r);
	/* 10 slices each, alternating: 20 switches of 25 us */
	EQ("makespan", r.makespan_us, 20000 + 20 * 25);
	EQ("A finish", r.tsg[0].finish_us, 9 * 1024 * 2 + 19 * 25 + 784);
	struct sched_policy p = { .task_init = long_slice };
	sched_run(pids, work, 2, &p, &r);
	EQ("A timeslice", r.tsg[0].timeslice_us, 2048);
	EQ("A finish (long)", r.tsg[0].finish_us, 10000 + 4 * 1024 + 9 * 25);
	EQ("makespan (long)", r.makespan_us, 20000 + 10 * 25);
	struct sched_policy q = { .bind = reject_two };
	sched_run(pids, work, 2, &q, &r);
	EQ("rejected", r.tsg[1].rejected, 1);
	EQ("never ran", r.tsg[1].finish_us, 0);
	EQ("makespan alone", r.makespan_us, 10000 + 25);
	/* the kfuncs outside their hooks are refused */
	struct sched_policy bad = { .task_init = reject_two };
	sched_run(pids, work, 2, &bad, &r);
	EQ("reject in init refused", r.policy_errors, 1);
}

int main(void)
{
	lru_eviction();
	prefetch_threshold();
	hooks();
	generators();
	traces();
	scheduling();
	if (!failed)
		puts("ok");
	return failed;
}
