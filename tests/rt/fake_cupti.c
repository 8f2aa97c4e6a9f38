/* A stand-in for libcupti for the runtime tests (GPUX_CUPTI_LIB): the
 * activity API the runtime uses (runtime/rt_cupti.c), fed by the fake
 * driver, which tells it of each kernel it runs (fk_cupti_kernel, found
 * with dlsym). Each kernel becomes a CONCURRENT_KERNEL record, stamped by
 * the client's timestamp callback (1 us long), handed over in a buffer
 * the client provides at the next flush. Context and stream ids are
 * numbered as the handles are first seen. Records are logged as
 * "cupti: kernel NAME" to FAKE_CUDA_LOG. */
#include <cupti_activity.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PENDING 65536
#define MAX_IDS 256
#define MAX_NAMES 256

static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static CUpti_TimestampCallbackFunc stamp;
static int enabled;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_ActivityKernel10 pending[MAX_PENDING];
static size_t npending, ndropped;
static const void *ctx_ids[MAX_IDS], *stream_ctx[MAX_IDS], *stream_ids[MAX_IDS];
static int nctx, nstream;
static char *names[MAX_NAMES];
static int nnames;

static void flog(const char *fmt, const char *arg)
{
	const char *path = getenv("FAKE_CUDA_LOG");
	FILE *f = path && *path ? fopen(path, "a") : NULL;
	if (!f)
		return;
	fprintf(f, fmt, arg);
	fputc('\n', f);
	fclose(f);
}

static uint32_t ctx_id(const void *c)
{
	for (int i = 0; i < nctx; i++)
		if (ctx_ids[i] == c)
			return (uint32_t)i + 1;
	if (nctx == MAX_IDS)
		return 0;
	ctx_ids[nctx++] = c;
	return (uint32_t)nctx;
}

static uint32_t stream_id(const void *c, const void *s)
{
	for (int i = 0; i < nstream; i++)
		if (stream_ctx[i] == c && stream_ids[i] == s)
			return (uint32_t)i + 1;
	if (nstream == MAX_IDS)
		return 0;
	stream_ctx[nstream] = c;
	stream_ids[nstream++] = s;
	return (uint32_t)nstream;
}

static const char *intern(const char *name)
{
	for (int i = 0; i < nnames; i++)
		if (!strcmp(names[i], name))
			return names[i];
	return nnames < MAX_NAMES ? (names[nnames++] = strdup(name)) : NULL;
}

/* The fake driver ran kernel name on stream s of context ctx (the
 * per-thread default stream when pt). */
void fk_cupti_kernel(const char *name, const unsigned grid[3], const unsigned block[3],
		     unsigned shmem, const void *ctx, const void *s, int pt);
void fk_cupti_kernel(const char *name, const unsigned grid[3], const unsigned block[3],
		     unsigned shmem, const void *ctx, const void *s, int pt)
{
	if (!enabled || !stamp)
		return;
	pthread_mutex_lock(&lock);
	if (npending == MAX_PENDING) {
		ndropped++;
		pthread_mutex_unlock(&lock);
		return;
	}
	CUpti_ActivityKernel10 *k = &pending[npending++];
	memset(k, 0, sizeof(*k));
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->start = stamp();
	k->end = k->start + 1000;
	k->contextId = ctx_id(ctx);
	k->streamId = stream_id(ctx, pt && !s ? (const void *)2 : s);
	k->gridX = (int32_t)grid[0], k->gridY = (int32_t)grid[1], k->gridZ = (int32_t)grid[2];
	k->blockX = (int32_t)block[0], k->blockY = (int32_t)block[1], k->blockZ = (int32_t)block[2];
	k->dynamicSharedMemory = (int32_t)shmem;
	k->name = intern(name);
	pthread_mutex_unlock(&lock);
	flog("cupti: kernel %s", name);
}

/* one set per process, as CUPTI's (a second: error 39) */
CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
					   CUpti_BuffersCallbackCompleteFunc comp)
{
	if (requested || completed)
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	requested = req;
	completed = comp;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
	stamp = fn;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	if (kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
		return CUPTI_ERROR_NOT_SUPPORTED;
	enabled = 1;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	if (kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
		return CUPTI_ERROR_NOT_SUPPORTED;
	enabled = 0;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	uint8_t *next = *rec ? (uint8_t *)*rec + sizeof(CUpti_ActivityKernel10) : buf;
	if (next + sizeof(CUpti_ActivityKernel10) > buf + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)next;
	return CUPTI_SUCCESS;
}

/* Every pending record, in as many buffers as the client's hold. */
CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	for (;;) {
		pthread_mutex_lock(&lock);
		if (!npending || !requested || !completed) {
			pthread_mutex_unlock(&lock);
			return CUPTI_SUCCESS;
		}
		uint8_t *buf = NULL;
		size_t size = 0, max = 0;
		requested(&buf, &size, &max);
		size_t n = buf ? size / sizeof(CUpti_ActivityKernel10) : 0;
		if (n > npending)
			n = npending;
		if (buf && n)
			memcpy(buf, pending, n * sizeof(CUpti_ActivityKernel10));
		memmove(pending, pending + n, (npending - n) * sizeof(CUpti_ActivityKernel10));
		npending -= n;
		pthread_mutex_unlock(&lock);
		if (!buf)
			return CUPTI_ERROR_OUT_OF_MEMORY;
		completed(NULL, 0, buf, size, n * sizeof(CUpti_ActivityKernel10));
		if (!n)
			return CUPTI_SUCCESS;
	}
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *dropped)
{
	(void)ctx, (void)stream;
	pthread_mutex_lock(&lock);
	*dropped = ndropped;
	ndropped = 0;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetContextId(CUcontext ctx, uint32_t *id)
{
	pthread_mutex_lock(&lock);
	*id = ctx_id(ctx);
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetStreamIdEx(CUcontext ctx, CUstream s, uint8_t pt, uint32_t *id)
{
	pthread_mutex_lock(&lock);
	*id = stream_id(ctx, pt && !s ? (const void *)2 : (const void *)s);
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}
