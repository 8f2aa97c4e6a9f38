// uvm_workloads: run one named page-access workload on CUDA managed memory
// with the GPU's free memory cut down by a balloon, and report what the real
// UVM driver did (CUPTI unified-memory counters). The real-driver side of the
// UVM simulator's validation; the workload definitions in bench/sim/README.md
// are the contract both sides implement.
//
//   uvm_workloads WORKLOAD [key=value ...]
//
// stdout: one JSON line. stderr: progress and warnings.
// exit 0 ok, 1 CUDA error, 2 bad arguments, 3 wrong result (checksum).
#include <cuda_runtime.h>
#include <cupti.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vector>

#define PAGE ((uint64_t)4096)
#define WORDS_PER_PAGE (PAGE / 4)
#define MIB ((uint64_t)1 << 20)
#define BLOCK 256

static void die_cuda(cudaError_t e, const char *what, const char *file, int line)
{
	fprintf(stderr, "uvm_workloads: CUDA error at %s:%d: %s: %s (%s)\n", file, line, what,
		cudaGetErrorString(e), cudaGetErrorName(e));
	exit(1);
}

#define CK(call)                                                  \
	do {                                                          \
		cudaError_t e_ = (call);                                  \
		if (e_ != cudaSuccess)                                    \
			die_cuda(e_, #call, __FILE__, __LINE__);              \
	} while (0)

// After a launch: configuration errors show up here, not from the launch.
#define CK_LAUNCH(what) CK(cudaGetLastError())

static const char *cupti_str(CUptiResult r)
{
	const char *s = NULL;
	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

// ---------------------------------------------------------------- splitmix64
// The spec's sequential generator: state = seed; next(): state += GAMMA; mix.
// The k-th call (k = 1, 2, ...) therefore returns mix(seed + k * GAMMA) (mod
// 2^64), which lets each GPU thread compute its own draw. The host checks use
// the sequential form, so a mismatch between the two would fail the checksum.
#define SM_GAMMA 0x9E3779B97F4A7C15ull

__host__ __device__ static inline uint64_t sm_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

__host__ __device__ static inline uint64_t sm_at(uint64_t seed, uint64_t k)
{
	return sm_mix(seed + k * SM_GAMMA);
}

struct SplitMix {
	uint64_t state;
	uint64_t next()
	{
		state += SM_GAMMA;
		return sm_mix(state);
	}
};

// ------------------------------------------------------------------- kernels
__global__ void k_empty(void) {}

// seq / mix: x[i] += 1 on every 4-byte element of the chunk (grid-stride).
__global__ void k_inc(uint32_t *x, size_t n)
{
	size_t step = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
		x[i] += 1;
}

// stride: thread t touches page first + t*stride (first word, +1).
__global__ void k_stride(uint32_t *x, uint64_t first, uint64_t stride, uint64_t n)
{
	uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= n)
		return;
	x[(first + t * stride) * WORDS_PER_PAGE] += 1;
}

// random: touch j (0-based over the whole run) uses draw j+1.
// atomicAdd: a page can be drawn twice in one launch.
__global__ void k_random(uint32_t *x, uint64_t npages, uint64_t seed, uint64_t j0, uint64_t n)
{
	uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= n)
		return;
	uint64_t j = j0 + t;
	uint64_t page = sm_at(seed, j + 1) % npages;
	atomicAdd(&x[page * WORDS_PER_PAGE], 1u);
}

// hotcold: touch j uses draws 2j+1 (hot or cold) and 2j+2 (which page).
__global__ void k_hotcold(uint32_t *x, uint64_t npages, uint64_t nhot, uint64_t hot_pct,
			  uint64_t seed, uint64_t j0, uint64_t n)
{
	uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= n)
		return;
	uint64_t j = j0 + t;
	uint64_t v = sm_at(seed, 2 * j + 1);
	uint64_t w = sm_at(seed, 2 * j + 2);
	uint64_t page = (v % 100) < hot_pct ? w % nhot : nhot + w % (npages - nhot);
	atomicAdd(&x[page * WORDS_PER_PAGE], 1u);
}

// layers: read-only grid-stride sum of every element into *out.
__global__ void k_sum(const uint32_t *x, size_t n, unsigned long long *out)
{
	unsigned long long s = 0;
	size_t step = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
		s += x[i];
	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_down_sync(0xffffffffu, s, o);
	if ((threadIdx.x & 31) == 0 && s)
		atomicAdd(out, s);
}

// --------------------------------------------------------------- arguments
enum Workload { W_SEQ, W_STRIDE, W_RANDOM, W_HOTCOLD, W_LAYERS, W_MIX };
static const char *const wl_names[] = {"seq", "stride", "random", "hotcold", "layers", "mix"};

struct Args {
	Workload wl;
	uint64_t size = 1ull << 30;
	uint64_t gpu = 0;
	bool gpu_set = false;
	uint64_t passes = 2;
	uint64_t seed = 1;
	uint64_t chunk = 64 * MIB;
	uint64_t stride = 8;
	uint64_t touches = 0;
	bool touches_set = false;
	uint64_t batch = 4096;
	uint64_t hot_pct = 90;
	uint64_t hot_share = 10;
	uint64_t layers = 8;
	uint64_t cupti = 1;
};

static void usage(const char *fmt, ...)
{
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		fprintf(stderr, "uvm_workloads: ");
		vfprintf(stderr, fmt, ap);
		fprintf(stderr, "\n");
		va_end(ap);
	}
	fprintf(stderr,
		"usage: uvm_workloads WORKLOAD [key=value ...]\n"
		"  WORKLOAD: seq | stride | random | hotcold | layers | mix\n"
		"  keys (numbers take k/m/g suffixes, powers of 1024):\n"
		"    size=1g      working set in bytes (multiple of 4096)\n"
		"    gpu=size*4/5 managed-data budget: balloon = free - gpu, rounded down to 2 MiB\n"
		"    passes=2  seed=1  chunk=64m (multiple of 4096)\n"
		"    stride=8     (stride) pages between touched pages\n"
		"    touches=npages batch=4096   (random, hotcold) touches per pass, per launch\n"
		"    hot_pct=90 hot_share=10     (hotcold) percent of touches hot; percent of pages hot\n"
		"    layers=8     (layers) number of buffers\n"
		"    cupti=1      0: no CUPTI (timing only; counters null)\n");
	exit(2);
}

// Decimal (or 0x hex) with an optional k/m/g suffix (powers of 1024).
static bool parse_num(const char *s, uint64_t *out)
{
	if (!*s || *s == '-' || *s == '+')
		return false;
	int base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16;
	errno = 0;
	char *end = NULL;
	unsigned long long v = strtoull(s, &end, base);
	if (errno || end == s)
		return false;
	uint64_t mul = 1;
	if (*end) {
		switch (*end) {
		case 'k': case 'K': mul = 1ull << 10; break;
		case 'm': case 'M': mul = 1ull << 20; break;
		case 'g': case 'G': mul = 1ull << 30; break;
		default: return false;
		}
		if (end[1])
			return false;
	}
	if (v > UINT64_MAX / mul)
		return false;
	*out = (uint64_t)v * mul;
	return true;
}

static Args parse_args(int argc, char **argv)
{
	Args a;
	if (argc < 2)
		usage(NULL);
	int wl = -1;
	for (int i = 0; i < 6; i++)
		if (!strcmp(argv[1], wl_names[i]))
			wl = i;
	if (wl < 0)
		usage("unknown workload '%s'", argv[1]);
	a.wl = (Workload)wl;
	for (int i = 2; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		if (!eq || eq == argv[i])
			usage("expected key=value, got '%s'", argv[i]);
		size_t klen = (size_t)(eq - argv[i]);
		uint64_t v;
		if (!parse_num(eq + 1, &v))
			usage("bad number in '%s'", argv[i]);
		struct { const char *k; uint64_t *p; bool *set; } keys[] = {
			{"size", &a.size, NULL}, {"gpu", &a.gpu, &a.gpu_set},
			{"passes", &a.passes, NULL}, {"seed", &a.seed, NULL},
			{"chunk", &a.chunk, NULL}, {"stride", &a.stride, NULL},
			{"touches", &a.touches, &a.touches_set}, {"batch", &a.batch, NULL},
			{"hot_pct", &a.hot_pct, NULL}, {"hot_share", &a.hot_share, NULL},
			{"layers", &a.layers, NULL}, {"cupti", &a.cupti, NULL},
		};
		bool found = false;
		for (auto &k : keys)
			if (strlen(k.k) == klen && !strncmp(k.k, argv[i], klen)) {
				*k.p = v;
				if (k.set)
					*k.set = true;
				found = true;
			}
		if (!found)
			usage("unknown key in '%s'", argv[i]);
	}
	if (a.size < PAGE || a.size % PAGE)
		usage("size must be a positive multiple of 4096");
	if (!a.gpu_set)
		a.gpu = a.size / 5 * 4 + (a.size % 5) * 4 / 5;   // size*4/5 without overflow
	if (a.gpu == 0)
		usage("gpu must be > 0");
	if (a.passes < 1 || a.passes > 1000000)
		usage("passes must be in 1..1000000");
	if (a.chunk < PAGE || a.chunk % PAGE)
		usage("chunk must be a positive multiple of 4096");
	if (a.stride < 1)
		usage("stride must be >= 1");
	if (a.batch < 1 || a.batch > (1ull << 31))
		usage("batch must be in 1..2^31");
	if (a.hot_pct > 100)
		usage("hot_pct must be in 0..100");
	if (a.cupti > 1)
		usage("cupti must be 0 or 1");
	uint64_t npages = a.size / PAGE;
	if (!a.touches_set)
		a.touches = npages;
	if (a.touches < 1)
		usage("touches must be >= 1");
	if (a.wl == W_HOTCOLD) {
		if (a.hot_share > 100)
			usage("hot_share must be in 0..100");
		uint64_t nhot = npages / 100 * a.hot_share + npages % 100 * a.hot_share / 100;
		if (nhot == 0 || nhot >= npages)
			usage("hot_share gives %" PRIu64 " hot pages of %" PRIu64 "; need 0 < nhot < npages",
			      nhot, npages);
	}
	if (a.wl == W_LAYERS) {
		if (a.layers < 1 || a.layers > 4096)
			usage("layers must be in 1..4096");
		if (a.size / a.layers / PAGE == 0)
			usage("size/layers is below 4096 bytes");
	}
	if (a.wl == W_MIX && a.size / 2 / PAGE == 0)
		usage("size/2 is below 4096 bytes");
	return a;
}

// ------------------------------------------------------------ CUPTI counters
#define NCAUSE 6   // CUpti_ActivityUnifiedMemoryMigrationCause 0..5
static const char *const cause_names[NCAUSE] = {"unknown", "user", "coherence", "prefetch",
						"eviction", "access_counters"};

struct Ctr {
	uint64_t htod_bytes, htod_n, dtoh_bytes, dtoh_n;
	uint64_t htod_cause[NCAUSE], dtoh_cause[NCAUSE];   // bytes by migration cause
	uint64_t htod_hist[64], dtoh_hist[64];             // transfers by floor(log2(bytes))
	uint64_t gpu_faults, gpu_fault_groups;
	uint64_t gpu_fault_access[5];                      // unknown/read/write/atomic/prefetch
	uint64_t cpu_faults;
	uint64_t thrash_n, thrash_bytes, throttle_n, remote_n, remote_bytes, other_n;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static Ctr g_total, g_window;
// Plain heap arrays that are never freed (not static std::vectors): CUPTI may
// deliver a last buffer from its own exit handling after static destructors.
static Ctr *g_pass;
static size_t g_np;   // passes; 0 until the arrays exist
// g_bound[k]: cuptiGetTimestamp() at the start of pass k; g_bound[passes] at
// the end of the loop. UINT64_MAX until taken. Written under g_lock, so a
// buffer processed before a bound is taken holds only records that started
// before it.
static uint64_t *g_bound;
static uint64_t g_dropped, g_records, g_buf_fail, g_iter_err;
static bool g_have_thrash, g_have_throttle, g_have_remote;

static int ilog2(uint64_t v)
{
	int r = 0;
	while (v >>= 1)
		r++;
	return r;
}

static void ctr_add(Ctr *c, const CUpti_ActivityUnifiedMemoryCounter3 *r)
{
	uint32_t cause = r->flags < NCAUSE ? r->flags : 0;
	switch (r->counterKind) {
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
		c->htod_bytes += r->value;
		c->htod_n++;
		c->htod_cause[cause] += r->value;
		c->htod_hist[ilog2(r->value)]++;
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
		c->dtoh_bytes += r->value;
		c->dtoh_n++;
		c->dtoh_cause[cause] += r->value;
		c->dtoh_hist[ilog2(r->value)]++;
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
		c->gpu_faults++;
		c->gpu_fault_groups += r->value;
		c->gpu_fault_access[r->flags < 5 ? r->flags : 0]++;
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT:
		c->cpu_faults++;   // value is the faulting PC, not a count
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING:
		c->thrash_n++;
		c->thrash_bytes += r->value;
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING:
		c->throttle_n++;
		break;
	case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP:
		c->remote_n++;
		c->remote_bytes += r->value;
		break;
	default:
		c->other_n++;
		break;
	}
}

#define CUPTI_BUF_SIZE (8 * MIB)

static void CUPTIAPI buf_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	void *p = NULL;
	if (posix_memalign(&p, 8, CUPTI_BUF_SIZE)) {
		p = NULL;
		pthread_mutex_lock(&g_lock);
		g_buf_fail++;
		pthread_mutex_unlock(&g_lock);
	}
	*buffer = (uint8_t *)p;
	*size = p ? CUPTI_BUF_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				   size_t valid)
{
	(void)size;
	pthread_mutex_lock(&g_lock);
	CUpti_Activity *rec = NULL;
	for (;;) {
		CUptiResult st = cuptiActivityGetNextRecord(buffer, valid, &rec);
		if (st == CUPTI_ERROR_MAX_LIMIT_REACHED)
			break;
		if (st != CUPTI_SUCCESS) {
			g_iter_err++;
			break;
		}
		if (rec->kind != CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER)
			continue;
		const CUpti_ActivityUnifiedMemoryCounter3 *r =
			(const CUpti_ActivityUnifiedMemoryCounter3 *)rec;
		g_records++;
		ctr_add(&g_total, r);
		size_t np = g_np;
		if (np && r->start >= g_bound[0] && r->start <= g_bound[np]) {
			ctr_add(&g_window, r);
			// last k in [0, np) with g_bound[k] <= start (bounds ascend)
			size_t lo = 0, hi = np;
			while (hi - lo > 1) {
				size_t mid = lo + (hi - lo) / 2;
				if (r->start >= g_bound[mid])
					lo = mid;
				else
					hi = mid;
			}
			size_t k = lo;
			ctr_add(&g_pass[k], r);
		}
	}
	size_t dropped = 0;
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		g_dropped += dropped;
	pthread_mutex_unlock(&g_lock);
	free(buffer);
}

static void set_bound(size_t k)
{
	uint64_t ts = 0;
	pthread_mutex_lock(&g_lock);
	CUptiResult st = cuptiGetTimestamp(&ts);
	if (st != CUPTI_SUCCESS) {
		// Should not happen once CUPTI is up; keep the window well defined.
		fprintf(stderr, "uvm_workloads: warning: cuptiGetTimestamp: %s\n", cupti_str(st));
		ts = k == 0 ? 0 : UINT64_MAX - 1;
	}
	g_bound[k] = ts;
	pthread_mutex_unlock(&g_lock);
}

// Returns true if UM counter collection is on.
static bool cupti_start(void)
{
	CUptiResult st = cuptiActivityRegisterCallbacks(buf_requested, buf_completed);
	if (st != CUPTI_SUCCESS) {
		fprintf(stderr, "uvm_workloads: warning: cuptiActivityRegisterCallbacks: %s; "
				"counters will be null\n", cupti_str(st));
		return false;
	}
	const CUpti_ActivityUnifiedMemoryCounterKind base[] = {
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
	};
	const CUpti_ActivityUnifiedMemoryCounterKind extra[] = {
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING,
		CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP,
	};
	CUpti_ActivityUnifiedMemoryCounterConfig cfg[7];
	// Attempt 0: base + all extras; 1: base + thrashing + remote map (the
	// two the report names); 2: base only.
	for (int attempt = 0; attempt < 3; attempt++) {
		uint32_t n = 0;
		for (auto k : base) {
			memset(&cfg[n], 0, sizeof cfg[n]);
			cfg[n].scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
			cfg[n].kind = k;
			cfg[n].deviceId = 0;
			cfg[n].enable = 1;
			n++;
		}
		bool thrash = attempt < 2, throttle = attempt == 0, remote = attempt < 2;
		for (auto k : extra) {
			if ((k == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING && !thrash) ||
			    (k == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING && !throttle) ||
			    (k == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP && !remote))
				continue;
			memset(&cfg[n], 0, sizeof cfg[n]);
			cfg[n].scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
			cfg[n].kind = k;
			cfg[n].deviceId = 0;
			cfg[n].enable = 1;
			n++;
		}
		st = cuptiActivityConfigureUnifiedMemoryCounter(cfg, n);
		if (st == CUPTI_SUCCESS) {
			g_have_thrash = thrash;
			g_have_throttle = throttle;
			g_have_remote = remote;
			break;
		}
		fprintf(stderr, "uvm_workloads: warning: cuptiActivityConfigureUnifiedMemoryCounter "
				"(%u counters): %s%s\n", n, cupti_str(st),
			attempt < 2 ? "; retrying with fewer" : "; counters will be null");
		if (attempt == 2)
			return false;
	}
	st = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
	if (st != CUPTI_SUCCESS) {
		fprintf(stderr, "uvm_workloads: warning: cuptiActivityEnable(UNIFIED_MEMORY_COUNTER): "
				"%s; counters will be null\n", cupti_str(st));
		return false;
	}
	return true;
}

// ---------------------------------------------------------------- the run
struct Dev {
	int sms;
	cudaStream_t stream;
};

static unsigned grid_for(const Dev &d, uint64_t n)
{
	uint64_t want = (n + BLOCK - 1) / BLOCK;
	uint64_t cap = (uint64_t)d.sms * 8;
	if (want > cap)
		want = cap;
	return (unsigned)(want ? want : 1);
}

// x[i] initial value for seq and mix.
static inline uint32_t seq_init(uint64_t i) { return (uint32_t)(i * 2654435761ull); }
// layers: element i of layer l.
static inline uint32_t layer_init(uint64_t l, uint64_t i)
{
	return (uint32_t)((i * 2654435761ull + l * 40503ull) >> 16) & 0xFFFFu;
}

static uint64_t g_launches;

static void launch_seq_chunk(const Dev &d, uint32_t *x, uint64_t bytes, uint64_t chunk, uint64_t c)
{
	uint64_t off = c * chunk;
	uint64_t len = bytes - off < chunk ? bytes - off : chunk;
	uint64_t n = len / 4;
	k_inc<<<grid_for(d, n), BLOCK, 0, d.stream>>>(x + off / 4, (size_t)n);
	CK_LAUNCH("k_inc");
	g_launches++;
}

static void json_ctr(FILE *f, const char *prefix, const Ctr &c, bool detail)
{
	fprintf(f, ",\"%shtod_bytes\":%" PRIu64 ",\"%sdtoh_bytes\":%" PRIu64, prefix, c.htod_bytes,
		prefix, c.dtoh_bytes);
	fprintf(f, ",\"%sgpu_page_faults\":%" PRIu64 ",\"%scpu_page_faults\":%" PRIu64, prefix,
		c.gpu_faults, prefix, c.cpu_faults);
	fprintf(f, ",\"%sgpu_page_fault_groups\":%" PRIu64, prefix, c.gpu_fault_groups);
	fprintf(f, ",\"%shtod_transfers\":%" PRIu64 ",\"%sdtoh_transfers\":%" PRIu64, prefix, c.htod_n,
		prefix, c.dtoh_n);
	if (g_have_thrash)
		fprintf(f, ",\"%sthrashing\":%" PRIu64 ",\"%sthrashing_bytes\":%" PRIu64, prefix,
			c.thrash_n, prefix, c.thrash_bytes);
	else
		fprintf(f, ",\"%sthrashing\":null,\"%sthrashing_bytes\":null", prefix, prefix);
	if (g_have_throttle)
		fprintf(f, ",\"%sthrottling\":%" PRIu64, prefix, c.throttle_n);
	else
		fprintf(f, ",\"%sthrottling\":null", prefix);
	if (g_have_remote)
		fprintf(f, ",\"%sremote_map\":%" PRIu64 ",\"%sremote_map_bytes\":%" PRIu64, prefix,
			c.remote_n, prefix, c.remote_bytes);
	else
		fprintf(f, ",\"%sremote_map\":null,\"%sremote_map_bytes\":null", prefix, prefix);
	if (!detail)
		return;
	const char *dirs[2] = {"htod", "dtoh"};
	const uint64_t *cause[2] = {c.htod_cause, c.dtoh_cause};
	const uint64_t *hist[2] = {c.htod_hist, c.dtoh_hist};
	for (int d = 0; d < 2; d++) {
		fprintf(f, ",\"%s%s_cause_bytes\":{", prefix, dirs[d]);
		for (int i = 0; i < NCAUSE; i++)
			fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", cause_names[i], cause[d][i]);
		fprintf(f, "},\"%s%s_size_log2_hist\":{", prefix, dirs[d]);
		bool first = true;
		for (int i = 0; i < 64; i++)
			if (hist[d][i]) {
				fprintf(f, "%s\"%d\":%" PRIu64, first ? "" : ",", i, hist[d][i]);
				first = false;
			}
		fprintf(f, "}");
	}
	static const char *const acc[5] = {"unknown", "read", "write", "atomic", "prefetch"};
	fprintf(f, ",\"%sgpu_fault_access\":{", prefix);
	for (int i = 0; i < 5; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", acc[i], c.gpu_fault_access[i]);
	fprintf(f, "}");
}

static void json_null_ctr(FILE *f, const char *prefix)
{
	static const char *const keys[] = {"htod_bytes", "dtoh_bytes", "gpu_page_faults",
					   "cpu_page_faults", "gpu_page_fault_groups",
					   "htod_transfers", "dtoh_transfers", "thrashing",
					   "thrashing_bytes", "throttling", "remote_map",
					   "remote_map_bytes"};
	for (auto k : keys)
		fprintf(f, ",\"%s%s\":null", prefix, k);
}

int main(int argc, char **argv)
{
	Args a = parse_args(argc, argv);
	const uint64_t npages = a.size / PAGE;

	// Load every kernel when the context is made (not at first launch), so
	// the module's device memory is taken before the balloon is sized.
	setenv("CUDA_MODULE_LOADING", "EAGER", 0);

	int ndev = 0;
	CK(cudaGetDeviceCount(&ndev));
	if (ndev < 1) {
		fprintf(stderr, "uvm_workloads: no CUDA device\n");
		return 1;
	}
	CK(cudaSetDevice(0));
	CK(cudaFree(0));   // context
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	int managed = 0, cma = 0, drv = 0, rt = 0;
	CK(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, 0));
	CK(cudaDeviceGetAttribute(&cma, cudaDevAttrConcurrentManagedAccess, 0));
	CK(cudaDriverGetVersion(&drv));
	CK(cudaRuntimeGetVersion(&rt));
	if (!managed) {
		fprintf(stderr, "uvm_workloads: device does not support managed memory\n");
		return 1;
	}
	if (!cma)
		fprintf(stderr, "uvm_workloads: warning: concurrentManagedAccess is 0: no GPU page "
				"faulting / oversubscription on this setup; results are not comparable\n");
	fprintf(stderr, "uvm_workloads: %s, %d SMs, driver %d, runtime %d, workload %s size=%" PRIu64
			" gpu=%" PRIu64 " passes=%" PRIu64 "\n",
		prop.name, prop.multiProcessorCount, drv, rt, wl_names[a.wl], a.size, a.gpu, a.passes);

	Dev d;
	d.sms = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
	CK(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));

	g_pass = (Ctr *)calloc(a.passes, sizeof(Ctr));
	g_bound = (uint64_t *)malloc((a.passes + 1) * sizeof(uint64_t));
	if (!g_pass || !g_bound) {
		fprintf(stderr, "uvm_workloads: out of host memory\n");
		return 1;
	}
	for (uint64_t k = 0; k <= a.passes; k++)
		g_bound[k] = UINT64_MAX;
	g_np = a.passes;
	bool cupti = false;
	if (a.cupti)
		cupti = cupti_start();
	else
		fprintf(stderr, "uvm_workloads: cupti=0: counters will be null\n");

	// Managed buffers, initialised on the CPU so every page starts in host memory.
	std::vector<uint32_t *> bufs;
	std::vector<uint64_t> buf_bytes;
	switch (a.wl) {
	case W_SEQ: case W_STRIDE: case W_RANDOM: case W_HOTCOLD:
		buf_bytes.push_back(a.size);
		break;
	case W_LAYERS:
		for (uint64_t l = 0; l < a.layers; l++)
			buf_bytes.push_back(a.size / a.layers / PAGE * PAGE);
		break;
	case W_MIX:
		buf_bytes.push_back(a.size / 2 / PAGE * PAGE);
		buf_bytes.push_back(a.size / 2 / PAGE * PAGE);
		break;
	}
	uint64_t managed_bytes = 0;
	for (uint64_t b : buf_bytes) {
		void *p = NULL;
		CK(cudaMallocManaged(&p, b, cudaMemAttachGlobal));
		bufs.push_back((uint32_t *)p);
		managed_bytes += b;
	}
	std::vector<unsigned long long> layer_expect;
	for (size_t bi = 0; bi < bufs.size(); bi++) {
		uint32_t *x = bufs[bi];
		uint64_t n = buf_bytes[bi] / 4;
		if (a.wl == W_SEQ || a.wl == W_MIX) {
			for (uint64_t i = 0; i < n; i++)
				x[i] = seq_init(i);
		} else if (a.wl == W_LAYERS) {
			unsigned long long s = 0;
			for (uint64_t i = 0; i < n; i++) {
				x[i] = layer_init(bi, i);
				s += x[i];
			}
			layer_expect.push_back(s);
		} else {
			memset(x, 0, buf_bytes[bi]);
		}
	}
	unsigned long long *d_res = NULL;
	if (a.wl == W_LAYERS) {
		CK(cudaMalloc(&d_res, a.passes * a.layers * sizeof *d_res));
		CK(cudaMemset(d_res, 0, a.passes * a.layers * sizeof *d_res));
	}

	// Warm-up, then the balloon.
	k_empty<<<1, 1, 0, d.stream>>>();
	CK_LAUNCH("k_empty");
	CK(cudaStreamSynchronize(d.stream));
	CK(cudaDeviceSynchronize());
	size_t free0 = 0, total0 = 0;
	CK(cudaMemGetInfo(&free0, &total0));
	uint64_t balloon_want = 0;
	if ((uint64_t)free0 > a.gpu)
		balloon_want = ((uint64_t)free0 - a.gpu) / (2 * MIB) * (2 * MIB);
	std::vector<void *> balloon;
	std::vector<uint64_t> balloon_sz;
	uint64_t balloon_bytes = 0;
	if (balloon_want) {
		void *p = NULL;
		cudaError_t e = cudaMalloc(&p, balloon_want);
		if (e == cudaSuccess) {
			balloon.push_back(p);
			balloon_sz.push_back(balloon_want);
			balloon_bytes = balloon_want;
		} else if (e == cudaErrorMemoryAllocation) {
			// One piece did not fit (fragmentation, driver reserve): take
			// the same total in smaller pieces, 256 MiB then 2 MiB.
			(void)cudaGetLastError();
			fprintf(stderr, "uvm_workloads: warning: balloon cudaMalloc(%" PRIu64 ") failed; "
					"taking it in pieces\n", balloon_want);
			for (uint64_t piece = 256 * MIB; piece >= 2 * MIB; piece /= 128) {
				while (balloon_want - balloon_bytes >= piece) {
					e = cudaMalloc(&p, piece);
					if (e != cudaSuccess) {
						if (e != cudaErrorMemoryAllocation)
							die_cuda(e, "cudaMalloc(balloon piece)", __FILE__, __LINE__);
						(void)cudaGetLastError();
						break;
					}
					balloon.push_back(p);
					balloon_sz.push_back(piece);
					balloon_bytes += piece;
				}
			}
			if (balloon_bytes < balloon_want)
				fprintf(stderr, "uvm_workloads: warning: balloon is %" PRIu64 " MiB short\n",
					(balloon_want - balloon_bytes) / MIB);
		} else {
			die_cuda(e, "cudaMalloc(balloon)", __FILE__, __LINE__);
		}
		// Write the balloon so it is certainly backed by device memory.
		for (size_t i = 0; i < balloon.size(); i++)
			CK(cudaMemsetAsync(balloon[i], 0, balloon_sz[i], d.stream));
		CK(cudaStreamSynchronize(d.stream));
	}
	size_t free1 = 0, total1 = 0;
	CK(cudaMemGetInfo(&free1, &total1));
	fprintf(stderr, "uvm_workloads: free %" PRIu64 " MiB before balloon, balloon %" PRIu64
			" MiB in %zu piece(s), free %" PRIu64 " MiB after\n",
		(uint64_t)free0 / MIB, balloon_bytes / MIB, balloon.size(), (uint64_t)free1 / MIB);
	if ((uint64_t)free0 < a.gpu)
		fprintf(stderr, "uvm_workloads: warning: free memory (%" PRIu64 ") < gpu (%" PRIu64
				"): no balloon\n", (uint64_t)free0, a.gpu);

	// The timed launch loop.
	std::vector<double> pass_ms(a.passes);
	uint64_t nchunks = (a.size + a.chunk - 1) / a.chunk;
	if (cupti)
		set_bound(0);
	double t0 = now_ms();
	for (uint64_t pass = 0; pass < a.passes; pass++) {
		double tp = now_ms();
		if (cupti && pass > 0)
			set_bound(pass);
		switch (a.wl) {
		case W_SEQ:
			for (uint64_t c = 0; c < nchunks; c++)
				launch_seq_chunk(d, bufs[0], a.size, a.chunk, c);
			break;
		case W_MIX: {
			uint64_t b = buf_bytes[0];
			uint64_t nc = (b + a.chunk - 1) / a.chunk;
			for (uint64_t c = 0; c < nc; c++) {
				launch_seq_chunk(d, bufs[0], b, a.chunk, c);
				launch_seq_chunk(d, bufs[1], b, a.chunk, c);
			}
			break;
		}
		case W_STRIDE:
			for (uint64_t c = 0; c < nchunks; c++) {
				uint64_t p_lo = c * a.chunk / PAGE;   // first page of the chunk
				uint64_t p_hi = p_lo + a.chunk / PAGE;   // one past its last
				if (p_hi > npages)
					p_hi = npages;
				uint64_t first = (p_lo + a.stride - 1) / a.stride * a.stride;
				if (first >= p_hi)
					continue;   // no touched page in this chunk: no launch
				uint64_t n = (p_hi - 1 - first) / a.stride + 1;
				k_stride<<<(unsigned)((n + BLOCK - 1) / BLOCK), BLOCK, 0, d.stream>>>(
					bufs[0], first, a.stride, n);
				CK_LAUNCH("k_stride");
				g_launches++;
			}
			break;
		case W_RANDOM: case W_HOTCOLD: {
			uint64_t nhot = npages / 100 * a.hot_share + npages % 100 * a.hot_share / 100;
			for (uint64_t done = 0; done < a.touches; done += a.batch) {
				uint64_t n = a.touches - done < a.batch ? a.touches - done : a.batch;
				uint64_t j0 = pass * a.touches + done;
				unsigned grid = (unsigned)((n + BLOCK - 1) / BLOCK);
				if (a.wl == W_RANDOM) {
					k_random<<<grid, BLOCK, 0, d.stream>>>(bufs[0], npages, a.seed, j0, n);
					CK_LAUNCH("k_random");
				} else {
					k_hotcold<<<grid, BLOCK, 0, d.stream>>>(bufs[0], npages, nhot, a.hot_pct,
										a.seed, j0, n);
					CK_LAUNCH("k_hotcold");
				}
				g_launches++;
			}
			break;
		}
		case W_LAYERS:
			for (uint64_t l = 0; l < a.layers; l++) {
				uint64_t n = buf_bytes[l] / 4;
				k_sum<<<grid_for(d, n), BLOCK, 0, d.stream>>>(bufs[l], (size_t)n,
									      d_res + pass * a.layers + l);
				CK_LAUNCH("k_sum");
				g_launches++;
			}
			break;
		}
		CK(cudaStreamSynchronize(d.stream));
		pass_ms[pass] = now_ms() - tp;
	}
	double ms = now_ms() - t0;
	if (cupti)
		set_bound(a.passes);

	// Checks (outside the window: reading managed memory on the CPU migrates it back).
	CK(cudaDeviceSynchronize());
	uint64_t bad = 0, first_bad = UINT64_MAX;
	const uint32_t P = (uint32_t)a.passes;
	auto note_bad = [&](uint64_t where) {
		if (!bad)
			first_bad = where;
		bad++;
	};
	switch (a.wl) {
	case W_SEQ: case W_MIX:
		for (size_t bi = 0; bi < bufs.size(); bi++) {
			uint64_t n = buf_bytes[bi] / 4;
			for (uint64_t i = 0; i < n; i++)
				if (bufs[bi][i] != seq_init(i) + P)
					note_bad(bi * (buf_bytes[0] / 4) + i);
		}
		break;
	case W_STRIDE: {
		uint64_t n = a.size / 4;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t p = i / WORDS_PER_PAGE;
			uint32_t want = (i % WORDS_PER_PAGE == 0 && p % a.stride == 0) ? P : 0;
			if (bufs[0][i] != want)
				note_bad(i);
		}
		break;
	}
	case W_RANDOM: case W_HOTCOLD: {
		std::vector<uint32_t> cnt(npages, 0);
		uint64_t nhot = npages / 100 * a.hot_share + npages % 100 * a.hot_share / 100;
		SplitMix g{a.seed};
		for (uint64_t j = 0; j < a.passes * a.touches; j++) {
			uint64_t page;
			if (a.wl == W_RANDOM) {
				page = g.next() % npages;
			} else {
				uint64_t v = g.next();
				bool hot = (v % 100) < a.hot_pct;
				uint64_t w = g.next();
				page = hot ? w % nhot : nhot + w % (npages - nhot);
			}
			cnt[page]++;
		}
		uint64_t n = a.size / 4;
		for (uint64_t i = 0; i < n; i++) {
			uint32_t want = i % WORDS_PER_PAGE == 0 ? cnt[i / WORDS_PER_PAGE] : 0;
			if (bufs[0][i] != want)
				note_bad(i);
		}
		break;
	}
	case W_LAYERS: {
		std::vector<unsigned long long> res(a.passes * a.layers);
		CK(cudaMemcpy(res.data(), d_res, res.size() * sizeof res[0], cudaMemcpyDeviceToHost));
		for (uint64_t p = 0; p < a.passes; p++)
			for (uint64_t l = 0; l < a.layers; l++)
				if (res[p * a.layers + l] != layer_expect[l])
					note_bad(p * a.layers + l);
		// read-only: the data itself must be unchanged
		for (size_t bi = 0; bi < bufs.size(); bi++) {
			uint64_t n = buf_bytes[bi] / 4;
			for (uint64_t i = 0; i < n; i++)
				if (bufs[bi][i] != layer_init(bi, i))
					note_bad(a.passes * a.layers + i);
		}
		break;
	}
	}
	CK(cudaDeviceSynchronize());

	bool counters = cupti;
	if (cupti) {
		CUptiResult st = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		if (st != CUPTI_SUCCESS) {
			fprintf(stderr, "uvm_workloads: warning: cuptiActivityFlushAll: %s; counters "
					"will be null\n", cupti_str(st));
			counters = false;
		}
		st = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
		if (st != CUPTI_SUCCESS)
			fprintf(stderr, "uvm_workloads: warning: cuptiActivityDisable: %s\n",
				cupti_str(st));
	}

	pthread_mutex_lock(&g_lock);
	if (counters) {
		if (g_dropped || g_buf_fail || g_iter_err)
			fprintf(stderr, "uvm_workloads: warning: CUPTI dropped %" PRIu64 " records, %" PRIu64
					" buffer allocations failed, %" PRIu64 " buffer iteration errors: "
					"counters are low\n", g_dropped, g_buf_fail, g_iter_err);
		if (g_records == 0)
			fprintf(stderr, "uvm_workloads: warning: CUPTI delivered no unified-memory "
					"records\n");
	}

	FILE *f = stdout;
	fprintf(f, "{\"workload\":\"%s\",\"size\":%" PRIu64 ",\"gpu\":%" PRIu64 ",\"passes\":%" PRIu64,
		wl_names[a.wl], a.size, a.gpu, a.passes);
	fprintf(f, ",\"seed\":%" PRIu64 ",\"chunk\":%" PRIu64, a.seed, a.chunk);
	switch (a.wl) {
	case W_STRIDE: fprintf(f, ",\"stride\":%" PRIu64, a.stride); break;
	case W_RANDOM: fprintf(f, ",\"touches\":%" PRIu64 ",\"batch\":%" PRIu64, a.touches, a.batch); break;
	case W_HOTCOLD:
		fprintf(f, ",\"touches\":%" PRIu64 ",\"batch\":%" PRIu64 ",\"hot_pct\":%" PRIu64
			   ",\"hot_share\":%" PRIu64, a.touches, a.batch, a.hot_pct, a.hot_share);
		break;
	case W_LAYERS: fprintf(f, ",\"layers\":%" PRIu64, a.layers); break;
	default: break;
	}
	fprintf(f, ",\"managed_bytes\":%" PRIu64 ",\"balloon_bytes\":%" PRIu64 ",\"balloon_pieces\":%zu",
		managed_bytes, balloon_bytes, balloon.size());
	fprintf(f, ",\"free_before_balloon\":%" PRIu64 ",\"free_after_balloon\":%" PRIu64
		   ",\"total_mem\":%" PRIu64, (uint64_t)free0, (uint64_t)free1, (uint64_t)total0);
	fprintf(f, ",\"launches\":%" PRIu64 ",\"ms\":%.3f,\"pass_ms\":[", g_launches, ms);
	for (uint64_t p = 0; p < a.passes; p++)
		fprintf(f, "%s%.3f", p ? "," : "", pass_ms[p]);
	fprintf(f, "],\"cupti\":%s", counters ? "true" : "false");
	if (counters) {
		json_ctr(f, "", g_window, true);
		json_ctr(f, "total_", g_total, false);
		fprintf(f, ",\"per_pass\":[");
		for (uint64_t p = 0; p < a.passes; p++) {
			const Ctr &c = g_pass[p];
			fprintf(f, "%s{\"ms\":%.3f,\"htod_bytes\":%" PRIu64 ",\"dtoh_bytes\":%" PRIu64
				   ",\"gpu_page_faults\":%" PRIu64 ",\"cpu_page_faults\":%" PRIu64 "}",
				p ? "," : "", pass_ms[p], c.htod_bytes, c.dtoh_bytes, c.gpu_faults,
				c.cpu_faults);
		}
		fprintf(f, "],\"um_records\":%" PRIu64 ",\"dropped_records\":%" PRIu64
			   ",\"cupti_buffer_failures\":%" PRIu64, g_records, g_dropped, g_buf_fail);
	} else {
		json_null_ctr(f, "");
		json_null_ctr(f, "total_");
		fprintf(f, ",\"per_pass\":null,\"um_records\":null,\"dropped_records\":null"
			   ",\"cupti_buffer_failures\":null");
	}
	char name[sizeof prop.name];
	size_t nn = 0;
	for (size_t i = 0; i < sizeof prop.name && prop.name[i] && nn + 1 < sizeof name; i++)
		if (prop.name[i] != '"' && prop.name[i] != '\\' && (unsigned char)prop.name[i] >= 0x20)
			name[nn++] = prop.name[i];
	name[nn] = 0;
	fprintf(f, ",\"device\":\"%s\",\"sms\":%d,\"driver\":%d,\"runtime\":%d,\"check\":\"%s\"}\n",
		name, prop.multiProcessorCount, drv, rt, bad ? "fail" : "ok");
	fflush(f);
	pthread_mutex_unlock(&g_lock);

	if (bad) {
		fprintf(stderr, "uvm_workloads: wrong result: %" PRIu64 " bad values, first at index %"
				PRIu64 "\n", bad, first_bad);
		return 3;
	}

	for (void *p : balloon)
		CK(cudaFree(p));
	for (uint32_t *p : bufs)
		CK(cudaFree(p));
	if (d_res)
		CK(cudaFree(d_res));
	CK(cudaStreamDestroy(d.stream));
	return 0;
}
