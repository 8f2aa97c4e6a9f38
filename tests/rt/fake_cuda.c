/* A fake libcuda.so.1 for testing libgpux-rt.so without a GPU: host
 * memory stands for device memory (a CUdeviceptr is a host address, and
 * mapped host memory's device pointer is the host pointer itself), one
 * device of compute capability 9.0, modules are PTX text (fatbins and
 * ELF images are accepted and hold no kernels, except the cubins of its
 * own linker, which keep the PTX they were made from).
 *
 * A launch does not run the kernel. It does what the probes the runtime
 * spliced into it would do, read from the module's own text: at each
 * trampoline (`// gpux: site N, KIND` ... the kernel_id immediate ...
 * `call (gpux_r), gpux_probe_K`) it looks at what gpux_probe_K calls:
 *   gpux_h_agg_count  on the map it names (gpux_map_M): adds the launch's
 *                     thread count to key = kernel_id (8-byte key and
 *                     value), through the descriptor the runtime wrote;
 *   gpux_h_printf     writes one record into the ring gpux_ctl points
 *                     at, as FAKE_CUDA_PRINTF=FMT:LANES:W,W,... says
 *                     (each W: a number, k = kernel_id, l = the lane);
 *   gpux_h_exit       sets the exit words.
 * The entry sites of a kernel act once per thread together (so do its
 * exit sites: a thread leaves by one of them); each access site acts
 * once per thread. gpux_clock_sample(u64 *m) answers the calibration
 * handshake with a fake global time, FK_CLOCK_BASE ahead of
 * CLOCK_MONOTONIC. A module's globals are
 * zeroed host memory sized from their PTX declarations; a library's
 * exist once per context, as with the driver.
 *
 * Environment:
 *   FAKE_CUDA_LOG=FILE    one line per call of interest: loads with what
 *                         was loaded ("patched" when the PTX calls a gpux
 *                         probe), launches with what the runtime had set
 *                         up (" ctl=exit clock=ok") and what the
 *                         probes did
 *   FAKE_CUDA_SAVE=DIR    each loaded image as DIR/load_N.{ptx,bin}
 *   FAKE_CUDA_OLD_JIT=1   loads and links that pass CU_JIT_SPLIT_COMPILE
 *                         fail with CUDA_ERROR_INVALID_VALUE
 *   FAKE_CUDA_REFUSE=1    PTX that calls a gpux probe fails to load
 *                         (CUDA_ERROR_INVALID_PTX, with a JIT log)
 *   FAKE_CUDA_PTXAS=PATH  PTX is checked with ptxas -arch=sm_90 first; the
 *                         linker (one PTX input) needs it to make cubins
 *   FAKE_CUDA_CC=NN       the device's compute capability (default 90);
 *                         links are for sm_NN
 *   FAKE_CUDA_LINK_NO_CUBIN=1  links refuse cubin inputs (as a driver
 *                         older than the toolkit that made them)
 *   FAKE_CUDA_NO_MEMOPS=1 cuStreamBatchMemOp_v2 refuses every batch
 *   FAKE_CUDA_LINKED_DIR=DIR  the PTX each link's cubin was made from is
 *                         kept in DIR, so a later process that loads
 *                         such a cubin (from gpux's module cache) is
 *                         served as the driver would serve it
 *   FAKE_CUDA_CLOCK_PPM=N the fake's timer runs N parts per million fast
 *                         from the process's first timer read; a launch's
 *                         clock is then ok within 300 us of it, and
 *                         each handshake is logged ("clock sample") and
 *                         run as the kernel does, on a thread of its own
 *   FAKE_CUDA_LOG_COPIES=1 cuMemcpyDtoHAsync_v2 logs its size (the
 *                         runtime's snapshots)
 *                         (CUDA_ERROR_NOT_SUPPORTED)
 *   FAKE_CUDA_PRINTF      above */
#include <cuda.h>

#include <errno.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_cuda.h"
#include "gpux_dev.h"
#include "probe_site.h"

extern char **environ;

#define FK_CLOCK_BASE 1000000000000ull /* the fake %globaltimer's lead */

/* ---------------- bookkeeping ---------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void flog(const char *fmt, ...)
{
	const char *path = getenv("FAKE_CUDA_LOG");
	if (!path || !*path)
		return;
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0) {
		/* nothing to do */
	}
	close(fd);
}

/* Allocations, so frees are checked and nothing looks leaked. */
struct block {
	void *p;
	size_t size;
	bool host;
	bool managed;
	struct block *next;
};
static struct block *blocks;
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;

static void *block_new(size_t size, bool host, unsigned char fill)
{
	size_t n = size ? size : 1;
	void *p = aligned_alloc(4096, (n + 4095) & ~(size_t)4095);
	struct block *b = malloc(sizeof(*b));
	if (!p || !b) {
		free(p);
		free(b);
		return NULL;
	}
	memset(p, fill, n);
	*b = (struct block){ p, size, host, false, NULL };
	pthread_mutex_lock(&blocks_lock);
	b->next = blocks;
	blocks = b;
	pthread_mutex_unlock(&blocks_lock);
	return p;
}

static bool block_free(void *p, bool host)
{
	pthread_mutex_lock(&blocks_lock);
	for (struct block **bp = &blocks; *bp; bp = &(*bp)->next) {
		struct block *b = *bp;
		if (b->p == p && b->host == host) {
			*bp = b->next;
			pthread_mutex_unlock(&blocks_lock);
			free(b->p);
			free(b);
			return true;
		}
	}
	pthread_mutex_unlock(&blocks_lock);
	return false;
}

/* The block of device memory holding [p, p + n), or NULL (under
 * blocks_lock). */
static struct block *block_holding(uintptr_t p, size_t n)
{
	for (struct block *b = blocks; b; b = b->next)
		if (!b->host && p >= (uintptr_t)b->p && n <= b->size &&
		    p - (uintptr_t)b->p <= b->size - n)
			return b;
	return NULL;
}

/* ---------------- devices and contexts ---------------- */

#define CTX_MAGIC 0x78746366u

struct fk_ctx {
	uint32_t magic;
	int dev;
	bool primary;
	struct fk_ctx *next;
};

static bool inited;
static struct fk_ctx primary = { CTX_MAGIC, 0, true, NULL };
static int primary_refs;
static struct fk_ctx *ctxs; /* created ones */
static __thread struct fk_ctx *cur;

static void ev_ctx_gone(const struct fk_ctx *c); /* its events go with it */

static bool ctx_valid(const struct fk_ctx *c)
{
	if (c == &primary)
		return primary_refs > 0;
	for (const struct fk_ctx *x = ctxs; x; x = x->next)
		if (x == c)
			return true;
	return false;
}

CUresult cuInit(unsigned flags)
{
	(void)flags;
	inited = true;
	flog("cuInit");
	return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v)
{
	*v = CUDA_VERSION;
	return CUDA_SUCCESS;
}

/* FAKE_CUDA_DEVICES: how many devices (default 1, at most 8); contexts
 * of any of them, the primary one of device 0 only. */
static int devices(void)
{
	const char *e = getenv("FAKE_CUDA_DEVICES");
	int n = e ? atoi(e) : 1;
	return n < 1 ? 1 : n > 8 ? 8 : n;
}

CUresult cuDeviceGetCount(int *n)
{
	*n = inited ? devices() : 0;
	return inited ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	if (!inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ordinal < 0 || ordinal >= devices())
		return CUDA_ERROR_INVALID_DEVICE;
	*d = ordinal;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	if (d != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "Fake GPU");
	return CUDA_SUCCESS;
}

/* FAKE_CUDA_CC, or 90. */
static int fake_cc(void)
{
	const char *e = getenv("FAKE_CUDA_CC");
	int cc = e ? atoi(e) : 0;
	return cc > 0 ? cc : 90;
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	if (d != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = fake_cc() / 10; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = fake_cc() % 10; break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 4; break;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: *v = 1; break;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *v = 1; break;
	default: *v = 0; break;
	}
	return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned flags, CUdevice dev);
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned flags, CUdevice dev)
{
	(void)flags;
	if (!inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= devices())
		return CUDA_ERROR_INVALID_DEVICE;
	struct fk_ctx *c = malloc(sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*c = (struct fk_ctx){ CTX_MAGIC, dev, false, NULL };
	pthread_mutex_lock(&lock);
	c->next = ctxs;
	ctxs = c;
	pthread_mutex_unlock(&lock);
	cur = c;
	*pctx = (CUcontext)c;
	flog("cuCtxCreate");
	return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned flags, CUdevice dev)
{
	(void)params;
	return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	struct fk_ctx *c = (struct fk_ctx *)ctx;
	pthread_mutex_lock(&lock);
	for (struct fk_ctx **cp = &ctxs; *cp; cp = &(*cp)->next)
		if (*cp == c) {
			*cp = c->next;
			ev_ctx_gone(c);
			pthread_mutex_unlock(&lock);
			if (cur == c)
				cur = NULL;
			free(c);
			flog("cuCtxDestroy");
			return CUDA_SUCCESS;
		}
	pthread_mutex_unlock(&lock);
	return CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	*pctx = (CUcontext)cur;
	return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	struct fk_ctx *c = (struct fk_ctx *)ctx;
	if (c && !ctx_valid(c))
		return CUDA_ERROR_INVALID_CONTEXT;
	cur = c;
	return CUDA_SUCCESS;
}

/* One level of push/pop is all the runtime could want. */
static __thread struct fk_ctx *pushed[8];
static __thread int npushed;

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	if (npushed == 8)
		return CUDA_ERROR_INVALID_VALUE;
	struct fk_ctx *prev = cur;
	CUresult rc = cuCtxSetCurrent(ctx);
	if (rc == CUDA_SUCCESS)
		pushed[npushed++] = prev;
	return rc;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
	if (!npushed)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (pctx)
		*pctx = (CUcontext)cur;
	cur = pushed[--npushed];
	return CUDA_SUCCESS;
}

/* Stream capture is not emulated; the mode is kept per thread. */
static __thread CUstreamCaptureMode capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	CUstreamCaptureMode old = capture_mode;
	capture_mode = *mode;
	*mode = old;
	return CUDA_SUCCESS;
}

/* Events. The fake GPU's clock (gpu_ns) moves only with kernels: each
 * launch takes FK_BLOCK_NS per block of its grid, so the time between
 * events around it is known exactly. An event records that clock; work
 * is done when it is launched here, so a recorded event is complete
 * (FAKE_CUDA_EVENT_LATE=1: only once something synchronises: the
 * context or any stream). Events are the context's: destroyed with it.
 * Counts for the log at exit: "events created=C destroyed=D recorded=R"
 * (destroyed: by cuEventDestroy). */
#define EV_MAGIC 0x76657466u
#define FK_GPU_BASE 7000000000000ull /* far from the host's clock */
#define FK_BLOCK_NS 1000ull

struct fk_event {
	uint32_t magic;
	unsigned flags;
	bool recorded, done;
	uint64_t t;
	struct fk_ctx *ctx;
	struct fk_event *prev, *next;
};
static struct fk_event *events; /* every live event, under lock */
static uint64_t gpu_ns = FK_GPU_BASE;
static int ev_created, ev_destroyed, ev_recorded;

static bool ev_valid(const struct fk_event *e)
{
	return e && e->magic == EV_MAGIC;
}

static void ev_unlink(struct fk_event *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		events = e->next;
	if (e->next)
		e->next->prev = e->prev;
	e->magic = 0;
	free(e);
}

/* (under lock) A synchronize: every recorded event is complete. */
static void ev_all_done(void)
{
	for (struct fk_event *e = events; e; e = e->next)
		e->done = e->recorded;
}

/* (under lock) The events of a context that is gone. */
static void ev_ctx_gone(const struct fk_ctx *c)
{
	for (struct fk_event *e = events, *n; e; e = n) {
		n = e->next;
		if (e->ctx == c)
			ev_unlink(e);
	}
}

CUresult cuEventCreate(CUevent *ev, unsigned flags)
{
	if (!cur)
		return CUDA_ERROR_INVALID_CONTEXT;
	struct fk_event *e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->magic = EV_MAGIC;
	e->flags = flags;
	e->ctx = cur;
	pthread_mutex_lock(&lock);
	e->next = events;
	if (events)
		events->prev = e;
	events = e;
	ev_created++;
	pthread_mutex_unlock(&lock);
	*ev = (CUevent)e;
	return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent ev, CUstream s)
{
	(void)s;
	struct fk_event *e = (struct fk_event *)ev;
	if (!ev_valid(e))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&lock);
	e->recorded = true;
	e->done = !getenv("FAKE_CUDA_EVENT_LATE");
	e->t = gpu_ns;
	ev_recorded++;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

CUresult cuEventQuery(CUevent ev)
{
	struct fk_event *e = (struct fk_event *)ev;
	if (!ev_valid(e))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&lock);
	bool done = !e->recorded || e->done;
	pthread_mutex_unlock(&lock);
	return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

static CUresult elapsed(float *ms, CUevent a, CUevent b)
{
	struct fk_event *x = (struct fk_event *)a, *y = (struct fk_event *)b;
	if (!ms || !ev_valid(x) || !ev_valid(y))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&lock);
	CUresult rc = CUDA_SUCCESS;
	if (!x->recorded || !y->recorded || ((x->flags | y->flags) & CU_EVENT_DISABLE_TIMING))
		rc = CUDA_ERROR_INVALID_HANDLE;
	else if (!x->done || !y->done)
		rc = CUDA_ERROR_NOT_READY;
	else
		*ms = (float)((double)(int64_t)(y->t - x->t) / 1e6);
	pthread_mutex_unlock(&lock);
	return rc;
}

/* CUDA 12.8's (what cuda.h 13 calls cuEventElapsedTime), and the first. */
CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
	return elapsed(ms, a, b);
}

#undef cuEventElapsedTime
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b);
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
	return elapsed(ms, a, b);
}

CUresult cuEventDestroy_v2(CUevent ev)
{
	struct fk_event *e = (struct fk_event *)ev;
	if (!ev_valid(e))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&lock);
	ev_unlink(e);
	ev_destroyed++;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

__attribute__((destructor)) static void ev_report(void)
{
	flog("events created=%d destroyed=%d recorded=%d", ev_created, ev_destroyed,
	     ev_recorded);
}

/* FAKE_CUDA_CAPTURING=1: every stream but the default one is being
 * captured (what the runtime does then is checked against it). */
CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
	*st = (s && getenv("FAKE_CUDA_CAPTURING")) || fk_capturing(s)
		      ? CU_STREAM_CAPTURE_STATUS_ACTIVE
		      : CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

CUresult cuStreamQuery(CUstream s)
{
	(void)s;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *d)
{
	if (!cur)
		return CUDA_ERROR_INVALID_CONTEXT;
	*d = cur->dev;
	return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
	pthread_mutex_lock(&lock);
	ev_all_done();
	pthread_mutex_unlock(&lock);
	return cur ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* CUDA 13's: NULL is the current context. (Entry points never call one
 * another here: the runtime under test would see the inner call too.) */
CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	flog("call %s", __func__);
	pthread_mutex_lock(&lock);
	ev_all_done();
	pthread_mutex_unlock(&lock);
	return ctx || cur ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	if (!inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&lock);
	primary_refs++;
	pthread_mutex_unlock(&lock);
	*pctx = (CUcontext)&primary;
	flog("cuDevicePrimaryCtxRetain");
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&lock);
	bool ok = primary_refs > 0;
	if (ok && --primary_refs == 0 && cur == &primary)
		cur = NULL;
	pthread_mutex_unlock(&lock);
	flog("cuDevicePrimaryCtxRelease");
	return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned *flags, int *active)
{
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*flags = 0;
	*active = primary_refs > 0;
	return CUDA_SUCCESS;
}

/* ---------------- memory ---------------- */

CUresult cuMemAlloc_v2(CUdeviceptr *d, size_t n)
{
	if (!cur)
		return CUDA_ERROR_INVALID_CONTEXT;
	void *p = block_new(n, false, 0xa5); /* device memory is not cleared */
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*d = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr d)
{
	if (!d)
		return CUDA_SUCCESS;
	return block_free((void *)(uintptr_t)d, false) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags)
{
	(void)flags;
	if (!cur)
		return CUDA_ERROR_INVALID_CONTEXT;
	*p = block_new(n, true, 0x5a);
	return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags)
{
	(void)flags;
	*d = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

CUresult cuMemFreeHost(void *p)
{
	return block_free(p, true) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n)
{
	memset((void *)(uintptr_t)d, v, n);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *src, size_t n)
{
	memcpy((void *)(uintptr_t)d, src, n);
	return CUDA_SUCCESS;
}

/* Streams run nothing: async copies are done at once. */
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream st)
{
	(void)st;
	memset((void *)(uintptr_t)d, v, n);
	return CUDA_SUCCESS;
}

CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		memcpy((char *)(uintptr_t)d + 4 * i, &v, 4);
	return CUDA_SUCCESS;
}

CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream st)
{
	(void)st;
	return cuMemsetD32_v2(d, v, n);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *src, size_t n, CUstream st)
{
	(void)st;
	memcpy((void *)(uintptr_t)d, src, n);
	return CUDA_SUCCESS;
}

/* Stream writes, done at once (the fake has no queue); logged as
 * "cuStreamBatchMemOp N ok" or "... refused". */
CUresult cuStreamBatchMemOp_v2(CUstream st, unsigned n, CUstreamBatchMemOpParams *ops,
			       unsigned flags)
{
	(void)st;
	if (getenv("FAKE_CUDA_NO_MEMOPS")) {
		flog("cuStreamBatchMemOp %u refused\n", n);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (!ops || !n || n >= 256 || flags)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned k = 0; k < n; k++) {
		const struct CUstreamMemOpWriteValueParams_st *w = &ops[k].writeValue;
		void *at = (void *)(uintptr_t)w->address;
		if (w->operation == CU_STREAM_MEM_OP_WRITE_VALUE_64)
			memcpy(at, &w->value64, 8);
		else if (w->operation == CU_STREAM_MEM_OP_WRITE_VALUE_32)
			memcpy(at, &w->value, 4);
		else
			return CUDA_ERROR_INVALID_VALUE;
	}
	flog("cuStreamBatchMemOp %u ok\n", n);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr s, size_t n)
{
	memcpy(dst, (const void *)(uintptr_t)s, n);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr s, size_t n, CUstream st)
{
	(void)st;
	if (getenv("FAKE_CUDA_LOG_COPIES"))
		flog("cuMemcpyDtoHAsync %zu", n);
	memcpy(dst, (const void *)(uintptr_t)s, n);
	return CUDA_SUCCESS;
}

/* The other allocations and copies (the runtime's cuda: events), each
 * logged as "call NAME" so tests see which variant the program reached.
 * Memory types: host and device pointers are both host addresses here;
 * arrays are not supported. */
#define CALL() flog("call %s", __func__)
#define UNUSED __attribute__((unused))

static CUresult alloc(CUdeviceptr *d, size_t n)
{
	if (!cur)
		return CUDA_ERROR_INVALID_CONTEXT;
	void *p = block_new(n, false, 0xa5);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*d = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

static CUresult release(CUdeviceptr d)
{
	return block_free((void *)(uintptr_t)d, false) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Rows 512-byte aligned, so that bytes = pitch * height shows. */
CUresult cuMemAllocPitch_v2(CUdeviceptr *d, size_t *pitch, size_t w, size_t h, unsigned elem)
{
	(void)elem;
	CALL();
	*pitch = (w + 511) & ~(size_t)511;
	return alloc(d, *pitch * h);
}

CUresult cuMemAllocManaged(CUdeviceptr *d, size_t n, unsigned flags)
{
	(void)flags;
	CALL();
	CUresult rc = alloc(d, n);
	if (rc == CUDA_SUCCESS) {
		pthread_mutex_lock(&blocks_lock);
		block_holding((uintptr_t)*d, 0)->managed = true;
		pthread_mutex_unlock(&blocks_lock);
	}
	return rc;
}

/* ---------------- managed memory: prefetch, advice ----------------
 * Logged with their arguments (gpux's memory actions are checked
 * against them); FAKE_CUDA_REFUSE_HINTS=1 refuses them all. As the real
 * driver, a range that is not all inside one managed allocation is
 * CUDA_ERROR_INVALID_VALUE. */

static const char *where(CUmemLocation l, char *buf, size_t len)
{
	if (l.type == CU_MEM_LOCATION_TYPE_HOST)
		return "host";
	snprintf(buf, len, "%s:%d", l.type == CU_MEM_LOCATION_TYPE_DEVICE ? "gpu" : "other", l.id);
	return buf;
}

static CUresult managed_range(CUdeviceptr p, size_t n)
{
	if (getenv("FAKE_CUDA_REFUSE_HINTS"))
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&blocks_lock);
	struct block *b = block_holding((uintptr_t)p, n);
	bool ok = b && b->managed && n;
	pthread_mutex_unlock(&blocks_lock);
	return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemPrefetchAsync_v2(CUdeviceptr p, size_t n, CUmemLocation loc, unsigned flags,
			       CUstream s)
{
	char b[32];
	flog("prefetch lo=0x%llx bytes=%zu to=%s flags=%u stream=%s", (unsigned long long)p & 0xfffff,
	     n, where(loc, b, sizeof(b)), flags, s ? "app" : "0");
	return managed_range(p, n);
}

CUresult cuMemAdvise_v2(CUdeviceptr p, size_t n, CUmem_advise advice, CUmemLocation loc)
{
	char b[32];
	flog("advise lo=0x%llx bytes=%zu advice=%d at=%s", (unsigned long long)p & 0xfffff, n,
	     (int)advice, where(loc, b, sizeof(b)));
	return managed_range(p, n);
}

/* A GPU of 2 GiB with 1 GiB free. */
CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
	*free_b = 1ul << 30;
	*total = 2ul << 30;
	return CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void *v, CUpointer_attribute a, CUdeviceptr p)
{
	if (a != CU_POINTER_ATTRIBUTE_IS_MANAGED)
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&blocks_lock);
	struct block *b = block_holding((uintptr_t)p, 0);
	*(unsigned *)v = b && b->managed;
	pthread_mutex_unlock(&blocks_lock);
	return b ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemAllocAsync(CUdeviceptr *d, size_t n, CUstream s)
{
	(void)s;
	CALL();
	return alloc(d, n);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *d, size_t n, CUstream s);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *d, size_t n, CUstream s)
{
	(void)s;
	CALL();
	return alloc(d, n);
}

/* One pool per device, standing for all. */
static int default_pool;

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*pool = (CUmemoryPool)&default_pool;
	return CUDA_SUCCESS;
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *d, size_t n, CUmemoryPool pool, CUstream s)
{
	(void)s;
	CALL();
	return pool == (CUmemoryPool)&default_pool ? alloc(d, n) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *d, size_t n, CUmemoryPool pool, CUstream s);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *d, size_t n, CUmemoryPool pool, CUstream s)
{
	(void)s;
	CALL();
	return pool == (CUmemoryPool)&default_pool ? alloc(d, n) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemFreeAsync(CUdeviceptr d, CUstream s)
{
	(void)s;
	CALL();
	return release(d);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr d, CUstream s);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr d, CUstream s)
{
	(void)s;
	CALL();
	return release(d);
}

static CUresult copy(uint64_t d, uint64_t s, size_t n)
{
	if ((!d || !s) && n)
		return CUDA_ERROR_INVALID_VALUE;
	memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
	return CUDA_SUCCESS;
}

#define U(p) ((uint64_t)(uintptr_t)(p))

/* The copies of (dst, src, bytes[, stream]): NAME(PARAMS) copies. */
#define COPY(NAME, PARAMS)        \
	CUresult NAME PARAMS;     \
	CUresult NAME PARAMS      \
	{                         \
		CALL();           \
		return copy(U(d), U(s), n); \
	}
COPY(cuMemcpy, (CUdeviceptr d, CUdeviceptr s, size_t n))
COPY(cuMemcpy_ptds, (CUdeviceptr d, CUdeviceptr s, size_t n))
COPY(cuMemcpyHtoD_v2_ptds, (CUdeviceptr d, const void *s, size_t n))
COPY(cuMemcpyDtoH_v2_ptds, (void *d, CUdeviceptr s, size_t n))
COPY(cuMemcpyDtoD_v2, (CUdeviceptr d, CUdeviceptr s, size_t n))
COPY(cuMemcpyDtoD_v2_ptds, (CUdeviceptr d, CUdeviceptr s, size_t n))
#define COPY_ASYNC(NAME, PARAMS)  \
	CUresult NAME PARAMS;     \
	CUresult NAME PARAMS      \
	{                         \
		(void)st;         \
		CALL();           \
		return copy(U(d), U(s), n); \
	}
COPY_ASYNC(cuMemcpyAsync, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st))
COPY_ASYNC(cuMemcpyAsync_ptsz, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st))
COPY_ASYNC(cuMemcpyHtoDAsync_v2_ptsz, (CUdeviceptr d, const void *s, size_t n, CUstream st))
COPY_ASYNC(cuMemcpyDtoHAsync_v2_ptsz, (void *d, CUdeviceptr s, size_t n, CUstream st))
COPY_ASYNC(cuMemcpyDtoDAsync_v2, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st))
COPY_ASYNC(cuMemcpyDtoDAsync_v2_ptsz, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st))
#define PEER(NAME, ...)                                                            \
	CUresult NAME(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n \
		      __VA_ARGS__);                                                \
	CUresult NAME(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n \
		      __VA_ARGS__)                                                 \
	{                                                                          \
		CALL();                                                            \
		return dc && sc ? copy(d, s, n) : CUDA_ERROR_INVALID_CONTEXT;      \
	}
PEER(cuMemcpyPeer, )
PEER(cuMemcpyPeer_ptds, )
PEER(cuMemcpyPeerAsync, , CUstream st UNUSED)
PEER(cuMemcpyPeerAsync_ptsz, , CUstream st UNUSED)

/* A pitched copy: depth slices of height rows of width bytes. */
static CUresult copy_rect(CUmemorytype dt, void *dh, CUdeviceptr dd, size_t dx, size_t dy,
			  size_t dz, size_t dpitch, size_t dheight, CUmemorytype st,
			  const void *sh, CUdeviceptr sd, size_t sx, size_t sy, size_t sz,
			  size_t spitch, size_t sheight, size_t w, size_t h, size_t depth)
{
	if (dt == CU_MEMORYTYPE_ARRAY || st == CU_MEMORYTYPE_ARRAY)
		return CUDA_ERROR_NOT_SUPPORTED;
	unsigned char *dst = dt == CU_MEMORYTYPE_HOST ? dh : (unsigned char *)(uintptr_t)dd;
	const unsigned char *src = st == CU_MEMORYTYPE_HOST ? sh
							    : (const unsigned char *)(uintptr_t)sd;
	if (!dst || !src || (h > 1 && (dpitch < w || spitch < w)))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t z = 0; z < depth; z++)
		for (size_t y = 0; y < h; y++)
			memmove(dst + dx + ((dz + z) * dheight + dy + y) * dpitch,
				src + sx + ((sz + z) * sheight + sy + y) * spitch, w);
	return CUDA_SUCCESS;
}

static CUresult copy2d(const CUDA_MEMCPY2D *p)
{
	return copy_rect(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes, p->dstY, 0,
			 p->dstPitch, 0, p->srcMemoryType, p->srcHost, p->srcDevice,
			 p->srcXInBytes, p->srcY, 0, p->srcPitch, 0, p->WidthInBytes, p->Height, 1);
}

static CUresult copy3d(const CUDA_MEMCPY3D *p)
{
	return copy_rect(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes, p->dstY,
			 p->dstZ, p->dstPitch, p->dstHeight, p->srcMemoryType, p->srcHost,
			 p->srcDevice, p->srcXInBytes, p->srcY, p->srcZ, p->srcPitch,
			 p->srcHeight, p->WidthInBytes, p->Height, p->Depth);
}

#define RECT(NAME, FN, T, ...)                 \
	CUresult NAME(const T *p __VA_ARGS__); \
	CUresult NAME(const T *p __VA_ARGS__)  \
	{                                      \
		CALL();                        \
		return FN(p);                  \
	}
RECT(cuMemcpy2D_v2, copy2d, CUDA_MEMCPY2D, )
RECT(cuMemcpy2D_v2_ptds, copy2d, CUDA_MEMCPY2D, )
RECT(cuMemcpy2DAsync_v2, copy2d, CUDA_MEMCPY2D, , CUstream st UNUSED)
RECT(cuMemcpy2DAsync_v2_ptsz, copy2d, CUDA_MEMCPY2D, , CUstream st UNUSED)
RECT(cuMemcpy3D_v2, copy3d, CUDA_MEMCPY3D, )
RECT(cuMemcpy3D_v2_ptds, copy3d, CUDA_MEMCPY3D, )
RECT(cuMemcpy3DAsync_v2, copy3d, CUDA_MEMCPY3D, , CUstream st UNUSED)
RECT(cuMemcpy3DAsync_v2_ptsz, copy3d, CUDA_MEMCPY3D, , CUstream st UNUSED)

/* ---------------- streams ---------------- */

struct fk_stream {
	uint32_t magic;
};

CUresult cuStreamCreate(CUstream *s, unsigned flags)
{
	(void)flags;
	if (!cur)
		return CUDA_ERROR_INVALID_CONTEXT;
	struct fk_stream *x = block_new(sizeof(*x), true, 0);
	if (!x)
		return CUDA_ERROR_OUT_OF_MEMORY;
	x->magic = 0x6d727473;
	*s = (CUstream)x;
	return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(CUstream s)
{
	return block_free(s, true) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuStreamSynchronize(CUstream s)
{
	(void)s;
	pthread_mutex_lock(&lock);
	ev_all_done();
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize_ptsz(CUstream s);
CUresult cuStreamSynchronize_ptsz(CUstream s)
{
	(void)s;
	flog("call %s", __func__);
	pthread_mutex_lock(&lock);
	ev_all_done();
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

/* ---------------- errors ---------------- */

CUresult cuGetErrorString(CUresult rc, const char **s)
{
	switch (rc) {
	case CUDA_SUCCESS: *s = "no error"; break;
	case CUDA_ERROR_INVALID_VALUE: *s = "invalid argument"; break;
	case CUDA_ERROR_OUT_OF_MEMORY: *s = "out of memory"; break;
	case CUDA_ERROR_NOT_INITIALIZED: *s = "initialization error"; break;
	case CUDA_ERROR_INVALID_CONTEXT: *s = "invalid device context"; break;
	case CUDA_ERROR_INVALID_IMAGE: *s = "device kernel image is invalid"; break;
	case CUDA_ERROR_INVALID_PTX: *s = "a PTX JIT compilation failed"; break;
	case CUDA_ERROR_NOT_FOUND: *s = "named symbol not found"; break;
	case CUDA_ERROR_INVALID_HANDLE: *s = "invalid resource handle"; break;
	case CUDA_ERROR_FILE_NOT_FOUND: *s = "file not found"; break;
	default: *s = NULL; return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult rc, const char **s)
{
	static char buf[32];
	snprintf(buf, sizeof(buf), "CUDA_ERROR_%d", (int)rc);
	*s = rc == CUDA_SUCCESS ? "CUDA_SUCCESS" : buf;
	return CUDA_SUCCESS;
}

/* ---------------- modules ---------------- */

#define MOD_MAGIC 0x646f6d66u
#define FN_MAGIC 0x6e7566u

enum { K_PTX, K_FATBIN, K_ELF };
static const char *const kind_names[] = { "ptx", "fatbin", "elf" };

/* A library's globals exist once per context, as with the driver: mem
 * is a module's, per[] a library's (made on first use in a context). */
#define MAX_PER_CTX 8
struct fk_global {
	char name[128];
	size_t size;
	unsigned char *mem;
	struct {
		const struct fk_ctx *ctx;
		unsigned char *mem;
	} per[MAX_PER_CTX];
};

/* One probe call at a site: what the probe does. */
struct fk_effect {
	int kind;      /* enum ptx_site_kind's order: 0 entry, 1 exit, 2 access, ... */
	int count_map; /* gpux_map_M it counts in, or -1 */
	bool by_kernel; /* its key is the kernel id (else the probe has none) */
	bool printf_;
	bool exit_;
};

struct fk_func {
	uint32_t magic;
	struct fk_mod *mod;
	char name[256];
	bool clock;        /* gpux_clock_sample */
	int nparams;       /* from the .entry's .param list */
	uint32_t poff[16], psize[16];
	bool has_id;
	uint32_t kernel_id;
	struct fk_effect *eff;
	int neff;
	int dyn_smem;      /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
};

struct fk_mod {
	uint32_t magic;
	int kind;
	bool lib;
	int seq;           /* load number */
	char *text;        /* PTX, NUL-terminated; NULL for binaries */
	struct fk_global *g;
	int ng;
	struct fk_func **f;
	int nf;
	struct fk_mod *next;
};

static struct fk_mod *mods;
static int loads;

static const char *const site_kinds[] = { "kernel_entry", "kernel_exit", "access",
					  "func_entry", "func_exit" };

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || c == '.';
}

static size_t type_size(const char *t)
{
	static const struct { const char *t; size_t n; } ts[] = {
		{ ".b8", 1 }, { ".u8", 1 }, { ".s8", 1 }, { ".b16", 2 }, { ".u16", 2 },
		{ ".s16", 2 }, { ".f16", 2 }, { ".b32", 4 }, { ".u32", 4 }, { ".s32", 4 },
		{ ".f32", 4 }, { ".b64", 8 }, { ".u64", 8 }, { ".s64", 8 }, { ".f64", 8 },
	};
	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++)
		if (!strcmp(ts[i].t, t))
			return ts[i].n;
	return 0;
}

/* One line that defines a .global or .const variable: name and size. */
static bool global_line(const char *line, size_t len, char *name, size_t nlen, size_t *size)
{
	char buf[512];
	if (len >= sizeof(buf))
		return false;
	memcpy(buf, line, len);
	buf[len] = 0;
	char *cmt = strstr(buf, "//");
	if (cmt)
		*cmt = 0;
	char *save = NULL, *tok = strtok_r(buf, " \t;=", &save);
	bool global = false;
	size_t elem = 0;
	while (tok) {
		if (!strcmp(tok, ".extern"))
			return false;
		if (!strcmp(tok, ".global") || !strcmp(tok, ".const")) {
			global = true;
		} else if (!global) {
			if (strcmp(tok, ".visible") && strcmp(tok, ".weak") && strcmp(tok, ".common"))
				return false; /* an instruction, not a declaration */
		} else if (!strcmp(tok, ".align")) {
			tok = strtok_r(NULL, " \t;=", &save);
		} else if (type_size(tok)) {
			elem = type_size(tok);
		} else if (elem) {
			char *br = strchr(tok, '[');
			size_t n = 1;
			if (br) {
				*br = 0;
				n = strtoull(br + 1, NULL, 10);
				if (!n)
					return false;
			}
			snprintf(name, nlen, "%s", tok);
			*size = elem * n;
			return true;
		}
		tok = strtok_r(NULL, " \t;=", &save);
	}
	return false;
}

/* A global of the module: zeroed memory (a library's: per context). */
static void add_global(struct fk_mod *m, const char *name, size_t size)
{
	struct fk_global *g = realloc(m->g, (size_t)(m->ng + 1) * sizeof(*g));
	if (!g)
		return;
	m->g = g;
	g = &m->g[m->ng];
	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->size = size;
	g->mem = m->lib ? NULL : block_new(size, false, 0); /* zeroed */
	if (g->mem || m->lib)
		m->ng++;
}

static void parse_globals(struct fk_mod *m)
{
	const char *p = m->text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char name[128];
		size_t size;
		if ((memmem(p, len, ".global", 7) || memmem(p, len, ".const", 6)) &&
		    global_line(p, len, name, sizeof(name), &size))
			add_global(m, name, size);
		p += len + (nl ? 1 : 0);
	}
}

/* The body of function name (kind ".entry" or ".func"): [*b, *e). */
static bool body_of(const char *text, const char *kind, const char *name, const char **b,
		    const char **e)
{
	size_t nlen = strlen(name);
	for (const char *p = text; (p = strstr(p, kind)); p += strlen(kind)) {
		const char *q = p + strlen(kind);
		if (p > text && ident_char(p[-1]))
			continue;
		while (*q == ' ' || *q == '\t' || *q == '\n')
			q++;
		if (*q == '(') { /* .func (.param ...) name */
			int depth = 0;
			for (; *q; q++)
				if (*q == '(')
					depth++;
				else if (*q == ')' && --depth == 0)
					break;
			if (!*q)
				return false;
			q++;
			while (*q == ' ' || *q == '\t' || *q == '\n')
				q++;
		}
		if (strncmp(q, name, nlen) || ident_char(q[nlen]))
			continue;
		const char *brace = strpbrk(q, "{;");
		if (!brace || *brace == ';')
			continue; /* a prototype */
		int depth = 0;
		for (const char *r = brace; *r; r++)
			if (*r == '{')
				depth++;
			else if (*r == '}' && --depth == 0) {
				*b = brace;
				*e = r;
				return true;
			}
		return false;
	}
	return false;
}

static void probe_effect(const struct fk_mod *m, const char *probe, struct fk_effect *ef)
{
	const char *b, *e;
	ef->count_map = -1;
	if (!body_of(m->text, ".func", probe, &b, &e))
		return;
	size_t n = (size_t)(e - b);
	const char *mp = memmem(b, n, GPUX_SYM_MAP, strlen(GPUX_SYM_MAP));
	/* a hashed count calls the library; an array's is inline (ptx_array.c) */
	static const char arr_count[] = "count() into array";
	if ((memmem(b, n, "gpux_h_agg_count", 16) || memmem(b, n, arr_count, sizeof(arr_count) - 1)) &&
	    mp)
		ef->count_map = atoi(mp + strlen(GPUX_SYM_MAP));
	/* the JIT's `kernel`: the low half of the third context word */
	ef->by_kernel = memmem(b, n, "%c2, 0xffffffff", 15) != NULL;
	ef->printf_ = memmem(b, n, "gpux_h_printf", 13) != NULL;
	ef->exit_ = memmem(b, n, "gpux_h_exit", 11) != NULL;
}

/* The trampolines in a kernel's body: its kernel_id and what its probes do. */
static void parse_sites(struct fk_func *f)
{
	const char *b, *e;
	if (!f->mod->text || !body_of(f->mod->text, ".entry", f->name, &b, &e))
		return;
	static const char site_tag[] = "// gpux: site ";
	const char *p = b;
	while ((p = memmem(p, (size_t)(e - p), site_tag, sizeof(site_tag) - 1))) {
		p += sizeof(site_tag) - 1;
		const char *comma = strchr(p, ',');
		if (!comma || comma > e)
			break;
		int kind = -1;
		for (int k = 0; k < 5; k++)
			if (!strncmp(comma + 2, site_kinds[k], strlen(site_kinds[k])))
				kind = k;
		const char *next = memmem(p, (size_t)(e - p), site_tag, sizeof(site_tag) - 1);
		const char *end = next ? next : e;
		/* mov.b64 %gpux_c2, 0xW2: the third context word */
		const char *mv = memmem(p, (size_t)(end - p), "%gpux_c2, 0x", 12);
		if (mv) {
			uint64_t w2 = strtoull(mv + 10, NULL, 16);
			f->kernel_id = (uint32_t)w2;
			f->has_id = true;
		}
		/* a probe call, or a counted access (its probe in a comment);
		 * the counted form's call at an exit is neither */
		for (const char *c = p; c < end;) {
			const char *call = memmem(c, (size_t)(end - c), "call (gpux_r), ", 15);
			const char *inc = memmem(c, (size_t)(end - c), "add.u64 %gpux_n", 15);
			const char *at = call && (!inc || call < inc) ? call : inc;
			if (!at)
				break;
			if (at == call) {
				c = call + 15;
			} else {
				const char *nl = memchr(inc, '\n', (size_t)(end - inc));
				const char *cm = memmem(inc, (size_t)((nl ? nl : end) - inc), "// ", 3);
				c = cm ? cm + 3 : (nl ? nl : end);
				if (!cm)
					continue;
			}
			char probe[64];
			size_t k = 0;
			while (k < sizeof(probe) - 1 && ident_char(c[k]) && c[k] != '.')
				probe[k] = c[k], k++;
			probe[k] = 0;
			size_t sl = strlen(GPUX_COUNTED_SUFFIX);
			if (k > sl && !strcmp(probe + k - sl, GPUX_COUNTED_SUFFIX))
				continue;
			struct fk_effect *ef = realloc(f->eff, (size_t)(f->neff + 1) * sizeof(*ef));
			if (!ef)
				return;
			f->eff = ef;
			ef = &f->eff[f->neff++];
			memset(ef, 0, sizeof(*ef));
			ef->kind = kind;
			probe_effect(f->mod, probe, ef);
		}
		p = end;
	}
}

/* The .param list after an .entry's name, as the driver lays the
 * parameter buffer out: each at its alignment (its size), in order. */
static void parse_params(struct fk_func *f, const char *p)
{
	const char *end = strchr(p, ')'), *open = strchr(p, '(');
	if (!open || !end || end < open)
		return;
	uint32_t off = 0;
	for (const char *q = open; (q = strstr(q, ".param")) && q < end && f->nparams < 16; q += 6) {
		const char *t = q + 6;
		while (*t == ' ' || *t == '\t')
			t++;
		uint32_t size = !strncmp(t, ".u64", 4) || !strncmp(t, ".s64", 4) ||
				!strncmp(t, ".b64", 4) || !strncmp(t, ".f64", 4) ? 8
			      : !strncmp(t, ".u16", 4) || !strncmp(t, ".s16", 4) ? 2
			      : !strncmp(t, ".u8", 3) || !strncmp(t, ".s8", 3) ? 1 : 4;
		off = (off + size - 1) & ~(size - 1);
		f->poff[f->nparams] = off;
		f->psize[f->nparams++] = size;
		off += size;
	}
}

static void parse_entries(struct fk_mod *m)
{
	for (const char *p = m->text; (p = strstr(p, ".entry")); p += 6) {
		if ((p > m->text && ident_char(p[-1])) || ident_char(p[6]))
			continue;
		const char *q = p + 6;
		while (*q == ' ' || *q == '\t')
			q++;
		size_t n = 0;
		while (ident_char(q[n]) && q[n] != '.')
			n++;
		struct fk_func *f = calloc(1, sizeof(*f));
		struct fk_func **v = realloc(m->f, (size_t)(m->nf + 1) * sizeof(*v));
		if (!f || !v || !n || n >= sizeof(f->name)) {
			free(f);
			if (v)
				m->f = v;
			continue;
		}
		m->f = v;
		f->magic = FN_MAGIC;
		f->mod = m;
		memcpy(f->name, q, n);
		f->clock = !strcmp(f->name, GPUX_SYM_CLOCK_SAMPLE);
		parse_params(f, q + n);
		m->f[m->nf++] = f;
		parse_sites(f);
	}
}

/* The defined symbols of a linked cubin that its PTX inputs lack (those
 * of a cubin input: the helper library's): globals as zeroed memory,
 * entries as functions (gpux_clock_sample takes its one pointer). The
 * gpux_h_ functions it defines go into helpers, comma-separated. */
static void elf_symbols(struct fk_mod *m, const unsigned char *b, size_t len, char *helpers,
			size_t hlen)
{
	uint64_t shoff;
	uint16_t shentsize, shnum;
	size_t at = 0;
	helpers[0] = 0;
	if (len < 64)
		return;
	memcpy(&shoff, b + 0x28, 8);
	memcpy(&shentsize, b + 0x3a, 2);
	memcpy(&shnum, b + 0x3c, 2);
	if (shentsize < 64 || shoff > len || (uint64_t)shentsize * shnum > len - shoff)
		return;
	for (unsigned i = 0; i < shnum; i++) {
		const unsigned char *sh = b + shoff + (uint64_t)i * shentsize;
		uint32_t type, link;
		uint64_t off, size, entsize, soff, ssize;
		memcpy(&type, sh + 4, 4);
		if (type != 2) /* SHT_SYMTAB */
			continue;
		memcpy(&off, sh + 0x18, 8);
		memcpy(&size, sh + 0x20, 8);
		memcpy(&link, sh + 0x28, 4);
		memcpy(&entsize, sh + 0x38, 8);
		if (link >= shnum || entsize < 24 || off > len || size > len - off)
			return;
		const unsigned char *str = b + shoff + (uint64_t)link * shentsize;
		memcpy(&soff, str + 0x18, 8);
		memcpy(&ssize, str + 0x20, 8);
		if (soff > len || ssize > len - soff)
			return;
		for (uint64_t k = 0; k + entsize <= size; k += entsize) {
			const unsigned char *sym = b + off + k;
			uint32_t name;
			uint16_t shndx;
			uint64_t bytes;
			memcpy(&name, sym, 4);
			memcpy(&shndx, sym + 6, 2);
			memcpy(&bytes, sym + 16, 8);
			int stype = sym[4] & 0xf;
			if (!shndx || name >= ssize || !memchr(b + soff + name, 0, ssize - name))
				continue;
			const char *nm = (const char *)b + soff + name;
			if (stype == 2 && !strncmp(nm, "gpux_h_", 7) && at < hlen)
				at += (size_t)snprintf(helpers + at, hlen - at, "%s%s", at ? "," : "", nm);
			bool have = false;
			for (int g = 0; g < m->ng && !have; g++)
				have = !strcmp(m->g[g].name, nm);
			for (int g = 0; g < m->nf && !have; g++)
				have = !strcmp(m->f[g]->name, nm);
			if (stype == 1 && bytes && !have)
				add_global(m, nm, bytes);
			struct fk_func *f, **v;
			if (stype != 2 || !(sym[5] & 0x10) || have || strlen(nm) >= sizeof(f->name) ||
			    !(f = calloc(1, sizeof(*f))))
				continue;
			if (!(v = realloc(m->f, (size_t)(m->nf + 1) * sizeof(*v)))) {
				free(f);
				continue;
			}
			m->f = v;
			f->magic = FN_MAGIC;
			f->mod = m;
			strcpy(f->name, nm);
			f->clock = !strcmp(nm, GPUX_SYM_CLOCK_SAMPLE);
			f->nparams = f->clock;
			f->psize[0] = 8;
			m->f[m->nf++] = f;
		}
	}
}

static void mod_free(struct fk_mod *m)
{
	for (int i = 0; i < m->ng; i++) {
		if (m->g[i].mem)
			block_free(m->g[i].mem, false);
		for (int j = 0; j < MAX_PER_CTX && m->g[i].per[j].mem; j++)
			block_free(m->g[i].per[j].mem, false);
	}
	for (int i = 0; i < m->nf; i++) {
		free(m->f[i]->eff);
		free(m->f[i]);
	}
	free(m->g);
	free(m->f);
	free(m->text);
	free(m);
}

static void save_image(int seq, int kind, const void *image, size_t len)
{
	const char *dir = getenv("FAKE_CUDA_SAVE");
	if (!dir || !*dir)
		return;
	char path[4096];
	snprintf(path, sizeof(path), "%s/load_%d.%s", dir, seq, kind == K_PTX ? "ptx" : "bin");
	FILE *f = fopen(path, "wb");
	if (!f)
		return;
	fwrite(image, 1, len, f);
	fclose(f);
}

/* ptxas on the text: 0, or -1 with its first line of complaint in log.
 * With cubin, the output is kept there (malloc'd, *cubin_len bytes). */
/* An ELF64 image's bytes, to the end of its last header table. */
static size_t elf_size(const void *image)
{
	const unsigned char *b = image;
	if (memcmp(b, "\177ELF", 4) || b[4] != 2)
		return 0;
	uint64_t phoff, shoff;
	uint16_t phentsize, phnum, shentsize, shnum;
	memcpy(&phoff, b + 32, 8);
	memcpy(&shoff, b + 40, 8);
	memcpy(&phentsize, b + 54, 2);
	memcpy(&phnum, b + 56, 2);
	memcpy(&shentsize, b + 58, 2);
	memcpy(&shnum, b + 60, 2);
	uint64_t a = phoff + (uint64_t)phentsize * phnum, c = shoff + (uint64_t)shentsize * shnum;
	return (size_t)(a > c ? a : c);
}

/* Runs argv[0] with stdout to /dev/null and stderr to errf (NULL: the
 * test's): 0 when it exits 0. */
static int run(char *const argv[], const char *errf)
{
	pid_t pid;
	int status = 1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	if (errf)
		posix_spawn_file_actions_addopen(&fa, 2, errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) == 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	posix_spawn_file_actions_destroy(&fa);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int run_ptxas(const char *text, char *log, size_t loglen, void **cubin, size_t *cubin_len)
{
	const char *ptxas = getenv("FAKE_CUDA_PTXAS");
	if (!ptxas || !*ptxas)
		return -1;
	char in[] = "/tmp/fake_cuda_XXXXXX";
	int fd = mkstemp(in);
	if (fd < 0)
		return 0;
	size_t len = strlen(text);
	bool wrote = write(fd, text, len) == (ssize_t)len;
	close(fd);
	char errf[64], outf[64];
	snprintf(errf, sizeof(errf), "%s.err", in);
	snprintf(outf, sizeof(outf), "%s.cubin", in);
	/* Triton's PTX targets sm_90a, which a real sm_90 device JITs */
	char *argv[] = { (char *)ptxas, strstr(text, ".target sm_90a") ? "-arch=sm_90a" : "-arch=sm_90",
			 "-o", cubin ? outf : "/dev/null", in, NULL };
	int rc = wrote ? run(argv, errf) : -1;
	if (rc && log && loglen) {
		FILE *f = fopen(errf, "r");
		log[0] = 0;
		if (f) {
			if (!fgets(log, (int)loglen, f))
				log[0] = 0;
			fclose(f);
		}
		log[strcspn(log, "\n")] = 0;
	}
	if (!rc && cubin) {
		FILE *f = fopen(outf, "rb");
		*cubin = NULL;
		if (f && !fseek(f, 0, SEEK_END)) {
			long n = ftell(f);
			*cubin = n > 0 ? malloc((size_t)n) : NULL;
			rewind(f);
			if (*cubin && fread(*cubin, 1, (size_t)n, f) == (size_t)n) {
				*cubin_len = (size_t)n;
			} else {
				free(*cubin);
				*cubin = NULL;
			}
		}
		if (f)
			fclose(f);
		rc = *cubin ? 0 : -1;
		unlink(outf);
	}
	unlink(errf);
	unlink(in);
	return rc;
}

static int classify(const void *image, size_t *len)
{
	const unsigned char *b = image;
	uint32_t magic;
	memcpy(&magic, b, 4);
	if (magic == 0x466243b1u) { /* __fatBinC_Wrapper_t: {magic, version, data, ...} */
		const unsigned char *data;
		memcpy(&data, b + 8, sizeof(data));
		return classify(data, len) == K_FATBIN ? K_FATBIN : -1;
	}
	if (magic == 0xba55ed50u) {
		uint16_t hsize;
		uint64_t size;
		memcpy(&hsize, b + 6, 2);
		memcpy(&size, b + 8, 8);
		*len = hsize + size;
		return K_FATBIN;
	}
	if (!memcmp(b, "\x7f" "ELF", 4)) {
		*len = elf_size(b);
		return K_ELF;
	}
	*len = strlen(image);
	return strstr(image, ".version") ? K_PTX : -1;
}

/* ---------------- the linker ----------------
 * One PTX input, made a cubin by ptxas (FAKE_CUDA_PTXAS); a module loaded
 * from that cubin is parsed from the PTX it came from. */

#define LINK_MAGIC 0x6b6e696cu

/* A link: one PTX input (numba's), or units of relocatable device code
 * (PTX and relocatable cubins) that ptxas -c and nvlink link for real
 * (FAKE_CUDA_PTXAS; nvlink beside it). ptx: the PTX inputs one after
 * the other, what a module loaded from the result runs. */
#define MAX_LINK_IN 16
struct fk_link {
	uint32_t magic;
	char *ptx;
	int nptx;
	char *unit_ptx[MAX_LINK_IN];
	void *unit_cubin[MAX_LINK_IN];
	size_t unit_cubin_len[MAX_LINK_IN];
	int ncubin;
	unsigned maxreg;   /* CU_JIT_MAX_REGISTERS */
	void *cubin;
	size_t cubin_len;
	struct fk_link *next;
};
static struct fk_link *links;

/* Cubins of relocatable links, kept after their link is destroyed (the
 * runtime loads its copy later), with the PTX they were linked from. */
struct fk_linked {
	void *cubin;
	size_t len;
	char *ptx;
	struct fk_linked *next;
};
static struct fk_linked *linked_all;

static uint64_t fnv(const void *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * 0x100000001b3ull;
	return h;
}

static void linked_path(char *buf, size_t len, const char *dir, const void *cubin, size_t n)
{
	snprintf(buf, len, "%s/%016llx.ptx", dir, (unsigned long long)fnv(cubin, n));
}

/* FAKE_CUDA_LINKED_DIR: the PTX of a cubin linked in an earlier process,
 * kept with it in linked_all; NULL if none. Called with lock held. */
static const char *linked_earlier(const void *image)
{
	const char *dir = getenv("FAKE_CUDA_LINKED_DIR");
	size_t n = elf_size(image);
	if (!dir || !*dir || !n)
		return NULL;
	char path[4096];
	linked_path(path, sizeof(path), dir, image, n);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *ptx = NULL;
	size_t cap = 0, len = 0, got;
	char chunk[4096];
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		char *p = len + got + 1 > cap ? realloc(ptx, cap = 2 * (len + got + 1)) : ptx;
		if (!p)
			break;
		ptx = p;
		memcpy(ptx + len, chunk, got);
		len += got;
	}
	fclose(f);
	struct fk_linked *k = ptx ? calloc(1, sizeof(*k)) : NULL;
	if (!k || !(k->cubin = malloc(n))) {
		free(k);
		free(ptx);
		return NULL;
	}
	ptx[len] = '\0';
	memcpy(k->cubin, image, n);
	k->len = n;
	k->ptx = ptx;
	k->next = linked_all;
	linked_all = k;
	return ptx;
}

static const char *linked_ptx(const void *image)
{
	const char *ptx = NULL;
	pthread_mutex_lock(&lock);
	for (struct fk_link *l = links; l && !ptx; l = l->next)
		if (l->cubin == image)
			ptx = l->ptx;
	for (struct fk_linked *k = linked_all; k && !ptx; k = k->next)
		if (!memcmp(k->cubin, image, k->len))
			ptx = k->ptx;
	if (!ptx)
		ptx = linked_earlier(image);
	pthread_mutex_unlock(&lock);
	return ptx;
}

static bool jit_refused(const char *api, unsigned n, const CUjit_option *o);

CUresult cuLinkCreate_v2(unsigned n, CUjit_option *o, void **v, CUlinkState *st)
{
	if (jit_refused("cuLinkCreate", n, o))
		return CUDA_ERROR_INVALID_VALUE;
	struct fk_link *l = calloc(1, sizeof(*l));
	if (!l)
		return CUDA_ERROR_OUT_OF_MEMORY;
	l->magic = LINK_MAGIC;
	for (unsigned i = 0; i < n; i++)
		if (o[i] == CU_JIT_MAX_REGISTERS)
			l->maxreg = (unsigned)(uintptr_t)v[i];
	pthread_mutex_lock(&lock);
	l->next = links;
	links = l;
	pthread_mutex_unlock(&lock);
	*st = (CUlinkState)l;
	return CUDA_SUCCESS;
}

CUresult cuLinkAddData_v2(CUlinkState st, CUjitInputType type, void *data, size_t size,
			  const char *name, unsigned n, CUjit_option *o, void **v)
{
	(void)n, (void)o, (void)v, (void)name;
	struct fk_link *l = (struct fk_link *)st;
	if (!l || l->magic != LINK_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	if (l->nptx + l->ncubin == MAX_LINK_IN)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (type == CU_JIT_INPUT_CUBIN) {
		if (getenv("FAKE_CUDA_LINK_NO_CUBIN")) {
			flog("cuLinkAddData cubin: refused");
			return CUDA_ERROR_INVALID_IMAGE;
		}
		if (!(l->unit_cubin[l->ncubin] = malloc(size)))
			return CUDA_ERROR_OUT_OF_MEMORY;
		memcpy(l->unit_cubin[l->ncubin], data, size);
		l->unit_cubin_len[l->ncubin++] = size;
		flog("cuLinkAddData cubin");
		return CUDA_SUCCESS;
	}
	if (type != CU_JIT_INPUT_PTX)
		return CUDA_ERROR_NOT_SUPPORTED;
	char *text = strndup(data, size);
	size_t have = l->ptx ? strlen(l->ptx) : 0;
	char *all = text ? realloc(l->ptx, have + strlen(text) + 2) : NULL;
	if (!all) {
		free(text);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (!have)
		all[0] = 0;
	strcat(strcat(all, have ? "\n" : ""), text);
	l->ptx = all;
	l->unit_ptx[l->nptx++] = text;
	flog("cuLinkAddData ptx %s", strstr(text, "call (gpux_r), gpux_probe_") ? "patched"
										 : "plain");
	return CUDA_SUCCESS;
}

#undef cuLinkAddData
CUresult cuLinkAddData(CUlinkState st, CUjitInputType type, void *data, size_t size,
		       const char *name, unsigned n, CUjit_option *o, void **v);
CUresult cuLinkAddData(CUlinkState st, CUjitInputType type, void *data, size_t size,
		       const char *name, unsigned n, CUjit_option *o, void **v)
{
	return cuLinkAddData_v2(st, type, data, size, name, n, o, v);
}

static bool write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(p, 1, n, f) == n;
	if (f && fclose(f))
		ok = false;
	return ok;
}

/* ptxas -c each PTX unit (within maxreg) and nvlink them all for the
 * fake device's sm; stderr of both goes to the test's. */
static int link_units(struct fk_link *l)
{
	const char *ptxas = getenv("FAKE_CUDA_PTXAS");
	if (!ptxas || !*ptxas)
		return -1;
	char dir[] = "/tmp/fake_link_XXXXXX", nvlink[4096], out[64], reg[32], arch[24];
	if (!mkdtemp(dir))
		return -1;
	snprintf(nvlink, sizeof(nvlink), "%s", ptxas);
	char *slash = strrchr(nvlink, '/');
	snprintf(slash ? slash + 1 : nvlink, sizeof(nvlink) - (size_t)(slash ? slash + 1 - nvlink : 0),
		 "nvlink");
	snprintf(reg, sizeof(reg), "-maxrregcount=%u", l->maxreg);
	snprintf(arch, sizeof(arch), "-arch=sm_%d", fake_cc());
	char obj[MAX_LINK_IN][64];
	char *largv[MAX_LINK_IN + 6];
	int n = 0, rc = 0;
	largv[n++] = nvlink;
	largv[n++] = arch;
	for (int i = 0; i < l->nptx + l->ncubin && !rc; i++) {
		char src[64];
		snprintf(obj[i], sizeof(obj[i]), "%s/u%d.o", dir, i);
		if (i < l->nptx) {
			snprintf(src, sizeof(src), "%s/u%d.ptx", dir, i);
			char parch[32];
			snprintf(parch, sizeof(parch), "%s%s", arch,
				 strstr(l->unit_ptx[i], ".target sm_90a") ? "a" : "");
			char *pargv[] = { (char *)ptxas, parch, "-c", l->maxreg ? reg : "-O3",
					  "-o", obj[i], src, NULL };
			rc = write_file(src, l->unit_ptx[i], strlen(l->unit_ptx[i])) ? run(pargv, NULL) : -1;
			unlink(src);
		} else {
			int c = i - l->nptx;
			rc = write_file(obj[i], l->unit_cubin[c], l->unit_cubin_len[c]) ? 0 : -1;
		}
		largv[n++] = obj[i];
	}
	snprintf(out, sizeof(out), "%s/linked.cubin", dir);
	largv[n++] = "-o";
	largv[n++] = out;
	largv[n] = NULL;
	if (!rc)
		rc = run(largv, NULL);
	FILE *f = rc ? NULL : fopen(out, "rb");
	if (f && !fseek(f, 0, SEEK_END)) {
		long sz = ftell(f);
		rewind(f);
		l->cubin = sz > 0 ? malloc((size_t)sz) : NULL;
		if (l->cubin && fread(l->cubin, 1, (size_t)sz, f) == (size_t)sz)
			l->cubin_len = (size_t)sz;
	}
	if (f)
		fclose(f);
	for (int i = 2; i < n - 2; i++)
		unlink(largv[i]);
	unlink(out);
	rmdir(dir);
	struct fk_linked *k = l->cubin_len ? calloc(1, sizeof(*k)) : NULL;
	if (!k || !(k->cubin = malloc(l->cubin_len)) || !(k->ptx = strdup(l->ptx ? l->ptx : ""))) {
		if (k)
			free(k->cubin);
		free(k);
		return -1;
	}
	memcpy(k->cubin, l->cubin, l->cubin_len);
	k->len = l->cubin_len;
	const char *keep = getenv("FAKE_CUDA_LINKED_DIR");
	if (keep && *keep) {
		char path[4096];
		linked_path(path, sizeof(path), keep, k->cubin, k->len);
		write_file(path, k->ptx, strlen(k->ptx));
	}
	pthread_mutex_lock(&lock);
	k->next = linked_all;
	linked_all = k;
	pthread_mutex_unlock(&lock);
	flog("cuLinkComplete units=%d maxreg=%u", l->nptx + l->ncubin, l->maxreg);
	return 0;
}

CUresult cuLinkComplete(CUlinkState st, void **cubin, size_t *size)
{
	struct fk_link *l = (struct fk_link *)st;
	char log[256] = "";
	if (!l || l->magic != LINK_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	if ((!l->ptx && !l->ncubin) || l->cubin)
		return CUDA_ERROR_INVALID_VALUE;
	if (l->nptx + l->ncubin > 1) {
		if (link_units(l)) {
			flog("cuLinkComplete: the link failed");
			return CUDA_ERROR_INVALID_PTX;
		}
		*cubin = l->cubin;
		*size = l->cubin_len;
		return CUDA_SUCCESS;
	}
	if (run_ptxas(l->ptx, log, sizeof(log), &l->cubin, &l->cubin_len)) {
		flog("cuLinkComplete: ptxas failed: %s", log);
		return CUDA_ERROR_INVALID_PTX;
	}
	*cubin = l->cubin;
	*size = l->cubin_len;
	return CUDA_SUCCESS;
}

CUresult cuLinkDestroy(CUlinkState st)
{
	struct fk_link *l = (struct fk_link *)st;
	pthread_mutex_lock(&lock);
	for (struct fk_link **lp = &links; *lp; lp = &(*lp)->next)
		if (*lp == l) {
			*lp = l->next;
			pthread_mutex_unlock(&lock);
			free(l->ptx);
			free(l->cubin);
			for (int i = 0; i < l->nptx; i++)
				free(l->unit_ptx[i]);
			for (int i = 0; i < l->ncubin; i++)
				free(l->unit_cubin[i]);
			free(l);
			return CUDA_SUCCESS;
		}
	pthread_mutex_unlock(&lock);
	return CUDA_ERROR_INVALID_HANDLE;
}

/* The first uncompressed PTX element of a fatbin container (or of the
 * one a wrapper points at), malloc'd, or NULL: what the driver would JIT
 * when the fatbin has no SASS for the device. */
static char *fatbin_ptx(const void *image)
{
	const unsigned char *b = image;
	uint32_t magic;
	memcpy(&magic, b, 4);
	if (magic == 0x466243b1u) {
		memcpy(&b, b + 8, sizeof(b));
		memcpy(&magic, b, 4);
	}
	if (magic != 0xba55ed50u)
		return NULL;
	uint16_t hsize;
	uint64_t size;
	memcpy(&hsize, b + 6, 2);
	memcpy(&size, b + 8, 8);
	for (uint64_t at = hsize; at + 24 <= hsize + size;) {
		uint16_t kind;
		uint32_t eh, comp;
		uint64_t plen;
		memcpy(&kind, b + at, 2);
		memcpy(&eh, b + at + 4, 4);
		memcpy(&plen, b + at + 8, 8);
		memcpy(&comp, b + at + 16, 4);
		if (kind == 1 && !comp)
			return strndup((const char *)b + at + eh, (size_t)plen);
		at += eh + plen;
	}
	return NULL;
}

static CUresult load(struct fk_mod **out, const void *image, const char *api, bool lib,
		     char *errlog, size_t errlen)
{
	if (!image)
		return CUDA_ERROR_INVALID_VALUE;
	size_t len;
	int kind = classify(image, &len);
	pthread_mutex_lock(&lock);
	int seq = ++loads;
	pthread_mutex_unlock(&lock);
	if (kind < 0) {
		flog("load %d %s: not an image", seq, api);
		return CUDA_ERROR_INVALID_IMAGE;
	}
	save_image(seq, kind, image, len);
	bool patched = kind == K_PTX && strstr(image, "call (gpux_r), gpux_probe_");
	if (kind == K_PTX && patched && getenv("FAKE_CUDA_REFUSE")) {
		flog("load %d %s ptx patched: refused", seq, api);
		if (errlog && errlen)
			snprintf(errlog, errlen, "ptxas fatal   : the fake driver refuses patched PTX\n"
				 "second line");
		return CUDA_ERROR_INVALID_PTX;
	}
	if (kind == K_PTX && getenv("FAKE_CUDA_PTXAS") && run_ptxas(image, errlog, errlen, NULL, NULL)) {
		flog("load %d %s ptx %s: ptxas failed: %s", seq, api, patched ? "patched" : "plain",
		     errlog ? errlog : "");
		return CUDA_ERROR_INVALID_PTX;
	}
	struct fk_mod *m = calloc(1, sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->magic = MOD_MAGIC;
	m->kind = kind;
	m->lib = lib;
	m->seq = seq;
	const char *linked = kind == K_ELF ? linked_ptx(image) : NULL;
	if (kind == K_PTX || linked) {
		if (!(m->text = strdup(linked ? linked : image))) {
			free(m);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
	} else if (kind == K_FATBIN) {
		m->text = fatbin_ptx(image); /* one without PTX has no kernels here */
	}
	if (m->text) {
		parse_globals(m);
		parse_entries(m);
	}
	char helpers[256] = "";
	if (linked || (kind == K_ELF && fk_sass_on))
		elf_symbols(m, image, len, helpers, sizeof(helpers));
	char entries[512] = "";
	size_t at = 0;
	for (int i = 0; i < m->nf && at < sizeof(entries); i++)
		at += (size_t)snprintf(entries + at, sizeof(entries) - at, "%s%s", i ? "," : "",
				       m->f[i]->name);
	if (linked)
		patched = strstr(linked, "call (gpux_r), gpux_probe_");
	flog("load %d %s %s %s entries=%s globals=%d%s%s", seq, api, kind_names[kind],
	     !m->text ? "-" : patched ? "patched" : "plain", entries, m->ng,
	     *helpers ? " helpers=" : "", helpers);
	pthread_mutex_lock(&lock);
	m->next = mods;
	mods = m;
	pthread_mutex_unlock(&lock);
	*out = m;
	return CUDA_SUCCESS;
}

static struct fk_mod *mod_of(const void *h, bool lib)
{
	const struct fk_mod *m = h;
	pthread_mutex_lock(&lock);
	for (struct fk_mod *x = mods; x; x = x->next)
		if (x == m && x->lib == lib) {
			pthread_mutex_unlock(&lock);
			return x;
		}
	pthread_mutex_unlock(&lock);
	return NULL;
}

static CUresult unload(const void *h, bool lib)
{
	pthread_mutex_lock(&lock);
	for (struct fk_mod **mp = &mods; *mp; mp = &(*mp)->next)
		if (*mp == h && (*mp)->lib == lib) {
			struct fk_mod *m = *mp;
			*mp = m->next;
			pthread_mutex_unlock(&lock);
			flog("unload %d", m->seq);
			mod_free(m);
			return CUDA_SUCCESS;
		}
	pthread_mutex_unlock(&lock);
	return CUDA_ERROR_INVALID_HANDLE;
}

/* JIT options: fills the error log buffer the caller gave. */
static void jit_log(unsigned n, CUjit_option *o, void **v, const char *log)
{
	char *buf = NULL;
	size_t len = 0;
	for (unsigned i = 0; i < n; i++)
		if (o[i] == CU_JIT_ERROR_LOG_BUFFER)
			buf = v[i];
		else if (o[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
			len = (size_t)(uintptr_t)v[i];
	if (buf && len)
		snprintf(buf, len, "%s", log);
}

CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
	if (!cur)
		return CUDA_ERROR_INVALID_CONTEXT;
	return load((struct fk_mod **)m, image, "cuModuleLoadData", false, NULL, 0);
}

/* CU_JIT_SPLIT_COMPILE (34), by value as the runtime passes it: logged,
 * or refused as a driver that predates it would (FAKE_CUDA_OLD_JIT). */
static bool jit_refused(const char *api, unsigned n, const CUjit_option *o)
{
	for (unsigned i = 0; i < n; i++)
		if ((int)o[i] == 34) {
			bool old = getenv("FAKE_CUDA_OLD_JIT") != NULL;
			flog("%s: jit option split-compile%s", api, old ? " refused" : "");
			return old;
		}
	return false;
}

CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, CUjit_option *o,
			    void **v)
{
	if (!cur)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (jit_refused("cuModuleLoadDataEx", n, o))
		return CUDA_ERROR_INVALID_VALUE;
	char log[512] = "", regs[32] = "";
	for (unsigned i = 0; i < n; i++)
		if (o[i] == CU_JIT_MAX_REGISTERS)
			snprintf(regs, sizeof(regs), " maxregs=%u", (unsigned)(uintptr_t)v[i]);
	CUresult rc = load((struct fk_mod **)m, image, "cuModuleLoadDataEx", false, log,
			   sizeof(log));
	if (*regs)
		flog("cuModuleLoadDataEx%s: %s", regs, rc == CUDA_SUCCESS ? "loaded" : "failed");
	jit_log(n, o, v, rc == CUDA_SUCCESS ? "" : log);
	return rc;
}

CUresult cuModuleLoadFatBinary(CUmodule *m, const void *image)
{
	if (!cur)
		return CUDA_ERROR_INVALID_CONTEXT;
	return load((struct fk_mod **)m, image, "cuModuleLoadFatBinary", false, NULL, 0);
}

CUresult cuModuleLoad(CUmodule *m, const char *path)
{
	if (!cur)
		return CUDA_ERROR_INVALID_CONTEXT;
	FILE *f = fopen(path, "rb");
	if (!f)
		return CUDA_ERROR_FILE_NOT_FOUND;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	char chunk[4096];
	size_t n;
	while (mem && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, mem);
	fclose(f);
	if (!mem)
		return CUDA_ERROR_OUT_OF_MEMORY;
	fputc(0, mem);
	fclose(mem);
	CUresult rc = load((struct fk_mod **)m, buf, "cuModuleLoad", false, NULL, 0);
	free(buf);
	return rc;
}

CUresult cuModuleUnload(CUmodule m)
{
	return unload(m, false);
}

/* A library global's copy in the current context, made zeroed on first
 * use; NULL without a context. */
static unsigned char *per_ctx(struct fk_global *g)
{
	if (!cur)
		return NULL;
	pthread_mutex_lock(&lock);
	unsigned char *mem = NULL;
	for (int j = 0; j < MAX_PER_CTX && !mem; j++) {
		if (!g->per[j].mem) {
			g->per[j].ctx = cur;
			g->per[j].mem = block_new(g->size, false, 0);
		}
		if (g->per[j].ctx == cur)
			mem = g->per[j].mem;
	}
	pthread_mutex_unlock(&lock);
	return mem;
}

static CUresult get_global(struct fk_mod *m, CUdeviceptr *d, size_t *bytes, const char *name)
{
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	for (int i = 0; i < m->ng; i++)
		if (!strcmp(m->g[i].name, name)) {
			unsigned char *mem = m->lib ? per_ctx(&m->g[i]) : m->g[i].mem;
			if (!mem)
				return CUDA_ERROR_INVALID_CONTEXT;
			if (d)
				*d = (CUdeviceptr)(uintptr_t)mem;
			if (bytes)
				*bytes = m->g[i].size;
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_NOT_FOUND;
}

static CUresult get_func(struct fk_mod *m, struct fk_func **f, const char *name)
{
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	for (int i = 0; i < m->nf; i++)
		if (!strcmp(m->f[i]->name, name)) {
			*f = m->f[i];
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_NOT_FOUND;
}

CUcontext fk_current(void)
{
	return (CUcontext)cur;
}

void *fk_load_ptx(const char *text)
{
	struct fk_mod *m = NULL;
	return load(&m, text, "sanitizerAddPatches", false, NULL, 0) == CUDA_SUCCESS ? m : NULL;
}

bool fk_global(void *mod, const char *name, CUdeviceptr *d)
{
	return get_global(mod, d, NULL, name) == CUDA_SUCCESS;
}

const char *fk_mod_text(void *mod)
{
	return mod ? ((struct fk_mod *)mod)->text : NULL;
}

int fk_probe_map(void *mod, const char *probe, bool *by_kernel)
{
	struct fk_effect ef = { 0 };
	probe_effect(mod, probe, &ef);
	*by_kernel = ef.by_kernel;
	return ef.count_map;
}

bool fk_func_of(CUfunction h, void **mod, const char **name)
{
	struct fk_func *f = (struct fk_func *)h;
	if (!f || f->magic != FN_MAGIC)
		return false;
	*mod = f->mod;
	*name = f->name;
	return true;
}

/* A library's module is the library itself (its globals are per
 * context already). */
CUresult cuLibraryGetModule(CUmodule *m, CUlibrary lib)
{
	if (!cur)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!m || !mod_of(lib, true))
		return CUDA_ERROR_INVALID_HANDLE;
	*m = (CUmodule)lib;
	return CUDA_SUCCESS;
}

static struct fk_mod *any_mod(const void *h)
{
	struct fk_mod *x = mod_of(h, false);
	return x ? x : mod_of(h, true);
}

CUresult cuModuleGetFunctionCount(unsigned *n, CUmodule m)
{
	struct fk_mod *x = any_mod(m);
	if (!x || !n)
		return CUDA_ERROR_INVALID_HANDLE;
	*n = (unsigned)x->nf;
	return CUDA_SUCCESS;
}

CUresult cuModuleEnumerateFunctions(CUfunction *fns, unsigned n, CUmodule m)
{
	struct fk_mod *x = any_mod(m);
	if (!x || !fns || n < (unsigned)x->nf)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < x->nf; i++)
		fns[i] = (CUfunction)x->f[i];
	return CUDA_SUCCESS;
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr *d, size_t *bytes, CUmodule m, const char *name)
{
	return get_global(mod_of(m, false), d, bytes, name);
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	return get_func(mod_of(m, false), (struct fk_func **)f, name);
}

/* Libraries: context-independent handles; globals and functions need a
 * current context, as with the driver. */
CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo, void **jv,
			   unsigned nj, CUlibraryOption *lo, void **lv, unsigned nl)
{
	(void)lo, (void)lv, (void)nl;
	if (!inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	char log[512] = "";
	CUresult rc = load((struct fk_mod **)lib, code, "cuLibraryLoadData", true, log,
			   sizeof(log));
	jit_log(nj, jo, jv, rc == CUDA_SUCCESS ? "" : log);
	return rc;
}

CUresult cuLibraryUnload(CUlibrary lib)
{
	return unload(lib, true);
}

CUresult cuLibraryGetGlobal(CUdeviceptr *d, size_t *bytes, CUlibrary lib, const char *name)
{
	return get_global(mod_of(lib, true), d, bytes, name);
}

CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
	return get_func(mod_of(lib, true), (struct fk_func **)k, name);
}

CUresult cuKernelGetFunction(CUfunction *f, CUkernel k)
{
	if (!cur)
		return CUDA_ERROR_INVALID_CONTEXT;
	*f = (CUfunction)k;
	return CUDA_SUCCESS;
}

/* ---------------- launches ---------------- */

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The fake timer's lead over CLOCK_MONOTONIC at host time now. */
static int64_t timer_lead(uint64_t now, int64_t *tolerance)
{
	static uint64_t start;
	static double ppm = -1;
	if (ppm < 0) {
		const char *e = getenv("FAKE_CUDA_CLOCK_PPM");
		start = now;
		ppm = e ? atof(e) : 0;
	}
	*tolerance = ppm ? 300000 : 1000000000;
	return (int64_t)FK_CLOCK_BASE + (int64_t)((double)(now - start) * ppm / 1e6);
}

/* gpux_clock_sample's handshake (helpers.cu) on the fake timer: says
 * it runs, waits for the go (20 ms at most), stamps twice if it came,
 * says done. */
static void *clock_sample(void *arg)
{
	volatile uint64_t *m = arg;
	int64_t tol;
	uint64_t t0 = now_ns(), now;
	bool go;
	__atomic_store_n(&m[GPUX_CLOCK_RUNNING], 1, __ATOMIC_RELEASE);
	do {
		now = now_ns();
		go = __atomic_load_n(&m[GPUX_CLOCK_GO], __ATOMIC_ACQUIRE);
	} while (!go && now - t0 < 20000000);
	if (go) {
		m[GPUX_CLOCK_SEEN] = now + (uint64_t)timer_lead(now, &tol);
		now = now_ns();
		m[GPUX_CLOCK_STAMP] = now + (uint64_t)timer_lead(now, &tol);
	}
	__atomic_store_n(&m[GPUX_CLOCK_DONE], 1, __ATOMIC_RELEASE);
	return NULL;
}

static struct gpux_ctl *ctl_of(struct fk_mod *m)
{
	CUdeviceptr d;
	size_t sz;
	if (get_global(m, &d, &sz, GPUX_SYM_CTL) || sz != sizeof(struct gpux_ctl))
		return NULL;
	return (struct gpux_ctl *)(uintptr_t)d;
}

/* count() on an 8-byte key: the map's open-addressing table; on a
 * 16-byte key (two keys, as @[sm, warp]) the key is (0, kernel_id):
 * the fake's one SM, and the kernel standing for the warp. */
static void emulate_count(struct fk_func *f, int map, bool by_kernel, uint64_t threads)
{
	fk_count(f->mod, map, by_kernel, f->kernel_id, threads, f->name);
}

void fk_count(void *mod, int map, bool by_kernel, uint32_t kernel_id, uint64_t threads,
	      const char *who)
{
	char name[32];
	CUdeviceptr d;
	size_t sz;
	snprintf(name, sizeof(name), GPUX_SYM_MAP "%d", map);
	if (get_global(mod, &d, &sz, name) || sz != sizeof(struct gpux_map_desc)) {
		flog("launch %s: no %s", who, name);
		return;
	}
	struct gpux_map_desc *desc = (struct gpux_map_desc *)(uintptr_t)d;
	if (!desc->state || (desc->key_size != 8 && desc->key_size != 16) ||
	    desc->value_size != 8 || !desc->max_entries) {
		flog("launch %s: %s not set up", who, name);
		return;
	}
	uint32_t *state = (uint32_t *)(uintptr_t)desc->state;
	uint64_t *keys = (uint64_t *)(uintptr_t)desc->keys;
	uint64_t *vals = (uint64_t *)(uintptr_t)desc->values;
	uint64_t key = kernel_id;
	/* shards (GPUX_MAP_SHARD_SHIFT): the fake's "SM" is the launch
	 * count, so successive launches use successive shards */
	static unsigned launches_seen;
	uint64_t nshards = 1ull << ((desc->kind >> GPUX_MAP_SHARD_SHIFT) & 31);
	uint64_t off = (launches_seen++ & (nshards - 1)) *
		       GPUX_SHARD_BYTES(desc->max_entries, desc->key_size, desc->value_size);
	state = (uint32_t *)(uintptr_t)(desc->state + off);
	keys = (uint64_t *)(uintptr_t)(desc->keys + off);
	vals = (uint64_t *)(uintptr_t)(desc->values + off);
	uint32_t n = desc->max_entries;
	if ((desc->kind & GPUX_MAP_KIND_MASK) == GPUX_MAP_ARRAY) {
		/* an array's count: the key is the slot; keys and state untouched */
		key = by_kernel ? key : 0;
		if (key < n) {
			__atomic_add_fetch(&vals[key], threads, __ATOMIC_RELAXED);
			flog("launch %s: array map %d key %llu += %llu", who, map,
			     (unsigned long long)key, (unsigned long long)threads);
		} else {
			__atomic_add_fetch(&desc->drops, 1, __ATOMIC_RELAXED);
		}
		return;
	}
	uint64_t kw[2] = { key, 0 };
	uint32_t nw = desc->key_size / 8;
	if (nw == 2) {
		kw[0] = 0;
		kw[1] = key;
	}
	for (uint32_t i = 0, at = (uint32_t)gpux_key_hash(kw, nw) & (n - 1); i < n;
	     i++, at = (at + 1) & (n - 1)) {
		uint32_t s = __atomic_load_n(&state[at], __ATOMIC_ACQUIRE);
		if (s == GPUX_SLOT_FULL && !memcmp(&keys[at * nw], kw, 8 * nw)) {
			__atomic_add_fetch(&vals[at], threads, __ATOMIC_RELAXED);
			flog("launch %s: map %d key %llu += %llu", who, map,
			     (unsigned long long)key, (unsigned long long)threads);
			return;
		}
		if (s == GPUX_SLOT_EMPTY) {
			memcpy(&keys[at * nw], kw, 8 * nw);
			vals[at] = threads;
			__atomic_store_n(&state[at], GPUX_SLOT_FULL, __ATOMIC_RELEASE);
			flog("launch %s: map %d key %llu = %llu", who, map,
			     (unsigned long long)key, (unsigned long long)threads);
			return;
		}
	}
	__atomic_add_fetch(&desc->drops, 1, __ATOMIC_RELAXED);
}

/* One printf record, as gpux_h_printf writes it (codegen/ptx/README.md). */
static void emulate_printf(struct fk_func *f, uint64_t threads)
{
	const char *spec = getenv("FAKE_CUDA_PRINTF");
	struct gpux_ctl *ctl = ctl_of(f->mod);
	if (!spec || !ctl)
		return;
	char *end;
	uint32_t fmt = (uint32_t)strtoul(spec, &end, 10);
	unsigned lanes = *end == ':' ? (unsigned)strtoul(end + 1, &end, 10) : 1;
	const char *words = *end == ':' ? end + 1 : "";
	if (lanes > 32)
		lanes = 32;
	if (lanes > threads)
		lanes = (unsigned)threads;
	uint64_t w[16];
	int nw = 0;
	/* the fake has one SM: the runtime's ring 0, or the inline one */
	struct gpux_ring *r = ctl->ring_ptr ? (struct gpux_ring *)(uintptr_t)ctl->ring_ptr
					    : &ctl->ring;
	if (!r->data) {
		flog("launch %s: no printf ring", f->name);
		return;
	}
	for (const char *p = words; *p && nw < 16;) {
		nw++;
		p += strcspn(p, ",");
		if (*p == ',')
			p++;
	}
	uint64_t size = (uint64_t)nw * 8;
	uint64_t len = (sizeof(struct gpux_rec_hdr) + lanes * size + GPUX_REC_ALIGN - 1) &
		       ~(uint64_t)(GPUX_REC_ALIGN - 1);
	/* claim room, then reserve: the device's protocol (gpux_dev.h) */
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	uint64_t t = __atomic_fetch_add(&r->taken, len, __ATOMIC_ACQ_REL);
	if (t + len - tail > r->size) {
		__atomic_fetch_sub(&r->taken, len, __ATOMIC_ACQ_REL);
		__atomic_add_fetch(&r->drops, 1, __ATOMIC_RELAXED);
		flog("launch %s: printf ring full", f->name);
		return;
	}
	uint64_t head = __atomic_fetch_add(&r->head, len, __ATOMIC_ACQ_REL);
	unsigned char *data = (unsigned char *)(uintptr_t)r->data;
	uint64_t wrap = r->size - 1;
	for (unsigned lane = 0; lane < lanes; lane++) {
		const char *p = words;
		for (int i = 0; i < nw; i++) {
			if (*p == 'k')
				w[i] = f->kernel_id;
			else if (*p == 'l')
				w[i] = lane;
			else
				w[i] = strtoull(p, NULL, 0);
			p += strcspn(p, ",");
			if (*p == ',')
				p++;
		}
		uint64_t at = head + sizeof(struct gpux_rec_hdr) + lane * size;
		for (int i = 0; i < nw; i++)
			memcpy(data + ((at + 8 * (uint64_t)i) & wrap), &w[i], 8);
	}
	struct gpux_rec_hdr *h = (struct gpux_rec_hdr *)(data + (head & wrap));
	h->fmt = fmt;
	h->mask = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
	h->arg_size = (uint32_t)size;
	__atomic_store_n(&h->len, (uint32_t)len, __ATOMIC_RELEASE);
	flog("launch %s: printf fmt %u, %u lanes", f->name, fmt, lanes);
}

/* Whether a is the start of a variable of a loaded module. */
static bool a_variable(uint64_t a)
{
	bool yes = false;
	pthread_mutex_lock(&lock);
	for (struct fk_mod *m = mods; m && !yes; m = m->next)
		for (int i = 0; i < m->ng && !yes; i++) {
			yes = (uintptr_t)m->g[i].mem == a;
			for (int j = 0; j < MAX_PER_CTX && !yes; j++)
				yes = m->g[i].per[j].mem && (uintptr_t)m->g[i].per[j].mem == a;
		}
	pthread_mutex_unlock(&lock);
	return yes;
}

/* A kernel of a module that declares fk_runs (kern_vars.cu) adds one to
 * it a launch. In a live session's copy, whose table gpux_mvars holds
 * the addresses of the variables (tests' slot i: the i-th variable not
 * gpux's), through the table, as the copy's PTX does. */
static void emulate_vars(struct fk_func *f)
{
	struct fk_mod *m = f->mod;
	int runs = -1, table = -1, slot = 0, k = 0;
	for (int i = 0; i < m->ng; i++) {
		if (!strcmp(m->g[i].name, "gpux_mvars")) {
			table = i;
			continue;
		}
		if (!strncmp(m->g[i].name, "gpux_", 5))
			continue;
		if (!strcmp(m->g[i].name, "fk_runs")) {
			runs = i;
			slot = k;
		}
		k++;
	}
	if (runs < 0)
		return;
	unsigned *p;
	if (table < 0) {
		p = (unsigned *)(m->lib ? per_ctx(&m->g[runs]) : m->g[runs].mem);
	} else {
		unsigned char *t = m->lib ? per_ctx(&m->g[table]) : m->g[table].mem;
		uint64_t a = 0;
		if (t && m->g[table].size >= (size_t)(slot + 1) * 8)
			memcpy(&a, t + slot * 8, 8);
		if (!a_variable(a)) {
			flog("launch %s: fk_runs: slot %d of gpux_mvars holds %#llx, no variable",
			     f->name, slot, (unsigned long long)a);
			return;
		}
		p = (unsigned *)(uintptr_t)a;
	}
	if (p)
		__atomic_add_fetch(p, 1, __ATOMIC_RELAXED);
}

static void emulate_exit(struct fk_func *f)
{
	struct gpux_ctl *ctl = ctl_of(f->mod);
	if (!ctl)
		return;
	__atomic_store_n(&ctl->exit, 1, __ATOMIC_RELEASE);
	if (ctl->exit_ptr)
		__atomic_store_n((uint32_t *)(uintptr_t)ctl->exit_ptr, 1, __ATOMIC_RELEASE);
	flog("launch %s: exit", f->name);
}

/* The rewriter's switch (GPUX_SYM_OFF): nonzero, the sites call nothing. */
static bool probes_off(struct fk_mod *m)
{
	CUdeviceptr d;
	size_t sz;
	uint32_t v = 0;
	if (!get_global(m, &d, &sz, GPUX_SYM_OFF) && sz == 4)
		memcpy(&v, (const void *)(uintptr_t)d, 4);
	return v != 0;
}

/* What the runtime has set up in a patched module, for the log:
 * " ctl=exit clock=ok" (+ring when the probes printf; " gpu=N" when the
 * gpu builtin's device is not 0), or "" when the module is not patched. A
 * clock offset is ok within a second of the fake timer's lead. */
static const char *setup_state(struct fk_mod *m)
{
	static __thread char buf[96];
	struct gpux_ctl *ctl = ctl_of(m);
	CUdeviceptr d;
	size_t sz;
	if (!ctl)
		return "";
	const char *clock = "none";
	if (!get_global(m, &d, &sz, GPUX_SYM_CLOCK_OFF) && sz == sizeof(struct gpux_clock)) {
		/* what a probe's nsecs would read now, against the host */
		struct gpux_clock c;
		memcpy(&c, (const void *)(uintptr_t)d, sizeof(c));
		int64_t tol;
		uint64_t now = now_ns(), g = now + (uint64_t)timer_lead(now, &tol);
		int64_t drift = (int64_t)(((__int128)(int64_t)g * c.rate) >> 64);
		int64_t err = (int64_t)(g - (uint64_t)c.base - (uint64_t)drift - now);
		clock = c.base == 0 ? "unset" : err > -tol && err < tol ? "ok" : "wrong";
	}
	uint32_t gpu = 0; /* the gpu builtin's, said when not 0 */
	if (!get_global(m, &d, &sz, GPUX_SYM_GPU) && sz == sizeof(gpu))
		memcpy(&gpu, (const void *)(uintptr_t)d, sizeof(gpu));
	char said[24] = "";
	if (gpu)
		snprintf(said, sizeof(said), " gpu=%u", gpu);
	snprintf(buf, sizeof(buf), " ctl=%s%s%s clock=%s%s%s", ctl->exit_ptr ? "exit" : "-",
		 ctl->ring_ptr ? "+ring" : "", ctl->ring.data ? "+inline" : "", clock,
		 probes_off(m) ? " off" : "", said);
	return buf;
}

CUresult fk_launch(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		   unsigned by, unsigned bz, void **params, const char *api)
{
	struct fk_func *f = (struct fk_func *)fn;
	if (!cur)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!f || f->magic != FN_MAGIC || !mod_of(f->mod, f->mod->lib))
		return CUDA_ERROR_INVALID_HANDLE;
	if (f->clock) {
		CUdeviceptr out;
		memcpy(&out, params[0], sizeof(out));
		uint64_t *m = (uint64_t *)(uintptr_t)out;
		pthread_t t;
		if (getenv("FAKE_CUDA_CLOCK_PPM")) {
			/* as the kernel does, on a thread of its own: the stamps
			 * are the time the go is seen, whenever that is */
			flog("clock sample");
			if (pthread_create(&t, NULL, clock_sample, m))
				return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
			pthread_detach(t);
			return CUDA_SUCCESS;
		}
		/* the handshake of helpers.cu, all at once: started, stamped
		 * twice, done; the runtime's go comes after and is not needed */
		int64_t tol;
		uint64_t now = now_ns(), g = now + (uint64_t)timer_lead(now, &tol);
		m[GPUX_CLOCK_SEEN] = m[GPUX_CLOCK_STAMP] = g;
		__atomic_store_n(&m[GPUX_CLOCK_RUNNING], 1, __ATOMIC_RELEASE);
		__atomic_store_n(&m[GPUX_CLOCK_DONE], 1, __ATOMIC_RELEASE);
		return CUDA_SUCCESS;
	}
	uint64_t threads = (uint64_t)gx * gy * gz * bx * by * bz;
	pthread_mutex_lock(&lock);
	gpu_ns += FK_BLOCK_NS * gx * gy * gz;
	pthread_mutex_unlock(&lock);
	flog("%s %s grid=%u,%u,%u block=%u,%u,%u sites=%d%s", api, f->name, gx, gy, gz, bx, by, bz,
	     f->neff, setup_state(f->mod));
	emulate_vars(f);
	bool once[2] = { false, false }; /* entry and exit act once per thread */
	for (int i = 0; i < f->neff && !probes_off(f->mod); i++) {
		const struct fk_effect *ef = &f->eff[i];
		if (ef->kind == 0 || ef->kind == 1) {
			if (once[ef->kind])
				continue;
			once[ef->kind] = true;
		}
		if (ef->count_map >= 0)
			emulate_count(f, ef->count_map, ef->by_kernel, threads);
		if (ef->printf_)
			emulate_printf(f, threads);
		if (ef->exit_)
			emulate_exit(f);
	}
	fk_sass_launch(fn, threads);
	return CUDA_SUCCESS;
}

/* The fake libcupti (fake_cupti.c), when the process has loaded one:
 * told of each kernel cuLaunchKernel runs. */
static void tell_cupti(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		       unsigned by, unsigned bz, unsigned shm, CUstream s, int pt)
{
	typedef void (*kern_fn)(const char *, const unsigned *, const unsigned *, unsigned,
				const void *, const void *, int);
	kern_fn k = (kern_fn)dlsym(RTLD_DEFAULT, "fk_cupti_kernel");
	struct fk_func *f = (struct fk_func *)fn;
	if (!k || !f || f->magic != FN_MAGIC || f->clock)
		return;
	const unsigned grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };
	k(f->name, grid, block, shm, cur, s, pt);
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			unsigned by, unsigned bz, unsigned shm, CUstream s, void **p, void **e)
{
	(void)e;
	if (fk_captured(s, f, gx, gy, gz, bx, by, bz, shm, p))
		return CUDA_SUCCESS;
	CUresult rc = fk_launch(f, gx, gy, gz, bx, by, bz, p, "cuLaunchKernel");
	if (rc == CUDA_SUCCESS)
		tell_cupti(f, gx, gy, gz, bx, by, bz, shm, s, 0);
	return rc;
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			     unsigned by, unsigned bz, unsigned shm, CUstream s, void **p,
			     void **e);
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			     unsigned by, unsigned bz, unsigned shm, CUstream s, void **p,
			     void **e)
{
	(void)e;
	CUresult rc = fk_launch(f, gx, gy, gz, bx, by, bz, p, "cuLaunchKernel_ptsz");
	if (rc == CUDA_SUCCESS)
		tell_cupti(f, gx, gy, gz, bx, by, bz, shm, s, 1);
	return rc;
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **p, void **e)
{
	(void)e;
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult rc = fk_launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,
				c->blockDimY, c->blockDimZ, p, "cuLaunchKernelEx");
	if (rc == CUDA_SUCCESS)
		tell_cupti(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
			   c->blockDimZ, c->sharedMemBytes, c->hStream, 0);
	return rc;
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **p, void **e);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **p, void **e)
{
	(void)e;
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult rc = fk_launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,
				c->blockDimY, c->blockDimZ, p, "cuLaunchKernelEx_ptsz");
	if (rc == CUDA_SUCCESS)
		tell_cupti(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
			   c->blockDimZ, c->sharedMemBytes, c->hStream, 1);
	return rc;
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
				   unsigned bx, unsigned by, unsigned bz, unsigned shm, CUstream s,
				   void **p)
{
	CUresult rc = fk_launch(f, gx, gy, gz, bx, by, bz, p, "cuLaunchCooperativeKernel");
	if (rc == CUDA_SUCCESS)
		tell_cupti(f, gx, gy, gz, bx, by, bz, shm, s, 0);
	return rc;
}

CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
					unsigned bx, unsigned by, unsigned bz, unsigned shm,
					CUstream s, void **p);
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
					unsigned bx, unsigned by, unsigned bz, unsigned shm,
					CUstream s, void **p)
{
	CUresult rc = fk_launch(f, gx, gy, gz, bx, by, bz, p, "cuLaunchCooperativeKernel_ptsz");
	if (rc == CUDA_SUCCESS)
		tell_cupti(f, gx, gy, gz, bx, by, bz, shm, s, 1);
	return rc;
}

/* Names: a library's functions are CUkernels (cuKernelGetFunction hands
 * the kernel itself out), which cuFuncGetName refuses, as the driver
 * refuses a CUkernel; cuKernelGetName refuses a module's. */
static CUresult func_name(const char **name, const void *h, bool lib, const char *api)
{
	const struct fk_func *f = h;
	if (!name || !f || f->magic != FN_MAGIC || !mod_of(f->mod, f->mod->lib))
		return CUDA_ERROR_INVALID_HANDLE;
	flog("%s %s%s", api, f->name, f->mod->lib == lib ? "" : ": refused");
	if (f->mod->lib != lib)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = f->name;
	return CUDA_SUCCESS;
}

CUresult cuFuncGetName(const char **name, CUfunction f)
{
	return func_name(name, f, false, "cuFuncGetName");
}

CUresult cuKernelGetName(const char **name, CUkernel k)
{
	return func_name(name, k, true, "cuKernelGetName");
}

/* Attributes and occupancy. The fake's "registers" of a function are
 * the statements of its body, so an instrumented kernel has more than
 * its original; blocks per SM follow from them (65536 per SM). */
static struct fk_func *func_of(const void *h)
{
	struct fk_func *f = (struct fk_func *)h;
	return f && f->magic == FN_MAGIC && mod_of(f->mod, f->mod->lib) ? f : NULL;
}

static int fake_regs(const struct fk_func *f)
{
	const char *t = f->mod->text, *p;
	char pat[300];
	snprintf(pat, sizeof(pat), ".entry %s(", f->name);
	if (!t || !(p = strstr(t, pat)) || !(p = strchr(p, '{')))
		return 32;
	int n = 0, depth = 0;
	for (; *p; p++) {
		depth += (*p == '{') - (*p == '}');
		n += *p == ';';
		if (!depth)
			break;
	}
	return n;
}

CUresult cuFuncGetModule(CUmodule *m, CUfunction h)
{
	struct fk_func *f = func_of(h);
	if (!f || f->mod->lib)
		return CUDA_ERROR_INVALID_HANDLE;
	*m = (CUmodule)f->mod;
	return CUDA_SUCCESS;
}

CUresult cuKernelGetLibrary(CUlibrary *l, CUkernel h)
{
	struct fk_func *f = func_of(h);
	if (!f || !f->mod->lib)
		return CUDA_ERROR_INVALID_HANDLE;
	*l = (CUlibrary)f->mod;
	return CUDA_SUCCESS;
}

static CUresult get_attr(int *v, CUfunction_attribute a, const void *h, const char *api)
{
	struct fk_func *f = func_of(h);
	if (!f || !v)
		return CUDA_ERROR_INVALID_HANDLE;
	if (a == CU_FUNC_ATTRIBUTE_NUM_REGS)
		*v = fake_regs(f);
	else if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
		*v = f->dyn_smem;
	else
		return CUDA_ERROR_NOT_SUPPORTED;
	flog("%s %s load %d attr %d = %d", api, f->name, f->mod->seq, (int)a, *v);
	return CUDA_SUCCESS;
}

static CUresult set_attr(CUfunction_attribute a, int v, const void *h, const char *api)
{
	struct fk_func *f = func_of(h);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (a != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
		return CUDA_ERROR_NOT_SUPPORTED;
	f->dyn_smem = v;
	flog("%s %s load %d attr %d := %d", api, f->name, f->mod->seq, (int)a, v);
	return CUDA_SUCCESS;
}

CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
	return get_attr(v, a, f, "cuFuncGetAttribute");
}

CUresult cuKernelGetAttribute(int *v, CUfunction_attribute a, CUkernel k, CUdevice d)
{
	(void)d;
	return get_attr(v, a, k, "cuKernelGetAttribute");
}

CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
	return set_attr(a, v, f, "cuFuncSetAttribute");
}

CUresult cuKernelSetAttribute(CUfunction_attribute a, int v, CUkernel k, CUdevice d)
{
	(void)d;
	return set_attr(a, v, k, "cuKernelSetAttribute");
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction h, int bs, size_t smem)
{
	struct fk_func *f = func_of(h);
	(void)smem;
	if (!f || !n || bs <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	*n = 65536 / (fake_regs(f) * bs);
	flog("cuOccupancyMaxActiveBlocksPerMultiprocessor %s load %d = %d", f->name, f->mod->seq,
	     *n);
	return CUDA_SUCCESS;
}

/* A function's parameters (CUDA 12.4+), from its PTX: a module's
 * functions through cuFuncGetParamInfo, a library's through
 * cuKernelGetParamInfo, as for names. */
static CUresult param_info(const void *h, size_t i, size_t *off, size_t *size, bool lib)
{
	const struct fk_func *f = h;
	if (!f || f->magic != FN_MAGIC || !mod_of(f->mod, f->mod->lib) || f->mod->lib != lib)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!f->mod->text || i >= (size_t)f->nparams)
		return CUDA_ERROR_INVALID_VALUE;
	if (off)
		*off = f->poff[i];
	if (size)
		*size = f->psize[i];
	return CUDA_SUCCESS;
}

CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size)
{
	return param_info(f, i, off, size, false);
}

CUresult cuKernelGetParamInfo(CUkernel k, size_t i, size_t *off, size_t *size)
{
	return param_info(k, i, off, size, true);
}

/* ---------------- cuGetProcAddress ---------------- */

#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags);

static const struct {
	const char *name;
	void *fn;
} table[] = {
#define E(f) { #f, (void *)f }
	E(cuInit), E(cuDriverGetVersion), E(cuDeviceGetCount), E(cuDeviceGet),
	E(cuDeviceGetName), E(cuDeviceGetAttribute), E(cuCtxCreate_v2), E(cuCtxCreate_v4),
	E(cuCtxDestroy_v2), E(cuCtxGetCurrent), E(cuCtxSetCurrent), E(cuCtxGetDevice),
	E(cuCtxSynchronize), E(cuDevicePrimaryCtxRetain), E(cuDevicePrimaryCtxRelease_v2),
	E(cuDevicePrimaryCtxGetState), E(cuMemAlloc_v2), E(cuMemFree_v2), E(cuMemHostAlloc),
	E(cuMemHostGetDevicePointer_v2), E(cuMemFreeHost), E(cuMemsetD8_v2),
	E(cuMemcpyHtoD_v2), E(cuMemcpyDtoH_v2), E(cuMemcpyDtoHAsync_v2), E(cuStreamCreate),
	E(cuMemsetD8Async), E(cuStreamBatchMemOp_v2), E(cuMemsetD32_v2), E(cuMemsetD32Async), E(cuMemcpyHtoDAsync_v2),
	E(cuCtxPushCurrent_v2), E(cuCtxPopCurrent_v2), E(cuThreadExchangeStreamCaptureMode),
	E(cuStreamIsCapturing), E(cuStreamQuery), E(cuEventCreate), E(cuEventRecord),
	E(cuEventQuery), E(cuEventDestroy_v2), E(cuEventElapsedTime), E(cuEventElapsedTime_v2),
	E(cuStreamDestroy_v2), E(cuStreamSynchronize), E(cuStreamSynchronize_ptsz),
	E(cuGetErrorString), E(cuGetErrorName), E(cuModuleLoadData), E(cuModuleLoadDataEx),
	E(cuModuleLoadFatBinary), E(cuModuleLoad), E(cuModuleUnload), E(cuModuleGetGlobal_v2),
	E(cuModuleGetFunction), E(cuLibraryLoadData), E(cuLibraryUnload), E(cuLibraryGetGlobal),
	E(cuLibraryGetKernel), E(cuKernelGetFunction), E(cuLaunchKernel), E(cuLaunchKernel_ptsz),
	E(cuGetProcAddress), E(cuGetProcAddress_v2), E(cuLinkCreate_v2), E(cuLinkAddData),
	E(cuLinkAddData_v2), E(cuLinkComplete), E(cuLinkDestroy),
	E(cuCtxSynchronize_v2), E(cuMemAllocPitch_v2), E(cuMemAllocManaged), E(cuMemAllocAsync),
	E(cuMemAllocAsync_ptsz), E(cuDeviceGetDefaultMemPool), E(cuMemAllocFromPoolAsync),
	E(cuMemAllocFromPoolAsync_ptsz), E(cuMemFreeAsync), E(cuMemFreeAsync_ptsz), E(cuMemcpy),
	E(cuMemcpy_ptds), E(cuMemcpyAsync), E(cuMemcpyAsync_ptsz), E(cuMemcpyHtoD_v2_ptds),
	E(cuMemcpyHtoDAsync_v2_ptsz), E(cuMemcpyDtoH_v2_ptds), E(cuMemcpyDtoHAsync_v2_ptsz),
	E(cuMemcpyDtoD_v2), E(cuMemcpyDtoD_v2_ptds), E(cuMemcpyDtoDAsync_v2),
	E(cuMemcpyDtoDAsync_v2_ptsz), E(cuMemcpyPeer), E(cuMemcpyPeer_ptds),
	E(cuMemcpyPeerAsync), E(cuMemcpyPeerAsync_ptsz), E(cuMemcpy2D_v2), E(cuMemcpy2D_v2_ptds),
	E(cuMemcpy2DAsync_v2), E(cuMemcpy2DAsync_v2_ptsz), E(cuMemcpy3D_v2), E(cuMemcpy3D_v2_ptds),
	E(cuMemcpy3DAsync_v2), E(cuMemcpy3DAsync_v2_ptsz), E(cuLaunchKernelEx),
	E(cuLaunchKernelEx_ptsz), E(cuLaunchCooperativeKernel), E(cuLaunchCooperativeKernel_ptsz),
	E(cuFuncGetName), E(cuKernelGetName), E(cuFuncGetModule), E(cuKernelGetLibrary),
	E(cuFuncGetAttribute), E(cuKernelGetAttribute), E(cuFuncSetAttribute),
	E(cuKernelSetAttribute), E(cuOccupancyMaxActiveBlocksPerMultiprocessor), E(cuFuncGetParamInfo), E(cuKernelGetParamInfo),
	E(cuMemPrefetchAsync_v2), E(cuMemAdvise_v2), E(cuPointerGetAttribute), E(cuMemGetInfo_v2),
	E(cuGraphCreate), E(cuGraphDestroy), E(cuGraphAddKernelNode_v2),
	E(cuGraphKernelNodeGetParams_v2), E(cuGraphKernelNodeSetParams_v2), E(cuGraphGetNodes),
	E(cuGraphNodeGetType), E(cuGraphClone), E(cuGraphNodeFindInClone),
	E(cuGraphInstantiateWithFlags), E(cuGraphExecKernelNodeSetParams_v2),
	E(cuGraphNodeSetEnabled), E(cuGraphNodeGetEnabled), E(cuGraphExecUpdate_v2),
	E(cuGraphLaunch), E(cuGraphExecDestroy), E(cuStreamBeginCapture_v2), E(cuStreamEndCapture),
#undef E
};

static void *lookup(const char *name)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].name, name))
			return table[i].fn;
	return NULL;
}

/* Variants that take other arguments than the ones before them: only
 * from their version on. */
static bool too_new(const char *name, int ver)
{
	return (!strcmp(name, "cuCtxSynchronize_v2") && ver < 13000) ||
	       (!strcmp(name, "cuGetProcAddress_v2") && ver < 12000);
}

/* The per-thread-stream variant when asked for, else the _v2 where one
 * exists (at version ver), else the name itself. */
static void *proc(const char *sym, int ver, cuuint64_t flags)
{
	static const char *const pt[] = { "_v2_ptsz", "_v2_ptds", "_ptsz", "_ptds" };
	char buf[256];
	void *p = NULL;
	if (!sym || strlen(sym) > 200)
		return NULL;
	for (size_t i = 0; !p && (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && i < 4;
	     i++) {
		snprintf(buf, sizeof(buf), "%s%s", sym, pt[i]);
		p = lookup(buf);
	}
	if (!p) {
		snprintf(buf, sizeof(buf), "%s_v2", sym);
		p = too_new(buf, ver) ? NULL : lookup(buf);
	}
	return p ? p : lookup(sym);
}

CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
			     CUdriverProcAddressQueryResult *st)
{
	pthread_mutex_lock(&lock); /* as a driver's lock (fake_cuda_hold) */
	*pfn = proc(sym, ver, flags);
	pthread_mutex_unlock(&lock);
	if (st)
		*st = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	flog("cuGetProcAddress_v2 %s%s", sym, *pfn ? "" : " (not found)");
	return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
	return cuGetProcAddress_v2(sym, pfn, ver, flags, NULL);
}

/* Not CUDA's: holds the driver's lock for ms milliseconds, spinning, as
 * a real driver's call does while it waits for the GPU (drv_app busy: a
 * runtime that joins the process on this thread must not call the
 * driver there). */
void fake_cuda_hold(unsigned ms)
{
	struct timespec a, b;
	pthread_mutex_lock(&lock);
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < (long)ms);
	pthread_mutex_unlock(&lock);
}
