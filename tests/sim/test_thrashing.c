/* The UVM model's thrashing detection (sim/thrashing.h) on small cases,
 * by exact counts: one page moved back and forth between the GPU and
 * the CPU is found thrashing at its third migration in a row within the
 * lapse, throttled, then pinned in host memory where the GPU maps it
 * remotely (nothing migrates while pinned), until the pin ends; a
 * GPU-only workload never thrashes, however much it evicts (the driver
 * needs two processors); the parameters are overridable, in the API and
 * in workload specs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uvm.h"
#include "workload.h"

#include "sim_check.h"
#define PAGE BASE /* the page moved back and forth */

static struct uvm *model(const struct uvm_params *p)
{
	struct uvm *u = uvm_new(64 * MB, NULL);
	if (!u) {
		fputs("FAIL: out of memory\n", stderr);
		exit(1);
	}
	if (p)
		EQ("params accepted", uvm_set_params(u, p), 0);
	uvm_alloc(u, 1, BASE, 32 * MB);
	return u;
}

static void gpu(struct uvm *u, uint64_t va)
{
	uvm_access(u, 1, va);
	uvm_launch_end(u);
}

/* n trips of PAGE, the GPU first: GPU, CPU, GPU, ... */
static void ping_pong(struct uvm *u, int n)
{
	for (int i = 0; i < n; i++) {
		if (i % 2 == 0)
			gpu(u, PAGE);
		else
			uvm_cpu_access(u, 1, PAGE);
	}
}

/* Tracking starts at the block's first move between processors (trip
 * 2, GPU -> CPU); trips 3, 4, 5 come within 500 us of the one before:
 * the third of them marks the page thrashing. */
static void third_trip(void)
{
	struct uvm *u = model(NULL);
	const struct uvm_stats *s = uvm_stats(u);
	ping_pong(u, 4);
	EQ("not yet", s->thrashing, 0);
	ping_pong(u, 0);
	gpu(u, PAGE); /* trip 5 */
	EQ("thrashing", s->thrashing, 1);
	EQ("no throttle yet", s->thrashing_throttles, 0);
	EQ("no pin yet", s->thrashing_pins, 0);
	/* every trip migrated: 64 KiB first (its big page), 4 KiB after */
	EQ("htod", s->htod_bytes, 65536 + 2 * 4096);
	EQ("dtoh", s->dtoh_bytes, 2 * 4096);
	uvm_free(u);
}

/* The defaults: each thrashing round ends in a throttle that outlasts
 * the lapse (nap = lapse), which resets the page; the throttles add up
 * and the tenth pins the page in host memory (at trip 32, the CPU's).
 * Then the GPU maps it remotely: no fault, no migration, no eviction
 * traffic, whichever side touches it. */
static void default_pin(void)
{
	struct uvm *u = model(NULL);
	const struct uvm_stats *s = uvm_stats(u);
	ping_pong(u, 31);
	EQ("not pinned at trip 31", s->thrashing_pins, 0);
	ping_pong(u, 0);
	uvm_cpu_access(u, 1, PAGE); /* trip 32 */
	EQ("pinned", s->thrashing_pins, 1);
	EQ("throttles", s->thrashing_throttles, 10);
	EQ("thrashing rounds", s->thrashing, 5);
	EQ("remote map", s->remote_maps, 1);
	EQ("gpu faults", s->faults, 16);
	EQ("cpu faults", s->cpu_faults, 16);
	EQ("htod", s->htod_bytes, 65536 + 15 * 4096);
	EQ("dtoh", s->dtoh_bytes, 16 * 4096);
	struct uvm_stats before = *s;
	ping_pong(u, 40);
	EQ("pinned: no gpu fault", s->faults, before.faults);
	EQ("pinned: no cpu fault", s->cpu_faults, before.cpu_faults);
	EQ("pinned: no htod", s->htod_bytes, before.htod_bytes);
	EQ("pinned: no dtoh", s->dtoh_bytes, before.dtoh_bytes);
	uvm_free(u);
}

/* pin_threshold 1: the first throttle is enough. The GPU, next to keep
 * the page, pins it on itself (trip 7 migrates as usual); the CPU then
 * cannot map the GPU's memory, waits its nap and re-pins it in host
 * memory (trip 8, after its 500 us nap), where the GPU maps it. With
 * thrashing_pin 2 (x 500 us) the pin ends 1 ms after it began (trip
 * 7; a move keeps the deadline): the GPU faults on it again and it
 * migrates. */
static void pin_expires(void)
{
	struct uvm_params p;
	uvm_params_default(&p);
	p.thrashing_pin_threshold = 1;
	p.thrashing_pin = 2;
	struct uvm *u = model(&p);
	const struct uvm_stats *s = uvm_stats(u);
	ping_pong(u, 7);
	EQ("pinned on the gpu", s->thrashing_pins, 1);
	EQ("not remote", s->remote_maps, 0);
	EQ("htod", s->htod_bytes, 65536 + 3 * 4096);
	uvm_cpu_access(u, 1, PAGE);
	EQ("re-pinned: still one pin", s->thrashing_pins, 1);
	EQ("remote", s->remote_maps, 1);
	EQ("dtoh", s->dtoh_bytes, 4 * 4096);
	/* time passes: faults in other blocks, ~152 us each; the pin
	 * began ~500 us before trip 8 ended */
	uint64_t elsewhere = BASE + 2 * MB;
	for (int i = 0; i < 2; i++)
		gpu(u, elsewhere + (uint64_t)i * 2 * MB);
	uint64_t faults = s->faults, htod = s->htod_bytes;
	gpu(u, PAGE);
	EQ("0.8 ms: still remote", s->faults, faults);
	for (int i = 2; i < 4; i++)
		gpu(u, elsewhere + (uint64_t)i * 2 * MB);
	faults = s->faults;
	htod = s->htod_bytes;
	gpu(u, PAGE);
	EQ("1.1 ms: faults", s->faults, faults + 1);
	EQ("1.1 ms: migrates", s->htod_bytes, htod + 4096);
	EQ("no new pin", s->thrashing_pins, 1);
	uvm_free(u);
}

/* The threshold and the switch are the driver's parameters. */
static void overrides(void)
{
	struct uvm_params p;
	uvm_params_default(&p);
	p.thrashing_threshold = 5;
	struct uvm *u = model(&p);
	ping_pong(u, 6);
	EQ("threshold 5: not at trip 6", uvm_stats(u)->thrashing, 0);
	ping_pong(u, 0);
	gpu(u, PAGE); /* trip 7: the fifth event */
	EQ("threshold 5: trip 7", uvm_stats(u)->thrashing, 1);
	uvm_free(u);

	uvm_params_default(&p);
	p.thrashing_enable = 0;
	u = model(&p);
	ping_pong(u, 60);
	EQ("disabled: thrashing", uvm_stats(u)->thrashing, 0);
	EQ("disabled: every trip moves", uvm_stats(u)->cpu_faults, 30);
	EQ("disabled: dtoh", uvm_stats(u)->dtoh_bytes, 30 * 4096);
	uvm_free(u);

	/* out of the driver's range: refused, nothing changed */
	uvm_params_default(&p);
	p.thrashing_threshold = 8;
	u = uvm_new(64 * MB, NULL);
	EQ("threshold 8 refused", uvm_set_params(u, &p), (unsigned long long)-1);
	p.thrashing_threshold = 3;
	p.thrashing_nap = 0;
	EQ("nap 0 refused", uvm_set_params(u, &p), (unsigned long long)-1);
	uvm_free(u);
}

/* Three blocks through two chunks, five passes: every pass evicts and
 * refaults every block, the same processor each time. The driver never
 * tracks such a block, even with a lapse longer than the run. */
static void gpu_only(void)
{
	struct uvm_params p;
	uvm_params_default(&p);
	p.thrashing_lapse_usec = 1000000000;
	struct uvm *u = uvm_new(4 * MB, NULL);
	EQ("params", uvm_set_params(u, &p), 0);
	uvm_alloc(u, 1, BASE, 6 * MB);
	for (int pass = 0; pass < 5; pass++)
		for (int b = 0; b < 3; b++)
			gpu(u, BASE + (uint64_t)b * 2 * MB);
	EQ("evictions", uvm_stats(u)->evictions, 13);
	EQ("refaults", uvm_stats(u)->refaults, 12);
	EQ("thrashing", uvm_stats(u)->thrashing, 0);
	EQ("remote", uvm_stats(u)->remote_maps, 0);
	uvm_free(u);
}

/* Workload specs take the parameters by the driver's names. */
static void spec_keys(void)
{
	char err[256];
	struct workload *w;
	EQ("opens", workload_open("seq:size=8m,thrashing_threshold=5,thrashing_pin=0,"
				  "thrashing_lapse_usec=1000", &w, err, sizeof(err)), 0);
	const struct uvm_params *p = workload_uvm_params(w);
	EQ("threshold", p->thrashing_threshold, 5);
	EQ("pin", p->thrashing_pin, 0);
	EQ("lapse", p->thrashing_lapse_usec, 1000);
	EQ("epoch default", p->thrashing_epoch, 2000);
	EQ("pin threshold default", p->thrashing_pin_threshold, 10);
	workload_close(w);
	EQ("threshold 8", workload_open("seq:thrashing_threshold=8", &w, err, sizeof(err)),
	   (unsigned long long)-1);
	EQ("says the range", !strstr(err, "out of the driver's range"), 0);
	EQ("unknown", workload_open("seq:thrashing_foo=1", &w, err, sizeof(err)),
	   (unsigned long long)-1);
	EQ("trace key", workload_open("trace:/nonexistent,thrashing_nap=0", &w, err, sizeof(err)),
	   (unsigned long long)-1);
	EQ("trace says the key", !strstr(err, "thrashing_nap=0"), 0);
}

int main(void)
{
	third_trip();
	default_pin();
	pin_expires();
	overrides();
	gpu_only();
	spec_keys();
	if (!failed)
		puts("ok");
	return failed;
}
