/* cuda:kernel_end from CUPTI's activity records: the driver itself
 * stamps each kernel's start and end, in launches and in graph replays
 * alike, and hands the records over in buffers; nothing is added to the
 * program's streams and no launch waits. The records carry CUPTI's
 * context and stream ids: each launch through the hooks notes which
 * stream handle those stand for (once per context and stream), so that
 * `stream` is the handle cuda:launch shows. Timestamps come from
 * CLOCK_MONOTONIC (CUPTI's timestamp callback), the clock nsecs reads.
 *
 * Used when libcupti opens (GPUX_CUPTI_LIB, the one an earlier gpux -p's
 * runtime drives, one beside libgpux-rt.so, the toolkit's, a pip
 * wheel's), no tool is injected into the driver
 * and the Compute Sanitizer is not in use (both would own the driver's
 * tool interface); else cuda:kernel_end times launches with CUDA events
 * (rt_kernel_end.c). GPUX_KERNEL_END=events forces those. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt_hooks.h"
#include "rt_host_priv.h"

#if !__has_include(<cupti_activity.h>)
/* A toolkit without CUPTI's headers: launches are timed with events. */
bool rt_cupti_on(void)
{
	return false;
}
void rt_cupti_launch(CUstream s, bool pt)
{
	(void)s, (void)pt;
}
void rt_cupti_flush(bool now)
{
	(void)now;
}
void rt_cupti_stop(void)
{
}
void rt_cupti_set_peers(const struct rt_cupti_peer *peers, int n)
{
	(void)peers, (void)n;
}
int gpux_rt_cupti_adopt(rt_fn requested, rt_fn completed);
int gpux_rt_cupti_adopt(rt_fn requested, rt_fn completed)
{
	(void)requested, (void)completed;
	return -1;
}
const char *gpux_rt_cupti_lib(void);
const char *gpux_rt_cupti_lib(void)
{
	return NULL;
}
#else
#include <cupti_activity.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One activity buffer: about 1,200 kernel records (216 bytes each),
 * whose timeline records (about 210 bytes each) fit under half the host
 * ring (GPUX_SESS_HRING_SIZE), so that delivering a full buffer does not
 * wait for the controller (rt_host_room); a full 1 MiB buffer's could
 * not fit. */
#define BUF_BYTES (1u << 18)
#define FLUSH_NS 100000000ull   /* records delivered at least this often */
#define STREAMS 1024u           /* (context, stream) pairs noted, a power of two */
#define NAMES 4096u             /* kernel names seen, a power of two */

static struct {
	CUptiResult (*reg_callbacks)(CUpti_BuffersCallbackRequestFunc,
				     CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*reg_timestamp)(CUpti_TimestampCallbackFunc);
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*disable)(CUpti_ActivityKind);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*flush)(uint32_t);
	CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
	CUptiResult (*ctx_id)(CUcontext, uint32_t *);
	CUptiResult (*stream_id)(CUcontext, CUstream, uint8_t, uint32_t *);
} cu;

static int state; /* 0 not tried, 1 on, -1 off */
/* This instance registered CUPTI's callbacks (rt.h, rt_cupti_set_peers);
 * fwd_*: those of the instance that adopted them since, which its
 * buffers go to. */
static bool owner;
static CUpti_BuffersCallbackRequestFunc fwd_requested;
static CUpti_BuffersCallbackCompleteFunc fwd_completed;
#define MAX_PEERS 16
static struct rt_cupti_peer peers[MAX_PEERS];
static int npeers;
static char lib_path[4096]; /* the libcupti this instance opened */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;  /* names, delivery, the start */
static pthread_mutex_t slock = PTHREAD_MUTEX_INITIALIZER; /* streams (launch threads) */
static uint64_t last_flush;
static uint64_t n_done, n_dropped;

struct stream_ent {
	uint64_t key;   /* context id << 32 | stream id, + 1 (0: free) */
	uint64_t shown; /* the handle as the program passed it */
	CUcontext ctx;
	CUstream s;
	bool pt;
};
static struct stream_ent streams[STREAMS];

struct name_ent {
	const char *cupti; /* CUPTI's name pointer, shared by its records */
	uint32_t id;
	char kernel[GPUX_CEV_STR];
	char *ptx;
};
static struct name_ent names[NAMES];

static uint64_t CUPTIAPI monotonic(void)
{
	return rt_now_ns();
}

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	CUpti_BuffersCallbackRequestFunc f = __atomic_load_n(&fwd_requested, __ATOMIC_ACQUIRE);
	if (f) {
		f(buf, size, max_records);
		return;
	}
	*buf = aligned_alloc(8, BUF_BYTES);
	*size = *buf ? BUF_BYTES : 0;
	*max_records = 0;
}

/* The stream handle a record's (context, stream) stands for, 0 if no
 * launch through the hooks noted it (a graph's internal stream). */
static uint64_t shown_of(uint32_t ctx, uint32_t stream)
{
	uint64_t key = ((uint64_t)ctx << 32 | stream) + 1, shown = 0;
	pthread_mutex_lock(&slock);
	for (uint32_t i = 0, at = (uint32_t)(key * 0x9e3779b97f4a7c15ull >> 54) & (STREAMS - 1);
	     i < STREAMS; i++, at = (at + 1) & (STREAMS - 1)) {
		if (streams[at].key == key)
			shown = streams[at].shown;
		if (!streams[at].key || streams[at].key == key)
			break;
	}
	pthread_mutex_unlock(&slock);
	return shown;
}

static struct name_ent *name_of(const char *cupti)
{
	uint32_t at = (uint32_t)((uintptr_t)cupti * 0x9e3779b97f4a7c15ull >> 52) & (NAMES - 1);
	for (uint32_t i = 0; i < NAMES; i++, at = (at + 1) & (NAMES - 1)) {
		struct name_ent *e = &names[at];
		/* the same pointer names the same kernel, unless CUPTI reused
		 * it after a module went: then the entry is made anew */
		if (e->cupti == cupti && e->ptx && !strcmp(e->ptx, cupti))
			return e;
		if (e->cupti && e->cupti != cupti)
			continue;
		free(e->ptx);
		e->cupti = cupti;
		e->ptx = strdup(cupti);
		e->id = rt_name_id(cupti);
		rt_kernel_str(cupti, e->kernel);
		return e;
	}
	return NULL;
}

static void deliver(const CUpti_ActivityKernel10 *k)
{
	/* the runtime's own kernel (clock matching) is not the program's */
	if (!k->name || k->end < k->start || !strcmp(k->name, GPUX_SYM_CLOCK_SAMPLE))
		return;
	struct name_ent *n = name_of(k->name);
	if (!n)
		return;
	uint64_t d = k->end - k->start;
	rt_sess_gpu_name((int)k->deviceId); /* for timelines' GPU tracks */
	if (rt_live_top())
		rt_live_timed(n->id, d, (int)k->deviceId);
	if (!rt_cev_on(GPUX_CEV_KERNEL_END))
		return;
	struct gpux_cev_kernel_end c = {
		.stream = shown_of(k->contextId, k->streamId),
		.grid = { (uint32_t)k->gridX, (uint32_t)k->gridY, (uint32_t)k->gridZ },
		.block = { (uint32_t)k->blockX, (uint32_t)k->blockY, (uint32_t)k->blockZ },
		.shmem = (uint64_t)(uint32_t)k->dynamicSharedMemory,
		.start = k->start,
		.end = k->end,
		.duration = d,
		.kernel_id = n->id,
	};
	memcpy(c.kernel, n->kernel, sizeof(c.kernel));
	rt_actions_event_gpu((int)k->deviceId);
	rt_cev_emit(GPUX_CEV_KERNEL_END, &c, sizeof c, n->ptx);
	rt_actions_event_gpu(-1);
	n_done++;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				      size_t valid)
{
	CUpti_BuffersCallbackCompleteFunc f = __atomic_load_n(&fwd_completed, __ATOMIC_ACQUIRE);
	if (f) {
		f(ctx, stream, buf, size, valid);
		return;
	}
	CUpti_Activity *r = NULL;
	pthread_mutex_lock(&lock);
	/* a buffer holds up to 100 ms of kernels: delivered as fast as the
	 * controller reads them (this is CUPTI's thread or the runtime's) */
	while (valid && cu.next(buf, valid, &r) == CUPTI_SUCCESS)
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			rt_host_room();
			deliver((const CUpti_ActivityKernel10 *)r);
		}
	size_t lost = 0;
	if (cu.dropped && cu.dropped(ctx, stream, &lost) == CUPTI_SUCCESS)
		n_dropped += lost;
	rt_kend_count(n_done, n_dropped);
	pthread_mutex_unlock(&lock);
	free(buf);
}

static void *open_beside(const char *dir, size_t len)
{
	char path[4096];
	if (!len || len >= sizeof(path) - sizeof("/libcupti.so"))
		return NULL;
	snprintf(path, sizeof(path), "%.*s/libcupti.so", (int)len, dir);
	return dlopen(path, RTLD_NOW | RTLD_GLOBAL);
}

static void *open_cupti(void)
{
	const char *env = getenv("GPUX_CUPTI_LIB");
	if (env && *env)
		return dlopen(env, RTLD_NOW | RTLD_GLOBAL);
	void *h = NULL;
	/* the one an earlier instance drives (rt.h, struct rt_cupti_peer) */
	for (int i = 0; !h && i < npeers; i++) {
		const char *lib = peers[i].lib ? peers[i].lib() : NULL;
		if (lib && *lib)
			h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
	}
	Dl_info self; /* one shipped beside the runtime, or beside an earlier
		       * instance's (this one may be gpux -p's copy) */
	if (!h && dladdr((void *)open_cupti, &self) && self.dli_fname &&
	    strrchr(self.dli_fname, '/'))
		h = open_beside(self.dli_fname, (size_t)(strrchr(self.dli_fname, '/') - self.dli_fname));
	for (int i = 0; !h && i < npeers; i++)
		h = open_beside(peers[i].dir, strlen(peers[i].dir));
	if (h)
		return h;
	static const char *const names[] = {
		"libcupti.so", "libcupti.so.13", "libcupti.so.12",
		"/usr/local/cuda/lib64/libcupti.so", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
	};
	for (size_t i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
	static const char *const wheels[] = { "nvidia/cu*/lib/libcupti.so*",
					      "nvidia/cuda_cupti/lib/libcupti.so*" };
	return h ? h : rt_dlopen_wheel(wheels, sizeof(wheels) / sizeof(wheels[0]));
}

/* Whether a tool is injected into the driver (Nsight Systems, Compute
 * Sanitizer's launcher, another CUPTI client): the activity API is then
 * its, and registering ours would take it over. A profiler the program
 * starts itself (torch.profiler) registers its own callbacks when it
 * starts, after ours: kernel_end then stops (README says to set
 * GPUX_KERNEL_END=events for such runs). */
static bool tool_injected(void)
{
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	return inj && *inj;
}

static bool start(void)
{
	const char *how = getenv("GPUX_KERNEL_END");
	if ((how && !strcmp(how, "events")) || rt_sass_can() || !rt_cu_ready())
		return false;
	if (tool_injected()) {
		RT_TRACE("cuda:kernel_end: a tool owns the driver's injection; timed with CUDA events");
		return false;
	}
	void *h = open_cupti();
	if (!h)
		return false;
	*(void **)&cu.reg_callbacks = dlsym(h, "cuptiActivityRegisterCallbacks");
	*(void **)&cu.reg_timestamp = dlsym(h, "cuptiActivityRegisterTimestampCallback");
	*(void **)&cu.enable = dlsym(h, "cuptiActivityEnable");
	*(void **)&cu.disable = dlsym(h, "cuptiActivityDisable");
	*(void **)&cu.next = dlsym(h, "cuptiActivityGetNextRecord");
	*(void **)&cu.flush = dlsym(h, "cuptiActivityFlushAll");
	*(void **)&cu.dropped = dlsym(h, "cuptiActivityGetNumDroppedRecords");
	*(void **)&cu.ctx_id = dlsym(h, "cuptiGetContextId");
	*(void **)&cu.stream_id = dlsym(h, "cuptiGetStreamIdEx");
	/* the timestamp callback puts start and end on nsecs' clock: without
	 * it the records' times would be on another clock */
	if (!cu.reg_callbacks || !cu.reg_timestamp || !cu.enable || !cu.next || !cu.flush ||
	    !cu.ctx_id || !cu.stream_id)
		return false;
	Dl_info di;
	if (dladdr(*(void **)&cu.enable, &di) && di.dli_fname)
		snprintf(lib_path, sizeof(lib_path), "%s", di.dli_fname);
	/* an earlier instance's callbacks, handed on to ours (their
	 * timestamps are CLOCK_MONOTONIC's too) */
	for (int i = 0; i < npeers; i++)
		if (peers[i].adopt &&
		    !peers[i].adopt((rt_fn)buffer_requested, (rt_fn)buffer_completed)) {
			last_flush = rt_now_ns();
			RT_TRACE("cuda:kernel_end: timed by CUPTI's activity records, through "
				 "an earlier gpux -p's runtime");
			return true;
		}
	CUptiResult rc = cu.reg_timestamp(monotonic);
	if (rc == CUPTI_SUCCESS)
		rc = cu.reg_callbacks(buffer_requested, buffer_completed);
	owner = rc == CUPTI_SUCCESS;
	if (rc == CUPTI_SUCCESS)
		rc = cu.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (rc != CUPTI_SUCCESS) {
		rt_warn("cuda:kernel_end: CUPTI refused its activity records (error %d); launches "
			"are timed with CUDA events instead", (int)rc);
		return false;
	}
	last_flush = rt_now_ns();
	RT_TRACE("cuda:kernel_end: timed by CUPTI's activity records");
	return true;
}

bool rt_cupti_on(void)
{
	int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
	if (s)
		return s > 0;
	pthread_mutex_lock(&lock);
	if (!state)
		__atomic_store_n(&state, start() ? 1 : -1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
	return state > 0;
}

void rt_cupti_launch(CUstream s, bool pt)
{
	static __thread struct { CUcontext c; CUstream s; bool pt; } last;
	CUcontext c = NULL;
	if (rt_cu.CtxGetCurrent(&c) != CUDA_SUCCESS || !c ||
	    (last.c == c && last.s == s && last.pt == pt))
		return;
	uint32_t cid, sid;
	if (cu.ctx_id(c, &cid) != CUPTI_SUCCESS || cu.stream_id(c, s, pt, &sid) != CUPTI_SUCCESS)
		return;
	uint64_t key = ((uint64_t)cid << 32 | sid) + 1;
	pthread_mutex_lock(&slock);
	for (uint32_t i = 0, at = (uint32_t)(key * 0x9e3779b97f4a7c15ull >> 54) & (STREAMS - 1);
	     i < STREAMS; i++, at = (at + 1) & (STREAMS - 1))
		if (!streams[at].key || streams[at].key == key) {
			streams[at] = (struct stream_ent){ key, (uint64_t)(uintptr_t)s, c, s, pt };
			break;
		}
	pthread_mutex_unlock(&slock);
	last.c = c;
	last.s = s;
	last.pt = pt;
}

void rt_cupti_stop(void)
{
	pthread_mutex_lock(&lock);
	bool was = state > 0;
	if (was && cu.disable)
		cu.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	__atomic_store_n(&state, -1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
	/* the records CUPTI still holds are this session's: delivered now
	 * (nowhere, its controller is gone), not to a later gpux -p's
	 * (delivery takes the lock) */
	if (was)
		cu.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void rt_cupti_flush(bool now)
{
	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) <= 0)
		return;
	uint64_t t = rt_now_ns();
	if (!now && t - __atomic_load_n(&last_flush, __ATOMIC_RELAXED) < FLUSH_NS)
		return;
	__atomic_store_n(&last_flush, t, __ATOMIC_RELAXED);
	cu.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void rt_cupti_set_peers(const struct rt_cupti_peer *p, int n)
{
	pthread_mutex_lock(&lock);
	npeers = n < MAX_PEERS ? n : MAX_PEERS;
	memcpy(peers, p, (size_t)npeers * sizeof(*peers));
	pthread_mutex_unlock(&lock);
}

/* Exported (libgpux_rt.map): the libcupti this instance opened, for a
 * later instance to open the same (rt.h). */
const char *gpux_rt_cupti_lib(void);
const char *gpux_rt_cupti_lib(void)
{
	return lib_path[0] ? lib_path : NULL;
}

/* Exported (libgpux_rt.map): a later instance takes this one's CUPTI
 * callbacks over (rt.h). 0 when this instance registered them, and
 * records are made again (this instance's detach stopped them). */
int gpux_rt_cupti_adopt(rt_fn requested, rt_fn completed);
int gpux_rt_cupti_adopt(rt_fn requested, rt_fn completed)
{
	pthread_mutex_lock(&lock);
	int rc = -1;
	if (owner && requested && completed) {
		__atomic_store_n(&fwd_completed, (CUpti_BuffersCallbackCompleteFunc)completed,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&fwd_requested, (CUpti_BuffersCallbackRequestFunc)requested,
				 __ATOMIC_RELEASE);
		rc = cu.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS ? 0 : -1;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}
#endif
