/* A context's printf rings: NRINGS rings in device memory that the
 * probes' printf() writes (struct gpux_ring, gpux_dev.h), copied out on
 * the runtime's own stream and forwarded into the session slot's event
 * ring, where the controller formats them. In device memory a record
 * costs the kernel what a store to HBM costs; in mapped host memory each
 * crossed the bus, and a million-thread launch waited on the bus's
 * bandwidth. Called with rt_lock held. */
#include "rt_ctx_priv.h"

#include <stddef.h>
#include <string.h>

#include "gpux_dev.h"

/* Pinned host memory the copies use. */
struct rt_ring_stage {
	unsigned char words[RINGS_WORDS]; /* every ring's words, as last copied */
	uint64_t tail[NRINGS];            /* the source of each ring's tail update */
	unsigned char data[RING_SIZE];    /* one ring's unread bytes, unwrapped */
};

static CUdeviceptr words_of(const struct rt_ctx *x, int k)
{
	return x->rings + (CUdeviceptr)k * GPUX_RING_STRIDE;
}

static CUdeviceptr data_of(const struct rt_ctx *x, int k)
{
	return x->rings + RINGS_WORDS + (CUdeviceptr)k * RING_SIZE;
}

CUresult rt_ring_alloc(struct rt_ctx *x)
{
	if (!rt_probes_call("gpux_h_printf"))
		return CUDA_SUCCESS; /* nothing prints: gpux_ctl points at no ring */
	CUresult rc = rt_cu.MemHostAlloc((void **)&x->stage, sizeof(*x->stage), 0);
	if (rc != CUDA_SUCCESS) {
		x->stage = NULL;
		return rc;
	}
	memset(x->stage, 0, sizeof(*x->stage));
	rc = rt_cu.MemAlloc(&x->rings, RINGS_WORDS + (size_t)NRINGS * RING_SIZE);
	if (rc != CUDA_SUCCESS) {
		x->rings = 0;
		return rc;
	}
	for (int k = 0; k < NRINGS; k++) {
		struct gpux_ring *r = (struct gpux_ring *)(x->stage->words + k * GPUX_RING_STRIDE);
		r->data = data_of(x, k);
		r->size = RING_SIZE;
	}
	/* the words, then every ring's bytes zeroed (len 0: nothing yet) */
	rc = rt_cu.MemcpyHtoDAsync(x->rings, x->stage->words, RINGS_WORDS, x->stream);
	if (rc == CUDA_SUCCESS)
		rc = rt_cu.MemsetD8Async(x->rings + RINGS_WORDS, 0, (size_t)NRINGS * RING_SIZE,
					 x->stream);
	return rc;
}

bool rt_ring_queue_words(struct rt_ctx *x)
{
	return x->rings && rt_cu.MemcpyDtoHAsync(x->stage->words, x->rings, RINGS_WORDS,
						 x->stream) == CUDA_SUCCESS;
}

uint64_t rt_ring_drops(const struct rt_ctx *x)
{
	uint64_t n = 0;
	for (int k = 0; x->rings && k < NRINGS; k++)
		n += ((const struct gpux_ring *)(x->stage->words + k * GPUX_RING_STRIDE))->drops;
	return n;
}

/* Copies one record into the slot's event ring, or counts it dropped
 * when the controller has fallen behind. */
static void forward(struct rt_ctx *x, const unsigned char *rec, uint32_t len)
{
	struct gpux_sess_hdr *h = rt_sess();
	struct gpux_sess_slot *s = x->slot;
	unsigned char *ring = gpux_sess_ring(s);
	uint64_t size = h->ring_size, head = s->ring_head;
	uint64_t tail = __atomic_load_n(&s->ring_tail, __ATOMIC_ACQUIRE);
	uint64_t off = head & (size - 1), to_end = size - off;
	uint64_t need = len + (len > to_end ? to_end : 0);
	if (head + need - tail > size) {
		x->fwd_drops++;
		__atomic_store_n(&s->ring_drops, x->dev_drops + x->fwd_drops, __ATOMIC_RELAXED);
		return;
	}
	if (len > to_end) {
		struct gpux_rec_hdr fill = { (uint32_t)to_end, GPUX_SESS_FILLER, 0, 0 };
		memcpy(ring + off, &fill, sizeof(fill));
		head += to_end;
		off = 0;
	}
	memcpy(ring + off, rec, len);
	__atomic_store_n(&s->ring_head, head + len, __ATOMIC_RELEASE);
}

/* Zeroes n consumed bytes of ring k from its tail on the device, then
 * publishes the new tail there: the stream runs them in that order, so
 * no writer reuses a byte before it is zero (len 0: not written yet). */
static bool consume(struct rt_ctx *x, int k, uint64_t n)
{
	uint64_t off = x->tails[k] & (RING_SIZE - 1);
	uint64_t first = n < RING_SIZE - off ? n : RING_SIZE - off;
	CUstream st = x->stream;
	if (rt_cu.MemsetD8Async(data_of(x, k) + off, 0, first, st) != CUDA_SUCCESS ||
	    (n > first && rt_cu.MemsetD8Async(data_of(x, k), 0, n - first, st) != CUDA_SUCCESS))
		return false;
	x->tails[k] += n;
	x->stage->tail[k] = x->tails[k];
	return rt_cu.MemcpyHtoDAsync(words_of(x, k) + offsetof(struct gpux_ring, tail),
				     &x->stage->tail[k], 8, st) == CUDA_SUCCESS;
}

/* Copies n bytes of ring k from the host's tail into the stage. */
static bool copy_out(struct rt_ctx *x, int k, uint64_t n)
{
	uint64_t off = x->tails[k] & (RING_SIZE - 1);
	uint64_t first = n < RING_SIZE - off ? n : RING_SIZE - off;
	unsigned char *d = x->stage->data;
	return rt_cu.MemcpyDtoHAsync(d, data_of(x, k) + off, first, x->stream) == CUDA_SUCCESS &&
	       (n == first ||
		rt_cu.MemcpyDtoHAsync(d + first, data_of(x, k), n - first, x->stream) ==
			CUDA_SUCCESS) &&
	       rt_cu.StreamSynchronize(x->stream) == CUDA_SUCCESS;
}

/* The bytes of whole published records at the stage's start, up to n;
 * UINT64_MAX for a damaged one. */
static uint64_t published(const unsigned char *d, uint64_t n)
{
	uint64_t pos = 0;
	while (n - pos >= sizeof(struct gpux_rec_hdr)) {
		uint32_t len;
		memcpy(&len, d + pos, sizeof(len));
		if (!len)
			break;
		if (len < sizeof(struct gpux_rec_hdr) || len % GPUX_REC_ALIGN || len > n - pos) {
			rt_warn("a damaged printf record (%u bytes); later records are lost", len);
			return UINT64_MAX;
		}
		pos += len;
	}
	return pos;
}

/* Forwards ring k's published records between the host's tail and head.
 * A record reserved but not yet published (len 0) ends the pass; the
 * next one starts there again. A copy need not read a record's bytes in
 * order, so the records a first copy shows published are copied again
 * and forwarded from that second copy: their writers' fences put every
 * argument in place before len, which the first copy already saw.
 * false: the ring is unusable. */
static bool drain_one(struct rt_ctx *x, int k, uint64_t head)
{
	uint64_t n = head - x->tails[k];
	if (n > RING_SIZE || n % GPUX_REC_ALIGN) {
		rt_warn("printf ring %d is damaged (head %llu, tail %llu); later records are lost",
			k, (unsigned long long)head, (unsigned long long)x->tails[k]);
		return false;
	}
	if (!copy_out(x, k, n))
		return true; /* try again next time */
	uint64_t done = published(x->stage->data, n);
	if (done == UINT64_MAX)
		return false;
	if (!done || !copy_out(x, k, done))
		return true;
	const unsigned char *d = x->stage->data;
	uint64_t again = published(d, done);
	if (again != done) { /* a published len changed before it was consumed */
		if (again != UINT64_MAX)
			rt_warn("printf ring %d changed under its reader; later records are lost", k);
		return false;
	}
	for (uint64_t pos = 0; pos < done;) {
		uint32_t len;
		memcpy(&len, d + pos, sizeof(len));
		forward(x, d + pos, len);
		pos += len;
	}
	return consume(x, k, done);
}

void rt_ring_drain(struct rt_ctx *x)
{
	if (!x->rings || x->ring_broken)
		return;
	CUcontext prev = NULL;
	rt_cu.CtxGetCurrent(&prev);
	if (rt_cu.CtxSetCurrent(x->ctx) != CUDA_SUCCESS)
		return;
	if (rt_ring_queue_words(x) && rt_cu.StreamSynchronize(x->stream) == CUDA_SUCCESS) {
		for (int k = 0; k < NRINGS && !x->ring_broken; k++) {
			const struct gpux_ring *r =
				(const struct gpux_ring *)(x->stage->words + k * GPUX_RING_STRIDE);
			if (r->head != x->tails[k] && !drain_one(x, k, r->head))
				x->ring_broken = true;
		}
	}
	rt_cu.CtxSetCurrent(prev);
}
