/* Memory actions of cuda: probes (abi/cuda_actions.h), served to the
 * VM through its extension hook: prefetch() and evict() are
 * cuMemPrefetchAsync to the current context's GPU or to the host,
 * advise() is cuMemAdvise, each on the event's stream so that a
 * cuda:launch's prefetch is ordered before its kernel. They are hints:
 * memory that is not managed, a zero length, or the driver's refusal
 * make a counted no-op (the controller prints the counts at exit, the
 * first refusal of each action is a message), never an error in the
 * program. So does a prefetch or evict on a stream being captured into
 * a graph, which would end the program's capture with an error; the calls
 * run in relaxed capture mode, so another thread's capture is not
 * disturbed either. A range is cut at the end of the allocation that holds its
 * start, so "the next chunk" past a buffer's end asks for what is left. */
#include "rt.h"

#include <stdio.h>

#include "bpf_vm.h"

typedef CUresult (*prefetch_fn)(CUdeviceptr, size_t, CUmemLocation, unsigned, CUstream);
typedef CUresult (*prefetch_v1_fn)(CUdeviceptr, size_t, CUdevice, CUstream);
typedef CUresult (*advise_fn)(CUdeviceptr, size_t, CUmem_advise, CUmemLocation);
typedef CUresult (*advise_v1_fn)(CUdeviceptr, size_t, CUmem_advise, CUdevice);
typedef CUresult (*attr_fn)(void *, CUpointer_attribute, CUdeviceptr);
typedef CUresult (*mem_info_fn)(size_t *, size_t *);

static struct {
	bool resolved;
	prefetch_fn prefetch; /* CUDA 12.2+ (the only one in CUDA 13) */
	prefetch_v1_fn prefetch_v1;
	advise_fn advise;
	advise_v1_fn advise_v1;
	attr_fn attr;
	mem_info_fn mem_info;
} drv;

static struct gpux_act_count local[GPUX_ACT_COUNT];
static struct gpux_act_count *counts = local;
static bool told[GPUX_ACT_COUNT];
static __thread CUstream stream; /* of the event whose programs run */

static void resolve(void)
{
	if (drv.resolved)
		return;
	drv.prefetch = (prefetch_fn)rt_cuda_sym("cuMemPrefetchAsync_v2");
	if (!drv.prefetch)
		drv.prefetch_v1 = (prefetch_v1_fn)rt_cuda_sym("cuMemPrefetchAsync");
	drv.advise = (advise_fn)rt_cuda_sym("cuMemAdvise_v2");
	if (!drv.advise)
		drv.advise_v1 = (advise_v1_fn)rt_cuda_sym("cuMemAdvise");
	drv.attr = (attr_fn)rt_cuda_sym("cuPointerGetAttribute");
	drv.mem_info = (mem_info_fn)rt_cuda_sym("cuMemGetInfo_v2");
	drv.resolved = true;
}

void rt_actions_counts(struct gpux_act_count *acts)
{
	for (int i = 0; i < GPUX_ACT_COUNT; i++)
		acts[i] = local[i];
	counts = acts;
}

void rt_actions_event(enum gpux_cev ev, const void *ctx)
{
	uint64_t s = 0;
	switch (ev) {
	case GPUX_CEV_LAUNCH: s = ((const struct gpux_cev_launch *)ctx)->stream; break;
	case GPUX_CEV_MEMCPY: s = ((const struct gpux_cev_memcpy *)ctx)->stream; break;
	case GPUX_CEV_SYNC: s = ((const struct gpux_cev_sync *)ctx)->stream; break;
	case GPUX_CEV_GRAPH_LAUNCH: s = ((const struct gpux_cev_graph_launch *)ctx)->stream; break;
	case GPUX_CEV_MALLOC: {
		const struct gpux_cev_malloc *m = ctx;
		rt_alloc_add(m->ptr, m->bytes, m->managed);
		break;
	}
	case GPUX_CEV_FREE: rt_alloc_remove(((const struct gpux_cev_free *)ctx)->ptr); break;
	default: break;
	}
	stream = (CUstream)(uintptr_t)s;
}

/* How many bytes of [p, p + *bytes) to act on: cut at the end of its
 * allocation. False when the memory is not managed. */
static bool managed_range(uint64_t p, uint64_t *bytes)
{
	struct rt_alloc a;
	if (rt_alloc_find(p, &a)) {
		if (!a.managed)
			return false;
		uint64_t left = a.base + a.size - p;
		if (*bytes > left)
			*bytes = left;
		return true;
	}
	/* not allocated through a hooked call (a __managed__ variable):
	 * the driver says */
	unsigned int is = 0;
	return drv.attr && drv.attr(&is, CU_POINTER_ATTRIBUTE_IS_MANAGED, (CUdeviceptr)p) ==
			   CUDA_SUCCESS && is;
}

static __thread int event_gpu = -1;

void rt_actions_event_gpu(int dev)
{
	event_gpu = dev;
}

/* The event's device ordinal: a CUdevice is its ordinal */
uint64_t rt_actions_gpu(void)
{
	CUdevice d = 0;
	if (event_gpu >= 0)
		return (uint64_t)event_gpu;
	if (rt_cu.CtxGetDevice && rt_cu.CtxGetDevice(&d) != CUDA_SUCCESS)
		d = 0;
	return (uint64_t)d;
}

static CUmemLocation gpu_here(void)
{
	CUdevice d = 0;
	if (rt_cu.CtxGetDevice)
		rt_cu.CtxGetDevice(&d);
	return (CUmemLocation){ .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = (int)d };
}

static CUresult prefetch(uint64_t p, uint64_t n, bool to_host)
{
	CUmemLocation loc = to_host ? (CUmemLocation){ .type = CU_MEM_LOCATION_TYPE_HOST }
				    : gpu_here();
	if (drv.prefetch)
		return drv.prefetch((CUdeviceptr)p, n, loc, 0, stream);
	if (drv.prefetch_v1)
		return drv.prefetch_v1((CUdeviceptr)p, n, to_host ? CU_DEVICE_CPU : loc.id, stream);
	return CUDA_ERROR_NOT_SUPPORTED;
}

static CUresult advise(uint64_t p, uint64_t n, uint64_t hint)
{
	static const struct {
		CUmem_advise advice;
		bool host; /* the location: the host, else this GPU */
	} map[GPUX_ADVISE_COUNT] = {
		[GPUX_ADVISE_READ_MOSTLY] = { CU_MEM_ADVISE_SET_READ_MOSTLY, false },
		[GPUX_ADVISE_UNSET_READ_MOSTLY] = { CU_MEM_ADVISE_UNSET_READ_MOSTLY, false },
		[GPUX_ADVISE_PREFERRED_GPU] = { CU_MEM_ADVISE_SET_PREFERRED_LOCATION, false },
		[GPUX_ADVISE_PREFERRED_CPU] = { CU_MEM_ADVISE_SET_PREFERRED_LOCATION, true },
		[GPUX_ADVISE_UNSET_PREFERRED] = { CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, false },
		[GPUX_ADVISE_ACCESSED_BY_GPU] = { CU_MEM_ADVISE_SET_ACCESSED_BY, false },
		[GPUX_ADVISE_ACCESSED_BY_CPU] = { CU_MEM_ADVISE_SET_ACCESSED_BY, true },
		[GPUX_ADVISE_UNSET_ACCESSED_BY_GPU] = { CU_MEM_ADVISE_UNSET_ACCESSED_BY, false },
		[GPUX_ADVISE_UNSET_ACCESSED_BY_CPU] = { CU_MEM_ADVISE_UNSET_ACCESSED_BY, true },
	};
	if (hint >= GPUX_ADVISE_COUNT)
		return CUDA_ERROR_INVALID_VALUE;
	bool host = map[hint].host;
	CUmemLocation loc = host ? (CUmemLocation){ .type = CU_MEM_LOCATION_TYPE_HOST } : gpu_here();
	if (drv.advise)
		return drv.advise((CUdeviceptr)p, n, map[hint].advice, loc);
	if (drv.advise_v1)
		return drv.advise_v1((CUdeviceptr)p, n, map[hint].advice, host ? CU_DEVICE_CPU : loc.id);
	return CUDA_ERROR_NOT_SUPPORTED;
}

static uint64_t act(enum gpux_act which, const uint64_t *a)
{
	static const char *const names[] = GPUX_ACT_NAMES;
	struct gpux_act_count *c = &counts[which];
	uint64_t p = a[0], n = a[1];
	if (!n || !managed_range(p, &n)) {
		__atomic_add_fetch(&c->unmanaged, 1, __ATOMIC_RELAXED);
		return (uint64_t)-1;
	}
	/* advice is no stream operation: a capture does not take it */
	if (which != GPUX_ACT_ADVISE && rt_capturing(stream, false)) {
		__atomic_add_fetch(&c->captured, 1, __ATOMIC_RELAXED);
		return (uint64_t)-1;
	}
	uint64_t t0 = rt_now_ns();
	CUstreamCaptureMode prev = rt_relaxed_begin();
	CUresult rc = which == GPUX_ACT_ADVISE ? advise(p, n, a[2])
					       : prefetch(p, n, which == GPUX_ACT_EVICT);
	rt_relaxed_end(prev);
	__atomic_add_fetch(&c->ns, rt_now_ns() - t0, __ATOMIC_RELAXED);
	if (rc == CUDA_SUCCESS) {
		__atomic_add_fetch(&c->done, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&c->bytes, n, __ATOMIC_RELAXED);
		return 0;
	}
	__atomic_add_fetch(&c->refused, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&c->last_status, (int32_t)rc, __ATOMIC_RELAXED);
	if (!told[which]) {
		told[which] = true;
		rt_warn("%s(0x%llx, %llu): the driver refused it: %s; such calls are skipped",
			names[which], (unsigned long long)p, (unsigned long long)n, rt_cu_err(rc));
	}
	return (uint64_t)-1;
}

/* The VM's extension hook: runs under the VM's lock. */
static uint64_t serve(void *arg, int32_t id, const uint64_t *a)
{
	(void)arg;
	resolve();
	struct rt_alloc al;
	switch (id) {
	case GPUX_H_PREFETCH: return act(GPUX_ACT_PREFETCH, a);
	case GPUX_H_EVICT: return act(GPUX_ACT_EVICT, a);
	case GPUX_H_ADVISE: return act(GPUX_ACT_ADVISE, a);
	case GPUX_H_ALLOC_BASE: return rt_alloc_find(a[0], &al) ? al.base : 0;
	case GPUX_H_ALLOC_SIZE: return rt_alloc_find(a[0], &al) ? al.size : 0;
	case GPUX_H_GPU: return rt_actions_gpu();
	case GPUX_H_GPU_FREE: {
		size_t free_b = 0, total = 0;
		return drv.mem_info && drv.mem_info(&free_b, &total) == CUDA_SUCCESS ? free_b : 0;
	}
	default: return 0;
	}
}

void rt_actions_attach(struct vm *vm)
{
	vm_set_ext(vm, serve, NULL);
}
