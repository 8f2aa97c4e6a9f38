/* The device's nsecs on the host's clock. The two clocks tick at rates
 * a few parts per million apart (8 us a second on an H100:
 * bench/gpu/README.md, "Clock drift"), so an offset taken once is wrong
 * by more than a launch's latency within a second. The runtime measures
 * the offset by a handshake with gpux_clock_sample (helpers.cu), again
 * at growing intervals to learn the rate, and gives every module both
 * (struct gpux_clock, gpux_dev.h): the device corrects each reading, so
 * a module's words change only when a sample is taken. Called with
 * rt_lock held. */
#include "rt_ctx_priv.h"

#include <sched.h>

#include "gpux_dev.h"

#define RECAL_FIRST_NS 250000000ull  /* the second sample, after the first */
#define RECAL_MAX_NS 4000000000ull   /* the longest wait between samples */
#define RATE_MAX 1e-3                /* a larger rate is a bad sample */
#define ANSWER_WAIT_NS 200000ull     /* a running sampler answers within this */
#define EXCHANGE_MIN_NS 4000ull      /* trusted: up to twice the first exchange, or this */
#define EXCHANGE_MAX_NS 256000ull    /* ... doubling after REJECTS refusals, up to this */
#define REJECTS 2
#define ANCHOR_NS 16000000000ull     /* the rate over at most this long */

static bool wait_flag(volatile uint64_t *f, uint64_t ns)
{
	uint64_t end = rt_now_ns() + ns;
	while (!__atomic_load_n(f, __ATOMIC_ACQUIRE)) {
		if (rt_now_ns() > end)
			return false;
		sched_yield(); /* the CPU to whoever has use for it */
	}
	return true;
}

static volatile uint64_t *words(struct rt_ctx *x)
{
	return (volatile uint64_t *)(x->host + H_CLOCK);
}

/* gpux_clock_sample launched on st with its words cleared. */
static bool launch_sampler(struct rt_ctx *x, CUfunction f, CUstream st)
{
	CUdeviceptr out = x->host_dev + H_CLOCK;
	void *args[] = { &out };
	for (int k = 0; k < GPUX_CLOCK_WORDS; k++)
		words(x)[k] = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return rt_cu.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, st, args, NULL) == CUDA_SUCCESS;
}

/* The go to a running sampler, and its answer: the go crosses the bus
 * one way, the device's second stamp the other, so the mean of the two
 * differences loses both delays (to within their difference, well under
 * a microsecond). Returns the exchange's length, or 0 when no stamps
 * came within ANSWER_WAIT_NS (a sampler that had given up waiting sets
 * DONE without them). */
static uint64_t handshake(struct rt_ctx *x, int64_t *off, uint64_t *at)
{
	volatile uint64_t *m = words(x);
	uint64_t h0 = rt_now_ns();
	__atomic_store_n(&m[GPUX_CLOCK_GO], 1, __ATOMIC_SEQ_CST);
	bool ok = wait_flag(&m[GPUX_CLOCK_DONE], ANSWER_WAIT_NS);
	uint64_t h1 = rt_now_ns();
	if (!ok || !m[GPUX_CLOCK_SEEN] || !m[GPUX_CLOCK_STAMP])
		return 0;
	int64_t d1 = (int64_t)(m[GPUX_CLOCK_SEEN] - h0), d2 = (int64_t)(m[GPUX_CLOCK_STAMP] - h1);
	*off = d1 + (d2 - d1) / 2;
	*at = h0 + (h1 - h0) / 2;
	return h1 - h0 ? h1 - h0 : 1;
}

/* The top word of the signed 128-bit product a * k, a below 2^63: what
 * the device's mul.hi.s64 gives (the floor of a * k / 2^64). */
static int64_t mulhi(uint64_t a, int64_t k)
{
	uint64_t m = k < 0 ? 0 - (uint64_t)k : (uint64_t)k;
	uint64_t al = a & 0xffffffffu, ah = a >> 32, ml = m & 0xffffffffu, mh = m >> 32;
	uint64_t ll = al * ml, lh = al * mh, hl = ah * ml, hh = ah * mh;
	uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
	uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
	uint64_t lo = (mid << 32) | (ll & 0xffffffffu);
	if (k >= 0)
		return (int64_t)hi;
	return -(int64_t)hi - (lo != 0);
}

/* A new measured offset. The rate is taken against an older sample, the
 * anchor, so that the exchanges' error (a fraction of a microsecond) is
 * small against the time between them; the anchor moves up once it is
 * ANCHOR_NS old, so the rate follows a host clock that NTP slews. */
static void take(struct rt_ctx *x, int64_t off, uint64_t at)
{
	struct rt_clock *c = &x->clk;
	if (!c->samples) {
		c->anchor_off = off;
		c->anchor_at = at;
	} else {
		if (at - c->anchor_at > ANCHOR_NS) {
			c->anchor_off = c->off;
			c->anchor_at = c->at;
		}
		double rate = (double)(off - c->anchor_off) / (double)(at - c->anchor_at);
		c->rate = rate > RATE_MAX ? RATE_MAX : rate < -RATE_MAX ? -RATE_MAX : rate;
	}
	c->off = off;
	c->at = at;
	c->samples++;
	uint64_t wait = RECAL_FIRST_NS << (c->samples - 1 < 5 ? c->samples - 1 : 5);
	c->next = at + (wait < RECAL_MAX_NS ? wait : RECAL_MAX_NS);
	/* g - base - mulhi(g, rate) is at when g is the device's time then */
	int64_t k = (int64_t)(c->rate * 18446744073709551616.0);
	x->clock = (struct gpux_clock){ .base = off - mulhi(at + (uint64_t)off, k), .rate = k };
}

/* The first offset, before the context's first module is set up: the
 * best of three exchanges, each wait bounded (a busy GPU leaves the
 * clock for a later module). */
void rt_clock_calibrate(struct rt_ctx *x, CUfunction f)
{
	if (!(rt_sess()->flags & GPUX_SESS_CLOCK)) {
		x->clock_done = true; /* nothing reads the clock: no launch of ours */
		return;
	}
	uint64_t best = UINT64_MAX, at = 0, t;
	int64_t off = 0, o;
	for (int i = 0; i < 3; i++) {
		if (!launch_sampler(x, f, x->stream))
			return;
		uint64_t len = wait_flag(&words(x)[GPUX_CLOCK_RUNNING], 100000000ull)
				       ? handshake(x, &o, &t) : 0;
		/* a sampler that never ran finishes at once when it does */
		__atomic_store_n(&words(x)[GPUX_CLOCK_GO], 1, __ATOMIC_SEQ_CST);
		if (rt_cu.StreamSynchronize(x->stream))
			return;
		if (len && len < best) {
			best = len;
			off = o;
			at = t;
		}
	}
	x->clock_done = best != UINT64_MAX;
	if (x->clock_done) {
		take(x, off, at); /* each module's setup writes it */
		x->clk.trust = 2 * best > EXCHANGE_MIN_NS ? 2 * best : EXCHANGE_MIN_NS;
	}
}

/* The sampling kernel, from any module or library of the context. */
static bool sampler(struct rt_ctx *x, CUfunction *f)
{
	for (int i = 0; i < x->nmods; i++)
		if (rt_cu.ModuleGetFunction(f, x->mods[i], GPUX_SYM_CLOCK_SAMPLE) == CUDA_SUCCESS)
			return true;
	CUkernel k;
	for (int i = 0; i < x->nlibs; i++)
		if (rt_cu.LibraryGetKernel(&k, x->libs[i], GPUX_SYM_CLOCK_SAMPLE) == CUDA_SUCCESS &&
		    rt_cu.KernelGetFunction(f, k) == CUDA_SUCCESS)
			return true;
	*f = x->sass_sampler;
	return *f != NULL;
}

/* Every module's clock set to x->clock. */
static void push(struct rt_ctx *x)
{
	int n = rt_ctx_units(x);
	for (int i = 0; i < n; i++) {
		CUdeviceptr d;
		size_t sz;
		/* pageable source: the call returns once it is staged */
		if (rt_ctx_global(x, i, GPUX_SYM_CLOCK_OFF, &d, &sz) == CUDA_SUCCESS &&
		    sz == sizeof(x->clock))
			rt_cu.MemcpyHtoDAsync(d, &x->clock, sizeof(x->clock), x->stream);
	}
}

/* Called at each turn of the runtime's loop, which never waits for the
 * GPU here: a sample when one is due is a sampler launched on a stream
 * of its own (a full GPU may run it late, and must not hold up the
 * snapshots' copies), and at a later turn, once it runs, the handshake;
 * then every module is given the new clock. */
void rt_clock_poll(struct rt_ctx *x)
{
	struct rt_clock *c = &x->clk;
	if (!x->clock_done || !c->samples)
		return;
	uint64_t now = rt_now_ns();
	if (c->launched && !__atomic_load_n(&words(x)[GPUX_CLOCK_RUNNING], __ATOMIC_ACQUIRE))
		return; /* not started yet */
	if (!c->launched && now < c->next)
		return;
	CUcontext prev = NULL;
	rt_cu.CtxGetCurrent(&prev);
	if (rt_cu.CtxSetCurrent(x->ctx) != CUDA_SUCCESS)
		return;
	if (c->launched) {
		c->launched = false;
		int64_t off;
		uint64_t at, len = handshake(x, &off, &at);
		if (len && len <= c->trust) {
			take(x, off, at);
			push(x);
			c->rejects = 0;
		} else {
			/* a host slower to answer than the first exchange: an
			 * error of half the exchange beats none */
			if (len && ++c->rejects >= REJECTS && c->trust < EXCHANGE_MAX_NS) {
				c->trust *= 2;
				c->rejects = 0;
			}
			c->next = now + RECAL_FIRST_NS / 4;
		}
	} else {
		if (!c->stream &&
		    rt_cu.StreamCreate(&c->stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
			c->stream = NULL;
		CUfunction f;
		c->launched = c->stream && sampler(x, &f) && launch_sampler(x, f, c->stream);
		if (!c->launched)
			c->next = now + RECAL_FIRST_NS / 4;
	}
	rt_cu.CtxSetCurrent(prev);
}
