/* cuda: events of memory and synchronization: cuda:malloc, cuda:free,
 * cuda:memcpy and cuda:sync fire after each successful call. A hook
 * forwards to libcuda's function and, when nobody listens, costs one
 * relaxed load more. _ptds/_ptsz: the per-thread-default-stream
 * variants (programs built with --default-stream per-thread, and
 * cudart's cuGetProcAddress lookups with that flag). stream is the
 * handle the program passed (0 for synchronous calls; a _ptsz call's 0
 * is the thread's default stream). */
#include "rt_hooks.h"

#include <stdio.h>
#include <string.h>

static inline uint64_t u64(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

#define ON(ev) (rc == CUDA_SUCCESS && rt_cev_on(ev))
/* The contexts are built out of line: a hook nobody listens to keeps
 * no frame for them. */
#define COLD __attribute__((noinline, cold))

/* ---------------- cuda:malloc, cuda:free ---------------- */

static COLD void malloc_ev(CUdeviceptr p, uint64_t bytes, bool managed)
{
	struct gpux_cev_malloc c = { .ptr = p, .bytes = bytes, .managed = managed };
	rt_cev_emit(GPUX_CEV_MALLOC, &c, sizeof c, NULL);
}

static COLD void free_ev(CUdeviceptr p)
{
	struct gpux_cev_free c = { .ptr = p };
	rt_cev_emit(GPUX_CEV_FREE, &c, sizeof c, NULL);
}

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*alloc_pitch_fn)(CUdeviceptr *, size_t *, size_t, size_t, unsigned);
typedef CUresult (*alloc_managed_fn)(CUdeviceptr *, size_t, unsigned);
typedef CUresult (*alloc_async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*alloc_pool_fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	alloc_fn fn = REAL(H_MALLOC, "cuMemAlloc_v2", alloc_fn);
	CUresult rc = fn ? fn(p, n) : NO_CUDA;
	if (ON(GPUX_CEV_MALLOC))
		malloc_ev(*p, n, false);
	return rc;
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t width, size_t height,
			    unsigned elem)
{
	alloc_pitch_fn fn = REAL(H_MALLOC_PITCH, "cuMemAllocPitch_v2", alloc_pitch_fn);
	CUresult rc = fn ? fn(p, pitch, width, height, elem) : NO_CUDA;
	if (ON(GPUX_CEV_MALLOC))
		malloc_ev(*p, (uint64_t)*pitch * height, false);
	return rc;
}

CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned flags)
{
	alloc_managed_fn fn = REAL(H_MALLOC_MANAGED, "cuMemAllocManaged", alloc_managed_fn);
	CUresult rc = fn ? fn(p, n, flags) : NO_CUDA;
	if (ON(GPUX_CEV_MALLOC))
		malloc_ev(*p, n, true);
	return rc;
}

static inline CUresult alloc_async(enum hook_id id, const char *sym, CUdeviceptr *p, size_t n,
				   CUstream s)
{
	alloc_async_fn fn = REAL(id, sym, alloc_async_fn);
	CUresult rc = fn ? fn(p, n, s) : NO_CUDA;
	if (ON(GPUX_CEV_MALLOC))
		malloc_ev(*p, n, false);
	return rc;
}

CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s)
{
	return alloc_async(H_MALLOC_ASYNC, "cuMemAllocAsync", p, n, s);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t n, CUstream s);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t n, CUstream s)
{
	return alloc_async(H_MALLOC_ASYNC_PT, "cuMemAllocAsync_ptsz", p, n, s);
}

static inline CUresult alloc_pool(enum hook_id id, const char *sym, CUdeviceptr *p, size_t n,
				  CUmemoryPool pool, CUstream s)
{
	alloc_pool_fn fn = REAL(id, sym, alloc_pool_fn);
	CUresult rc = fn ? fn(p, n, pool, s) : NO_CUDA;
	if (ON(GPUX_CEV_MALLOC))
		malloc_ev(*p, n, false);
	return rc;
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s)
{
	return alloc_pool(H_MALLOC_POOL, "cuMemAllocFromPoolAsync", p, n, pool, s);
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t n, CUmemoryPool pool,
				      CUstream s);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t n, CUmemoryPool pool,
				      CUstream s)
{
	return alloc_pool(H_MALLOC_POOL_PT, "cuMemAllocFromPoolAsync_ptsz", p, n, pool, s);
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
	free_fn fn = REAL(H_FREE, "cuMemFree_v2", free_fn);
	CUresult rc = fn ? fn(p) : NO_CUDA;
	if (ON(GPUX_CEV_FREE))
		free_ev(p);
	return rc;
}

static inline CUresult free_async(enum hook_id id, const char *sym, CUdeviceptr p, CUstream s)
{
	free_async_fn fn = REAL(id, sym, free_async_fn);
	CUresult rc = fn ? fn(p, s) : NO_CUDA;
	if (ON(GPUX_CEV_FREE))
		free_ev(p);
	return rc;
}

CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
	return free_async(H_FREE_ASYNC, "cuMemFreeAsync", p, s);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s)
{
	return free_async(H_FREE_ASYNC_PT, "cuMemFreeAsync_ptsz", p, s);
}

/* ---------------- cuda:memcpy ---------------- */

static COLD void copy_ev(uint64_t dst, uint64_t src, uint64_t bytes, const char *kind, CUstream s,
		    bool async)
{
	struct gpux_cev_memcpy c = { .dst = dst, .src = src, .bytes = bytes,
				     .stream = u64(s), .async = async };
	strcpy(c.kind, kind);
	rt_cev_emit(GPUX_CEV_MEMCPY, &c, sizeof c, NULL);
}

/* The linear copies: (dst, src, bytes), and with a stream. DT, ST: how
 * each end is passed (CUdeviceptr or a host pointer). */
#define COPY_HELPERS(NAME, DT, ST, KIND)                                                  \
	typedef CUresult (*NAME##_fn)(DT, ST, size_t);                                     \
	typedef CUresult (*NAME##_async_fn)(DT, ST, size_t, CUstream);                    \
	static inline CUresult NAME(enum hook_id id, const char *sym, DT d, ST s, size_t n) \
	{                                                                                  \
		NAME##_fn fn = REAL(id, sym, NAME##_fn);                                   \
		CUresult rc = fn ? fn(d, s, n) : NO_CUDA;                                  \
		if (ON(GPUX_CEV_MEMCPY))                                                   \
			copy_ev((uint64_t)(uintptr_t)d, (uint64_t)(uintptr_t)s, n, KIND,   \
				NULL, false);                                              \
		return rc;                                                                 \
	}                                                                                  \
	static inline CUresult NAME##_async(enum hook_id id, const char *sym, DT d, ST s,  \
					    size_t n, CUstream st)                         \
	{                                                                                  \
		NAME##_async_fn fn = REAL(id, sym, NAME##_async_fn);                       \
		CUresult rc = fn ? fn(d, s, n, st) : NO_CUDA;                              \
		if (ON(GPUX_CEV_MEMCPY))                                                   \
			copy_ev((uint64_t)(uintptr_t)d, (uint64_t)(uintptr_t)s, n, KIND,   \
				st, true);                                                 \
		return rc;                                                                 \
	}

COPY_HELPERS(copy_any, CUdeviceptr, CUdeviceptr, "default")
COPY_HELPERS(copy_htod, CUdeviceptr, const void *, "HtoD")
COPY_HELPERS(copy_dtoh, void *, CUdeviceptr, "DtoH")
COPY_HELPERS(copy_dtod, CUdeviceptr, CUdeviceptr, "DtoD")

/* An exported hook: NAME PARAMS, calling HELPER(ID, "NAME", args...). */
#define HOOK(NAME, ID, HELPER, PARAMS, ...) \
	CUresult NAME PARAMS;               \
	CUresult NAME PARAMS                \
	{                                   \
		return HELPER(ID, #NAME, __VA_ARGS__); \
	}

#define P_DD (CUdeviceptr d, CUdeviceptr s, size_t n)
#define P_DD_S (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
#define P_DH (CUdeviceptr d, const void *s, size_t n)
#define P_DH_S (CUdeviceptr d, const void *s, size_t n, CUstream st)
#define P_HD (void *d, CUdeviceptr s, size_t n)
#define P_HD_S (void *d, CUdeviceptr s, size_t n, CUstream st)

HOOK(cuMemcpy, H_MEMCPY, copy_any, P_DD, d, s, n)
HOOK(cuMemcpy_ptds, H_MEMCPY_PT, copy_any, P_DD, d, s, n)
HOOK(cuMemcpyAsync, H_MEMCPY_ASYNC, copy_any_async, P_DD_S, d, s, n, st)
HOOK(cuMemcpyAsync_ptsz, H_MEMCPY_ASYNC_PT, copy_any_async, P_DD_S, d, s, n, st)
HOOK(cuMemcpyHtoD_v2, H_HTOD, copy_htod, P_DH, d, s, n)
HOOK(cuMemcpyHtoD_v2_ptds, H_HTOD_PT, copy_htod, P_DH, d, s, n)
HOOK(cuMemcpyHtoDAsync_v2, H_HTOD_ASYNC, copy_htod_async, P_DH_S, d, s, n, st)
HOOK(cuMemcpyHtoDAsync_v2_ptsz, H_HTOD_ASYNC_PT, copy_htod_async, P_DH_S, d, s, n, st)
HOOK(cuMemcpyDtoH_v2, H_DTOH, copy_dtoh, P_HD, d, s, n)
HOOK(cuMemcpyDtoH_v2_ptds, H_DTOH_PT, copy_dtoh, P_HD, d, s, n)
HOOK(cuMemcpyDtoHAsync_v2, H_DTOH_ASYNC, copy_dtoh_async, P_HD_S, d, s, n, st)
HOOK(cuMemcpyDtoHAsync_v2_ptsz, H_DTOH_ASYNC_PT, copy_dtoh_async, P_HD_S, d, s, n, st)
HOOK(cuMemcpyDtoD_v2, H_DTOD, copy_dtod, P_DD, d, s, n)
HOOK(cuMemcpyDtoD_v2_ptds, H_DTOD_PT, copy_dtod, P_DD, d, s, n)
HOOK(cuMemcpyDtoDAsync_v2, H_DTOD_ASYNC, copy_dtod_async, P_DD_S, d, s, n, st)
HOOK(cuMemcpyDtoDAsync_v2_ptsz, H_DTOD_ASYNC_PT, copy_dtod_async, P_DD_S, d, s, n, st)

/* Between contexts (devices): device to device. */
typedef CUresult (*peer_fn)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t);
typedef CUresult (*peer_async_fn)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t,
				  CUstream);

static inline CUresult peer(enum hook_id id, const char *sym, CUdeviceptr d, CUcontext dc,
			    CUdeviceptr s, CUcontext sc, size_t n)
{
	peer_fn fn = REAL(id, sym, peer_fn);
	CUresult rc = fn ? fn(d, dc, s, sc, n) : NO_CUDA;
	if (ON(GPUX_CEV_MEMCPY))
		copy_ev(d, s, n, "DtoD", NULL, false);
	return rc;
}

static inline CUresult peer_async(enum hook_id id, const char *sym, CUdeviceptr d,
				  CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st)
{
	peer_async_fn fn = REAL(id, sym, peer_async_fn);
	CUresult rc = fn ? fn(d, dc, s, sc, n, st) : NO_CUDA;
	if (ON(GPUX_CEV_MEMCPY))
		copy_ev(d, s, n, "DtoD", st, true);
	return rc;
}

#define P_PEER (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n)
#define P_PEER_S (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, \
		  CUstream st)
HOOK(cuMemcpyPeer, H_PEER, peer, P_PEER, d, dc, s, sc, n)
HOOK(cuMemcpyPeer_ptds, H_PEER_PT, peer, P_PEER, d, dc, s, sc, n)
HOOK(cuMemcpyPeerAsync, H_PEER_ASYNC, peer_async, P_PEER_S, d, dc, s, sc, n, st)
HOOK(cuMemcpyPeerAsync_ptsz, H_PEER_ASYNC_PT, peer_async, P_PEER_S, d, dc, s, sc, n, st)

/* 2D and 3D copies: the kind from the two memory types (arrays are
 * device memory; unified memory, either way, is "default"); each end's
 * address is that of its first byte copied, or the CUarray handle. */
static char side(CUmemorytype t)
{
	return t == CU_MEMORYTYPE_HOST ? 'H'
	       : t == CU_MEMORYTYPE_DEVICE || t == CU_MEMORYTYPE_ARRAY ? 'D' : 0;
}

static void kind_of(CUmemorytype src, CUmemorytype dst, char kind[GPUX_CEV_STR])
{
	char s = side(src), d = side(dst);
	if (s && d)
		snprintf(kind, GPUX_CEV_STR, "%cto%c", s, d);
	else
		strcpy(kind, "default");
}

static uint64_t at(CUmemorytype t, const void *host, CUdeviceptr dev, CUarray arr, size_t x,
		   size_t y, size_t z, size_t pitch, size_t height)
{
	if (t == CU_MEMORYTYPE_ARRAY)
		return u64(arr);
	uint64_t base = t == CU_MEMORYTYPE_HOST ? u64(host) : dev;
	return base + x + ((uint64_t)z * height + y) * pitch;
}

static COLD void copy2d_ev(const CUDA_MEMCPY2D *p, CUstream s, bool async)
{
	struct gpux_cev_memcpy c = {
		.dst = at(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray,
			  p->dstXInBytes, p->dstY, 0, p->dstPitch, 0),
		.src = at(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray,
			  p->srcXInBytes, p->srcY, 0, p->srcPitch, 0),
		.bytes = (uint64_t)p->WidthInBytes * p->Height,
		.stream = u64(s),
		.async = async,
	};
	kind_of(p->srcMemoryType, p->dstMemoryType, c.kind);
	rt_cev_emit(GPUX_CEV_MEMCPY, &c, sizeof c, NULL);
}

static COLD void copy3d_ev(const CUDA_MEMCPY3D *p, CUstream s, bool async)
{
	struct gpux_cev_memcpy c = {
		.dst = at(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray,
			  p->dstXInBytes, p->dstY, p->dstZ, p->dstPitch, p->dstHeight),
		.src = at(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray,
			  p->srcXInBytes, p->srcY, p->srcZ, p->srcPitch, p->srcHeight),
		.bytes = (uint64_t)p->WidthInBytes * p->Height * p->Depth,
		.stream = u64(s),
		.async = async,
	};
	kind_of(p->srcMemoryType, p->dstMemoryType, c.kind);
	rt_cev_emit(GPUX_CEV_MEMCPY, &c, sizeof c, NULL);
}

typedef CUresult (*copy2d_fn)(const CUDA_MEMCPY2D *);
typedef CUresult (*copy2d_async_fn)(const CUDA_MEMCPY2D *, CUstream);
typedef CUresult (*copy3d_fn)(const CUDA_MEMCPY3D *);
typedef CUresult (*copy3d_async_fn)(const CUDA_MEMCPY3D *, CUstream);

static inline CUresult copy2d(enum hook_id id, const char *sym, const CUDA_MEMCPY2D *p)
{
	copy2d_fn fn = REAL(id, sym, copy2d_fn);
	CUresult rc = fn ? fn(p) : NO_CUDA;
	if (ON(GPUX_CEV_MEMCPY) && p)
		copy2d_ev(p, NULL, false);
	return rc;
}

static inline CUresult copy2d_async(enum hook_id id, const char *sym, const CUDA_MEMCPY2D *p,
				    CUstream st)
{
	copy2d_async_fn fn = REAL(id, sym, copy2d_async_fn);
	CUresult rc = fn ? fn(p, st) : NO_CUDA;
	if (ON(GPUX_CEV_MEMCPY) && p)
		copy2d_ev(p, st, true);
	return rc;
}

static inline CUresult copy3d(enum hook_id id, const char *sym, const CUDA_MEMCPY3D *p)
{
	copy3d_fn fn = REAL(id, sym, copy3d_fn);
	CUresult rc = fn ? fn(p) : NO_CUDA;
	if (ON(GPUX_CEV_MEMCPY) && p)
		copy3d_ev(p, NULL, false);
	return rc;
}

static inline CUresult copy3d_async(enum hook_id id, const char *sym, const CUDA_MEMCPY3D *p,
				    CUstream st)
{
	copy3d_async_fn fn = REAL(id, sym, copy3d_async_fn);
	CUresult rc = fn ? fn(p, st) : NO_CUDA;
	if (ON(GPUX_CEV_MEMCPY) && p)
		copy3d_ev(p, st, true);
	return rc;
}

HOOK(cuMemcpy2D_v2, H_2D, copy2d, (const CUDA_MEMCPY2D *p), p)
HOOK(cuMemcpy2D_v2_ptds, H_2D_PT, copy2d, (const CUDA_MEMCPY2D *p), p)
HOOK(cuMemcpy2DAsync_v2, H_2D_ASYNC, copy2d_async, (const CUDA_MEMCPY2D *p, CUstream st), p, st)
HOOK(cuMemcpy2DAsync_v2_ptsz, H_2D_ASYNC_PT, copy2d_async,
     (const CUDA_MEMCPY2D *p, CUstream st), p, st)
HOOK(cuMemcpy3D_v2, H_3D, copy3d, (const CUDA_MEMCPY3D *p), p)
HOOK(cuMemcpy3D_v2_ptds, H_3D_PT, copy3d, (const CUDA_MEMCPY3D *p), p)
HOOK(cuMemcpy3DAsync_v2, H_3D_ASYNC, copy3d_async, (const CUDA_MEMCPY3D *p, CUstream st), p, st)
HOOK(cuMemcpy3DAsync_v2_ptsz, H_3D_ASYNC_PT, copy3d_async,
     (const CUDA_MEMCPY3D *p, CUstream st), p, st)

/* ---------------- cuda:sync ---------------- */

static COLD void sync_ev(CUstream s)
{
	struct gpux_cev_sync c = { .stream = u64(s) };
	rt_cev_emit(GPUX_CEV_SYNC, &c, sizeof c, NULL);
}

typedef CUresult (*stream_sync_fn)(CUstream);
typedef CUresult (*ctx_sync_fn)(void);
typedef CUresult (*ctx_sync2_fn)(CUcontext);

static inline CUresult stream_sync(enum hook_id id, const char *sym, CUstream s)
{
	stream_sync_fn fn = REAL(id, sym, stream_sync_fn);
	CUresult rc = fn ? fn(s) : NO_CUDA;
	if (rc == CUDA_SUCCESS) /* what it waited for reaches cuda:kernel_end first */
		rt_kend_sync();
	if (ON(GPUX_CEV_SYNC))
		sync_ev(s);
	return rc;
}

HOOK(cuStreamSynchronize, H_STREAM_SYNC, stream_sync, (CUstream s), s)
HOOK(cuStreamSynchronize_ptsz, H_STREAM_SYNC_PT, stream_sync, (CUstream s), s)

CUresult cuCtxSynchronize(void)
{
	ctx_sync_fn fn = REAL(H_CTX_SYNC, "cuCtxSynchronize", ctx_sync_fn);
	CUresult rc = fn ? fn() : NO_CUDA;
	if (rc == CUDA_SUCCESS)
		rt_kend_sync();
	if (ON(GPUX_CEV_SYNC))
		sync_ev(NULL);
	return rc;
}

/* CUDA 13: a context's (NULL: the current one's); still stream 0. */
CUresult cuCtxSynchronize_v2(CUcontext ctx);
CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	ctx_sync2_fn fn = REAL(H_CTX_SYNC2, "cuCtxSynchronize_v2", ctx_sync2_fn);
	CUresult rc = fn ? fn(ctx) : NO_CUDA;
	if (rc == CUDA_SUCCESS)
		rt_kend_sync();
	if (ON(GPUX_CEV_SYNC))
		sync_ev(NULL);
	return rc;
}

/* ---------------- the table ---------------- */

/* NAME, what cuGetProcAddress is asked for, from which CUDA version it
 * answers with NAME (cudaTypedefs.h's PFN_*_vN: the version of the
 * arguments, the per-thread variant's being its legacy twin's), and
 * whether NAME is the per-thread variant. */
#define E(NAME, BASE, SINCE, PT, ID) { #NAME, BASE, SINCE, PT, ID, (void *)NAME }
const struct rt_hook rt_api_hooks[] = {
	E(cuMemAlloc_v2, "cuMemAlloc", 3020, false, H_MALLOC),
	E(cuMemAllocPitch_v2, "cuMemAllocPitch", 3020, false, H_MALLOC_PITCH),
	E(cuMemAllocManaged, "cuMemAllocManaged", 6000, false, H_MALLOC_MANAGED),
	E(cuMemAllocAsync, "cuMemAllocAsync", 11020, false, H_MALLOC_ASYNC),
	E(cuMemAllocAsync_ptsz, "cuMemAllocAsync", 11020, true, H_MALLOC_ASYNC_PT),
	E(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 11020, false, H_MALLOC_POOL),
	E(cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", 11020, true, H_MALLOC_POOL_PT),
	E(cuMemFree_v2, "cuMemFree", 3020, false, H_FREE),
	E(cuMemFreeAsync, "cuMemFreeAsync", 11020, false, H_FREE_ASYNC),
	E(cuMemFreeAsync_ptsz, "cuMemFreeAsync", 11020, true, H_FREE_ASYNC_PT),
	E(cuMemcpy, "cuMemcpy", 4000, false, H_MEMCPY),
	E(cuMemcpy_ptds, "cuMemcpy", 4000, true, H_MEMCPY_PT),
	E(cuMemcpyAsync, "cuMemcpyAsync", 4000, false, H_MEMCPY_ASYNC),
	E(cuMemcpyAsync_ptsz, "cuMemcpyAsync", 4000, true, H_MEMCPY_ASYNC_PT),
	E(cuMemcpyHtoD_v2, "cuMemcpyHtoD", 3020, false, H_HTOD),
	E(cuMemcpyHtoD_v2_ptds, "cuMemcpyHtoD", 3020, true, H_HTOD_PT),
	E(cuMemcpyDtoH_v2, "cuMemcpyDtoH", 3020, false, H_DTOH),
	E(cuMemcpyDtoH_v2_ptds, "cuMemcpyDtoH", 3020, true, H_DTOH_PT),
	E(cuMemcpyDtoD_v2, "cuMemcpyDtoD", 3020, false, H_DTOD),
	E(cuMemcpyDtoD_v2_ptds, "cuMemcpyDtoD", 3020, true, H_DTOD_PT),
	E(cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync", 3020, false, H_HTOD_ASYNC),
	E(cuMemcpyHtoDAsync_v2_ptsz, "cuMemcpyHtoDAsync", 3020, true, H_HTOD_ASYNC_PT),
	E(cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync", 3020, false, H_DTOH_ASYNC),
	E(cuMemcpyDtoHAsync_v2_ptsz, "cuMemcpyDtoHAsync", 3020, true, H_DTOH_ASYNC_PT),
	E(cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync", 3020, false, H_DTOD_ASYNC),
	E(cuMemcpyDtoDAsync_v2_ptsz, "cuMemcpyDtoDAsync", 3020, true, H_DTOD_ASYNC_PT),
	E(cuMemcpyPeer, "cuMemcpyPeer", 4000, false, H_PEER),
	E(cuMemcpyPeer_ptds, "cuMemcpyPeer", 4000, true, H_PEER_PT),
	E(cuMemcpyPeerAsync, "cuMemcpyPeerAsync", 4000, false, H_PEER_ASYNC),
	E(cuMemcpyPeerAsync_ptsz, "cuMemcpyPeerAsync", 4000, true, H_PEER_ASYNC_PT),
	E(cuMemcpy2D_v2, "cuMemcpy2D", 3020, false, H_2D),
	E(cuMemcpy2D_v2_ptds, "cuMemcpy2D", 3020, true, H_2D_PT),
	E(cuMemcpy2DAsync_v2, "cuMemcpy2DAsync", 3020, false, H_2D_ASYNC),
	E(cuMemcpy2DAsync_v2_ptsz, "cuMemcpy2DAsync", 3020, true, H_2D_ASYNC_PT),
	E(cuMemcpy3D_v2, "cuMemcpy3D", 3020, false, H_3D),
	E(cuMemcpy3D_v2_ptds, "cuMemcpy3D", 3020, true, H_3D_PT),
	E(cuMemcpy3DAsync_v2, "cuMemcpy3DAsync", 3020, false, H_3D_ASYNC),
	E(cuMemcpy3DAsync_v2_ptsz, "cuMemcpy3DAsync", 3020, true, H_3D_ASYNC_PT),
	E(cuStreamSynchronize, "cuStreamSynchronize", 0, false, H_STREAM_SYNC),
	E(cuStreamSynchronize_ptsz, "cuStreamSynchronize", 0, true, H_STREAM_SYNC_PT),
	E(cuCtxSynchronize, "cuCtxSynchronize", 0, false, H_CTX_SYNC),
	E(cuCtxSynchronize_v2, "cuCtxSynchronize", 13000, false, H_CTX_SYNC2),
};
#undef E
const size_t rt_api_nhooks = sizeof(rt_api_hooks) / sizeof(rt_api_hooks[0]);
