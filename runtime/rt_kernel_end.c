/* cuda:kernel_end: each launch the program makes through the hooked
 * launch entry points (not graph launches, not launches into a stream
 * being captured) gets a CUDA event recorded on its stream before and
 * after it; once the end event is done, the launch's programs run with
 * its GPU start and end time. A live session times every launch the
 * same way for the REPL's :top (rt_live_timed).
 *
 * Launches wait in one bounded list (GPUX_CEV_KEND_PENDING entries per
 * process: a program that runs further ahead of its GPU has its later
 * launches counted as dropped, never delayed). The runtime thread polls
 * the list every millisecond with cuEventQuery, never waiting; a
 * synchronize of the program's delivers what it waited for before
 * returning, and a context's end and the process's exit synchronise the
 * context and deliver everything (an event the driver refuses then is
 * counted lost: never a hang). Events come from a per-context pool and
 * go back to it: none is created per launch in steady state; the pool
 * and the context's own stream are destroyed before the context is.
 *
 * Times: cuEventElapsedTime gives float milliseconds between two events
 * of a context. Each context keeps an anchor, an event recorded on a
 * non-blocking stream of the runtime's own, with CLOCK_MONOTONIC read
 * when the record returns (the GPU stamps it a few microseconds later at
 * most, its stream being idle); end = anchor + elapsed(anchor, end
 * event), start = end - elapsed(start event, end event). The anchor is
 * recorded again every second, so the float (24-bit mantissa) spans at
 * most about two seconds: ~0.1 us of rounding. */
#include "rt_hooks.h"
#include "rt_host_priv.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KCTX 16                   /* contexts timed at once */
#define ANCHOR_NS 1000000000ull   /* re-anchor period */
#define BLOCKED 32                /* streams found busy in one pass */

enum { P_OPEN = 1, P_READY, P_VOID }; /* recording; both recorded; launch failed */

struct pend {
	int next;  /* in its list; -1 ends */
	int state; /* P_*, atomic */
	int kx;    /* its context in kctx[] */
	CUevent ev[2]; /* start, end */
	CUstream s;    /* where they are recorded */
	CUstream shown; /* the stream as the program passed it */
	struct rt_kname name;
	uint32_t grid[3], block[3], shmem;
	bool cev;  /* cuda:kernel_end programs run for it (else only :top's time) */
};

struct kctx {
	CUcontext ctx;         /* NULL: a free entry (atomic) */
	int dev;               /* its device's ordinal */
	CUstream stream;       /* the anchors' */
	CUevent anc[2];
	uint64_t anc_ns[2];
	int cur, rec;          /* the anchor in use, the one recorded and not yet done (-1) */
	uint64_t rec_ns, req_ns; /* host time of that record; of the last re-anchor */
	CUevent *pool;         /* free events (under qlock) */
	unsigned npool, cap;
	unsigned nev;          /* events of this pool, all told */
};

/* qlock: the shared list, the free entries, the event pools; plock:
 * one pass at a time, and the poller's own list (mine). */
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t plock = PTHREAD_MUTEX_INITIALIZER;
static struct pend *ent;  /* GPUX_CEV_KEND_PENDING, allocated at first use */
static int free_head = -1, q_head = -1, q_tail = -1, m_head = -1, m_tail = -1;
static int inflight;      /* entries in use (atomic) */
static struct kctx kctx[KCTX];
static int closed;        /* after the final delivery: nothing more recorded */
static int state;         /* 0 unknown, 1 usable, -1 not (driver too old, no memory) */
static uint64_t n_done, n_drops, n_lost;

static bool usable(void)
{
	int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
	if (s)
		return s > 0;
	pthread_mutex_lock(&qlock);
	if (!state) {
		bool drv = rt_cu_ready() && rt_cu.EventCreate && rt_cu.EventRecord &&
			   rt_cu.EventQuery && rt_cu.EventElapsedTime && rt_cu.EventDestroy &&
			   rt_cu.StreamIsCapturing;
		if (!drv)
			rt_warn(rt_live_top() ? "libcuda lacks the event functions that time launches; "
					    ":top shows no GPU time"
					  : "cuda:kernel_end: libcuda lacks the event functions it "
					    "needs; it never fires");
		else if (!(ent = calloc(GPUX_CEV_KEND_PENDING, sizeof(*ent))))
			rt_warn("cuda:kernel_end: out of memory; it never fires");
		for (int i = 0; ent && i < GPUX_CEV_KEND_PENDING; i++)
			ent[i].next = i + 1 < GPUX_CEV_KEND_PENDING ? i + 1 : -1;
		free_head = ent ? 0 : -1;
		__atomic_store_n(&state, ent ? 1 : -1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&qlock);
	return state > 0;
}

static uint64_t c_done, c_drops; /* CUPTI's (rt_cupti.c) */

/* What the controller reports at exit (abi/session.h). */
static void publish(void)
{
	struct gpux_sess_host *r = rt_h.region;
	if (!r)
		return;
	__atomic_store_n(&r->kend_done,
			 __atomic_load_n(&n_done, __ATOMIC_RELAXED) +
				 __atomic_load_n(&c_done, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&r->kend_drops,
			 __atomic_load_n(&n_drops, __ATOMIC_RELAXED) +
				 __atomic_load_n(&c_drops, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&r->kend_lost, __atomic_load_n(&n_lost, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

/* ---------------- contexts (under qlock) ---------------- */

/* Records anchor i of x on x's stream (x's context current). */
static void anchor(struct kctx *x, int i)
{
	x->req_ns = rt_now_ns();
	if (rt_cu.EventRecord(x->anc[i], x->stream) != CUDA_SUCCESS)
		return;
	x->rec = i;
	x->rec_ns = rt_now_ns();
}

static struct kctx *ctx_of(CUcontext c)
{
	for (int i = 0; i < KCTX; i++)
		if (__atomic_load_n(&kctx[i].ctx, __ATOMIC_ACQUIRE) == c)
			return &kctx[i];
	return NULL;
}

/* The pool of the current context c, made on its first timed launch:
 * in relaxed capture mode, as another thread may be capturing. */
static struct kctx *ctx_make(CUcontext c)
{
	static bool told;
	struct kctx *x = ctx_of(c);
	for (int i = 0; !x && i < KCTX; i++)
		if (!kctx[i].ctx)
			x = &kctx[i];
	if (!x && !told) {
		told = true;
		rt_warn("cuda:kernel_end: more than %d CUDA contexts; the kernels of the others "
			"are not timed", KCTX);
	}
	if (!x || x->ctx)
		return x;
	memset(x, 0, sizeof(*x));
	x->cur = x->rec = -1;
	CUdevice dev = 0;
	if (rt_cu.CtxGetDevice && rt_cu.CtxGetDevice(&dev) == CUDA_SUCCESS)
		x->dev = (int)dev;
	rt_sess_gpu_name(x->dev); /* for timelines' GPU tracks */
	CUstreamCaptureMode m = rt_relaxed_begin();
	bool ok = rt_cu.StreamCreate(&x->stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS;
	ok = ok && rt_cu.EventCreate(&x->anc[0], CU_EVENT_DEFAULT) == CUDA_SUCCESS;
	ok = ok && rt_cu.EventCreate(&x->anc[1], CU_EVENT_DEFAULT) == CUDA_SUCCESS;
	if (ok)
		anchor(x, 0);
	rt_relaxed_end(m);
	if (!ok || x->rec < 0) {
		for (int i = 0; i < 2; i++)
			if (x->anc[i])
				rt_cu.EventDestroy(x->anc[i]);
		if (x->stream)
			rt_cu.StreamDestroy(x->stream);
		rt_warn("cuda:kernel_end: cannot set up its events in a context; its kernels are "
			"not timed");
		return NULL;
	}
	__atomic_store_n(&x->ctx, c, __ATOMIC_RELEASE);
	return x;
}

/* Two events of x's pool (x's context current). */
static bool take_events(struct kctx *x, CUevent ev[2])
{
	for (int k = 0; k < 2; k++) {
		if (x->npool) {
			ev[k] = x->pool[--x->npool];
			continue;
		}
		if (x->nev >= x->cap) { /* the pool holds every event when all are back */
			unsigned cap = x->cap ? 2 * x->cap : 64;
			CUevent *p = realloc(x->pool, cap * sizeof(*p));
			if (!p)
				goto fail;
			x->pool = p;
			x->cap = cap;
		}
		if (rt_cu.EventCreate(&ev[k], CU_EVENT_DEFAULT) != CUDA_SUCCESS)
			goto fail;
		x->nev++;
		continue;
fail:
		if (k)
			x->pool[x->npool++] = ev[0];
		return false;
	}
	return true;
}

/* Entry i back to the free list, its events to their pool. */
static void release(int i)
{
	struct pend *e = &ent[i];
	struct kctx *x = &kctx[e->kx];
	for (int k = 0; k < 2; k++)
		if (x->npool < x->cap)
			x->pool[x->npool++] = e->ev[k];
	__atomic_store_n(&e->state, 0, __ATOMIC_RELAXED);
	e->next = free_head;
	free_head = i;
	__atomic_sub_fetch(&inflight, 1, __ATOMIC_RELEASE);
}

/* ---------------- the launch path ---------------- */

int rt_kend_before(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		   unsigned by, unsigned bz, unsigned shmem, CUstream s, bool per_thread)
{
	/* the first event tells what the session wants; a live session
	 * times every launch for :top */
	bool cev = rt_cev_ready() && rt_cev_on(GPUX_CEV_KERNEL_END);
	if ((!cev && !rt_live_top()) || __atomic_load_n(&closed, __ATOMIC_ACQUIRE) ||
	    rt_attach_binding())
		return -1;
	if (rt_cupti_on()) { /* the driver times it (rt_cupti.c) */
		rt_cupti_launch(s, per_thread);
		return -1;
	}
	if (!usable())
		return -1;
	CUstream shown = s;
	if (!s && per_thread)
		s = CU_STREAM_PER_THREAD;
	CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
	CUcontext c = NULL;
	if (rt_cu.StreamIsCapturing(s, &cs) != CUDA_SUCCESS || cs != CU_STREAM_CAPTURE_STATUS_NONE ||
	    rt_cu.CtxGetCurrent(&c) != CUDA_SUCCESS || !c)
		return -1;
	struct rt_kname name = rt_launch_name(f);
	pthread_mutex_lock(&qlock);
	struct kctx *x = ctx_make(c);
	int i = free_head;
	CUevent ev[2];
	if (!x || i < 0 || !take_events(x, ev)) {
		if (x) /* the list is full, or the driver made no event */
			__atomic_add_fetch(i < 0 ? &n_drops : &n_lost, 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&qlock);
		return -1;
	}
	struct pend *e = &ent[i];
	free_head = e->next;
	*e = (struct pend){ .next = -1, .state = P_OPEN, .kx = (int)(x - kctx),
			    .ev = { ev[0], ev[1] }, .s = s, .shown = shown, .name = name, .grid = { gx, gy, gz },
			    .block = { bx, by, bz }, .shmem = shmem, .cev = cev };
	if (q_tail >= 0)
		ent[q_tail].next = i;
	else
		q_head = i;
	q_tail = i;
	__atomic_add_fetch(&inflight, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&qlock);
	if (rt_cu.EventRecord(ev[0], s) != CUDA_SUCCESS) {
		__atomic_add_fetch(&n_lost, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&e->state, P_VOID, __ATOMIC_RELEASE);
		return -1;
	}
	return i;
}

void rt_kend_after(int i, CUresult rc)
{
	struct pend *e = &ent[i];
	bool ok = rc == CUDA_SUCCESS && rt_cu.EventRecord(e->ev[1], e->s) == CUDA_SUCCESS;
	if (rc == CUDA_SUCCESS && !ok)
		__atomic_add_fetch(&n_lost, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&e->state, ok ? P_READY : P_VOID, __ATOMIC_RELEASE);
}

/* ---------------- delivery (under plock) ---------------- */

static int64_t ns_of(float ms)
{
	double v = (double)ms * 1e6;
	return (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
}

/* The context whose events the calls below take: switched only when it
 * changes; the caller's is put back at the end of a pass. */
static bool enter(CUcontext c, CUcontext *now)
{
	if (*now == c)
		return true;
	if (rt_cu.CtxSetCurrent(c) != CUDA_SUCCESS)
		return false;
	*now = c;
	return true;
}

/* A finished anchor becomes the one in use; one is recorded anew every
 * ANCHOR_NS. */
static void keep_anchor(struct kctx *x, CUcontext *now)
{
	CUcontext c = __atomic_load_n(&x->ctx, __ATOMIC_ACQUIRE);
	bool due = x->rec < 0 && rt_now_ns() - x->req_ns >= ANCHOR_NS;
	if (!c || (x->rec < 0 && !due) || !enter(c, now))
		return;
	if (x->rec >= 0) {
		CUresult q = rt_cu.EventQuery(x->anc[x->rec]);
		if (q == CUDA_SUCCESS) {
			x->anc_ns[x->rec] = x->rec_ns;
			x->cur = x->rec;
			x->rec = -1;
		} else if (q != CUDA_ERROR_NOT_READY) {
			x->rec = -1; /* tried again at the next period */
		}
	}
	if (due)
		anchor(x, x->cur == 0 ? 1 : 0);
}

/* Runs the programs of a finished launch; false when the driver cannot
 * time it. */
static bool deliver(const struct pend *e, const struct kctx *x)
{
	float dur_ms, end_ms;
	if (rt_cu.EventElapsedTime(&dur_ms, e->ev[0], e->ev[1]) != CUDA_SUCCESS ||
	    (e->cev && rt_cu.EventElapsedTime(&end_ms, x->anc[x->cur], e->ev[1]) != CUDA_SUCCESS))
		return false;
	int64_t d = ns_of(dur_ms);
	if (rt_live_top())
		rt_live_timed(e->name.id, d > 0 ? (uint64_t)d : 0, x->dev);
	if (!e->cev) {
		__atomic_add_fetch(&n_done, 1, __ATOMIC_RELAXED);
		return true;
	}
	uint64_t end = (uint64_t)((int64_t)x->anc_ns[x->cur] + ns_of(end_ms));
	struct gpux_cev_kernel_end c = {
		.stream = (uint64_t)(uintptr_t)e->shown,
		.grid = { e->grid[0], e->grid[1], e->grid[2] },
		.block = { e->block[0], e->block[1], e->block[2] },
		.shmem = e->shmem,
		.end = end,
		.duration = d > 0 ? (uint64_t)d : 0,
		.kernel_id = e->name.id,
	};
	c.start = end - c.duration;
	memcpy(c.kernel, e->name.kernel, sizeof(c.kernel));
	rt_actions_event_gpu(x->dev);
	rt_cev_emit(GPUX_CEV_KERNEL_END, &c, sizeof c, e->name.ptx);
	rt_actions_event_gpu(-1);
	__atomic_add_fetch(&n_done, 1, __ATOMIC_RELAXED);
	return true;
}

struct busy {
	int n;
	struct { int kx; CUstream s; } v[BLOCKED];
};

/* Takes entry i (after last, before next) out of the runtime thread's
 * list. */
static void unlink_mine(int i, int last, int next)
{
	if (last >= 0)
		ent[last].next = next;
	else
		m_head = next;
	if (m_tail == i)
		m_tail = last;
}

static bool is_busy(const struct busy *b, int kx, CUstream s)
{
	for (int i = 0; i < b->n; i++)
		if (b->v[i].kx == kx && b->v[i].s == s)
			return true;
	return false;
}

/* One look at every pending launch, in launch order: finished ones are
 * delivered (drop: unfinished ones too, counted lost), launches after
 * an unfinished one on the same stream are not queried. Returns how
 * many are left. */
static int pass(bool drop)
{
	pthread_mutex_lock(&qlock);
	if (q_head >= 0) { /* the launches since the last pass, after ours */
		if (m_tail >= 0)
			ent[m_tail].next = q_head;
		else
			m_head = q_head;
		m_tail = q_tail;
		q_head = q_tail = -1;
	}
	pthread_mutex_unlock(&qlock);
	CUcontext prev = NULL, now;
	rt_cu.CtxGetCurrent(&prev);
	now = prev;
	for (int k = 0; k < KCTX; k++)
		keep_anchor(&kctx[k], &now);
	struct busy busy = { 0 };
	int done = -1, left = 0, last = -1; /* done: a list of entries to release */
	for (int i = m_head, next; i >= 0; i = next) {
		struct pend *e = &ent[i];
		next = e->next;
		struct kctx *x = &kctx[e->kx];
		int st = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
		bool gone = st == P_VOID;
		if (st == P_READY && !is_busy(&busy, e->kx, e->s) && x->cur >= 0 &&
		    enter(x->ctx, &now)) {
			CUresult q = rt_cu.EventQuery(e->ev[1]);
			if (q != CUDA_ERROR_NOT_READY) { /* done, or never will be */
				if (q != CUDA_SUCCESS || !deliver(e, x))
					__atomic_add_fetch(&n_lost, 1, __ATOMIC_RELAXED);
				gone = true;
			} else if (busy.n < BLOCKED) {
				busy.v[busy.n].kx = e->kx;
				busy.v[busy.n++].s = e->s;
			}
		}
		if (!gone && drop && st != P_OPEN) {
			__atomic_add_fetch(&n_lost, 1, __ATOMIC_RELAXED);
			gone = true;
		}
		if (gone) { /* unlinked from mine */
			unlink_mine(i, last, next);
			e->next = done;
			done = i;
		} else {
			last = i;
			left++;
		}
	}
	if (now != prev)
		rt_cu.CtxSetCurrent(prev);
	pthread_mutex_lock(&qlock);
	for (int i = done, next; i >= 0; i = next) {
		next = ent[i].next;
		release(i);
	}
	pthread_mutex_unlock(&qlock);
	publish();
	return left;
}

static bool pending(void)
{
	return __atomic_load_n(&state, __ATOMIC_ACQUIRE) > 0 &&
	       __atomic_load_n(&inflight, __ATOMIC_ACQUIRE) > 0;
}

void rt_kend_count(uint64_t done, uint64_t dropped)
{
	__atomic_store_n(&c_done, done, __ATOMIC_RELAXED);
	__atomic_store_n(&c_drops, dropped, __ATOMIC_RELAXED);
	publish();
}

void rt_kend_poll(void)
{
	rt_cupti_flush(false);
	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) <= 0 || pthread_mutex_trylock(&plock))
		return;
	if (!__atomic_load_n(&closed, __ATOMIC_ACQUIRE))
		pass(false);
	pthread_mutex_unlock(&plock);
}

void rt_kend_sync(void)
{
	/* CUPTI's records are not waited for here: the runtime thread
	 * delivers them within FLUSH_NS, off the program's threads */
	if (!pending())
		return;
	pthread_mutex_lock(&plock);
	if (!__atomic_load_n(&closed, __ATOMIC_ACQUIRE))
		pass(false);
	pthread_mutex_unlock(&plock);
}

/* ---------------- the end of a context, of the process ---------------- */

/* Waits for x's work (a context synchronise) and delivers it; when
 * dispose is set, what is left of x is dropped and its events and
 * stream destroyed (under plock). */
static void finish(struct kctx *x, bool dispose)
{
	CUcontext prev = NULL;
	rt_cu.CtxGetCurrent(&prev);
	bool live = rt_cu.CtxSetCurrent(x->ctx) == CUDA_SUCCESS;
	if (live) {
		rt_cu.CtxSynchronize();
		rt_cu.CtxSetCurrent(prev);
	}
	pass(false);
	if (!dispose)
		return;
	pthread_mutex_lock(&qlock);
	int kx = (int)(x - kctx);
	for (int i = m_head, last = -1, next; i >= 0; i = next) {
		next = ent[i].next;
		if (ent[i].kx != kx || __atomic_load_n(&ent[i].state, __ATOMIC_ACQUIRE) == P_OPEN) {
			last = i;
			continue;
		}
		unlink_mine(i, last, next);
		__atomic_add_fetch(&n_lost, 1, __ATOMIC_RELAXED);
		release(i);
	}
	if (live && rt_cu.CtxSetCurrent(x->ctx) == CUDA_SUCCESS) {
		for (unsigned i = 0; i < x->npool; i++)
			rt_cu.EventDestroy(x->pool[i]);
		rt_cu.EventDestroy(x->anc[0]);
		rt_cu.EventDestroy(x->anc[1]);
		rt_cu.StreamDestroy(x->stream);
		rt_cu.CtxSetCurrent(prev);
	}
	free(x->pool);
	x->pool = NULL;
	x->npool = x->cap = x->nev = 0;
	__atomic_store_n(&x->ctx, NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&qlock);
	publish();
}

void rt_kend_ctx_ending(CUcontext ctx, int dev)
{
	rt_cupti_flush(true); /* its kernels' records, while their names are known */
	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) <= 0)
		return;
	if (dev >= 0) { /* the device's primary context, if it is active */
		unsigned flags;
		int active = 0;
		ctx = NULL;
		if (rt_cu.DevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active ||
		    rt_cu.DevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS)
			return;
		rt_cu.DevicePrimaryCtxRelease(dev);
	}
	pthread_mutex_lock(&plock);
	struct kctx *x = ctx ? ctx_of(ctx) : NULL;
	/* a release may end the context or not: the pool goes either way,
	 * and a later launch there makes a new one */
	if (x && !__atomic_load_n(&closed, __ATOMIC_ACQUIRE))
		finish(x, true);
	pthread_mutex_unlock(&plock);
}

/* plock, waiting at most 200 ms on a fatal signal: the thread that holds
 * it may be the one that crashed. */
static bool lock_final(bool crash)
{
	if (!crash) {
		pthread_mutex_lock(&plock);
		return true;
	}
	for (int k = 0; k < 200; k++) {
		if (!pthread_mutex_trylock(&plock))
			return true;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return false;
}

void rt_kend_final(bool crash)
{
	if (!crash) /* a crashing thread may hold what delivery takes */
		rt_cupti_flush(true);
	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) <= 0 ||
	    __atomic_exchange_n(&closed, 1, __ATOMIC_ACQ_REL) || !lock_final(crash))
		return;
	for (int k = 0; k < KCTX; k++)
		if (kctx[k].ctx)
			finish(&kctx[k], !crash); /* a dying process keeps its events */
	/* the entries stay: a launch on another thread may still hold one */
	if (!crash)
		pass(true);
	RT_TRACE("cuda:kernel_end: %llu delivered, %llu dropped, %llu lost",
		 (unsigned long long)n_done, (unsigned long long)n_drops,
		 (unsigned long long)n_lost);
	publish();
	pthread_mutex_unlock(&plock);
}

static void child_after_fork(void)
{
	/* the parent's contexts and events are not the child's; its memory
	 * is (a copy), and goes */
	pthread_mutex_init(&qlock, NULL);
	pthread_mutex_init(&plock, NULL);
	for (int k = 0; k < KCTX; k++)
		free(kctx[k].pool);
	memset(kctx, 0, sizeof(kctx));
	free(ent);
	ent = NULL;
	free_head = q_head = q_tail = m_head = m_tail = -1;
	inflight = closed = state = 0;
	n_done = n_drops = n_lost = 0;
}

__attribute__((constructor)) static void kend_init(void)
{
	pthread_atfork(NULL, NULL, child_after_fork);
}
