/* CUPTI's concurrent-kernel records with nothing behind them: the floor
 * under gpux's cuda:kernel_end (issue 39). gpt2_loop.py loads it with
 * ctypes and turns it on and off in windows (attach_ab.sh CUPTI_ONLY=1),
 * so what CUPTI itself costs a training step (its timing code on the GPU,
 * its buffers) is measured apart from gpux's hooks and delivery. Each
 * completed buffer's records are counted and the buffer freed.
 *   cupti_only_start(LIBCUPTI) -> 0 or CUPTI's error; cupti_only_stop()
 *   -> kernels recorded since start (after a flush) */
#include <cupti_activity.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

static struct {
	CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*disable)(CUpti_ActivityKind);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*flush)(uint32_t);
	int registered;
} cu;
static long long kernels;

enum { BUF = 8 << 20 };

static void CUPTIAPI requested(uint8_t **buf, size_t *size, size_t *max)
{
	*buf = aligned_alloc(8, BUF);
	*size = *buf ? BUF : 0;
	*max = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
			       size_t valid)
{
	(void)ctx, (void)stream, (void)size;
	CUpti_Activity *r = NULL;
	while (valid && cu.next(buf, valid, &r) == CUPTI_SUCCESS)
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			__atomic_add_fetch(&kernels, 1, __ATOMIC_RELAXED);
	free(buf);
}

int cupti_only_start(const char *lib)
{
	if (!cu.reg) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
		if (!h)
			return -1;
		*(void **)&cu.reg = dlsym(h, "cuptiActivityRegisterCallbacks");
		*(void **)&cu.enable = dlsym(h, "cuptiActivityEnable");
		*(void **)&cu.disable = dlsym(h, "cuptiActivityDisable");
		*(void **)&cu.next = dlsym(h, "cuptiActivityGetNextRecord");
		*(void **)&cu.flush = dlsym(h, "cuptiActivityFlushAll");
		if (!cu.reg || !cu.enable || !cu.disable || !cu.next || !cu.flush) {
			cu.reg = NULL;
			return -2;
		}
	}
	/* CUPTI takes one set of buffer callbacks per process */
	if (!cu.registered) {
		CUptiResult rc = cu.reg(requested, completed);
		if (rc != CUPTI_SUCCESS)
			return (int)rc;
		cu.registered = 1;
	}
	__atomic_store_n(&kernels, 0, __ATOMIC_RELAXED);
	return (int)cu.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

long long cupti_only_stop(void)
{
	if (!cu.registered)
		return -1;
	cu.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	cu.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	return __atomic_load_n(&kernels, __ATOMIC_RELAXED);
}
