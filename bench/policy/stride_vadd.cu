/*
 * stride_vadd: the gpu_ext paper's stride vector add over CUDA managed
 * memory, for the UVM prefetch-policy benchmark.
 *
 * Three managed float arrays a, b, c share a working set of --ws-mb MiB.
 * They are written by the CPU first (so every page starts in host
 * memory), then c = a + b is computed chunk by chunk: one launch of vadd
 * per chunk of --chunk-mb MiB per array, the kernel's pointers advancing
 * chunk by chunk, all queued on one stream with no sync in between; one
 * cudaStreamSynchronize ends each of --passes passes. With --oversub R a
 * balloon of device memory leaves the GPU R times less memory than the
 * working set, so pages must be evicted and migrated again.
 *
 * stdout: one line "checksum <sum of c, %.1f>", the same for every policy.
 * stderr: "time_ms <ms>": the launch loop of all passes with their syncs
 * (not the initialisation, not the checksum), plus a few info lines.
 */
#include "common.h"

/* c[i] = a[i] + b[i] for i < n, grid-stride. */
/* The launch before timing: it takes no pointer, so no policy acts on it. */
__global__ void warm(void) {}

__global__ void vadd(const float *a, const float *b, float *c, unsigned long n)
{
	unsigned long i = (unsigned long)blockIdx.x * blockDim.x + threadIdx.x;
	unsigned long stride = (unsigned long)gridDim.x * blockDim.x;

	for (; i < n; i += stride)
		c[i] = a[i] + b[i];
}

/* The values the CPU writes; small integers and halves, so every sum is exact. */
static float a_value(unsigned long i) { return (float)(i % 1000) * 0.5f; }
static float b_value(unsigned long i) { return (float)(i % 7); }

struct arrays {
	float *a, *b, *c;
	double part[MAX_THREADS];      /* checksum partial sums */
	unsigned long bad[MAX_THREADS]; /* wrong elements per thread */
};

static void init_range(void *p, unsigned long begin, unsigned long end, int slot)
{
	struct arrays *x = (struct arrays *)p;
	unsigned long i;
	(void)slot;
	for (i = begin; i < end; i++) {
		x->a[i] = a_value(i);
		x->b[i] = b_value(i);
		x->c[i] = -1.0f; /* c's pages start on the CPU too */
	}
}

/* Sums c (exactly: halves below 2^53) and counts elements != a + b. */
static void check_range(void *p, unsigned long begin, unsigned long end, int slot)
{
	struct arrays *x = (struct arrays *)p;
	double sum = 0;
	unsigned long i, bad = 0;
	for (i = begin; i < end; i++) {
		float v = x->c[i];
		sum += v;
		if (v != a_value(i) + b_value(i))
			bad++;
	}
	x->part[slot] = sum;
	x->bad[slot] = bad;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: stride_vadd [--ws-mb N] [--chunk-mb N] [--passes N] [--oversub R]\n"
"                   [--oracle] [--oracle-evict]\n"
"  --ws-mb N       working set of a, b and c together, MiB (default 5120)\n"
"  --chunk-mb N    chunk per array per launch, MiB (default 256)\n"
"  --passes N      passes over all chunks (default 2)\n"
"  --oversub R     balloon: leave the GPU working_set / R bytes (0 = none,\n"
"                  default; e.g. 1.25, 1.5)\n"
"  --oracle        prefetch each chunk's three ranges to the GPU before\n"
"                  its launch, on the launch's stream\n"
"  --oracle-evict  --oracle, and after each launch prefetch the chunk\n"
"                  launched two steps earlier back to the CPU\n"
"stdout: 'checksum S'; stderr: 'time_ms T' (launch loop, all passes)\n");
}

int main(int argc, char **argv)
{
	unsigned long ws_mb = 5120, chunk_mb = 256;
	struct run_flags r = { 2, 0, 0, 0 }; /* passes, oversub, oracle, evict */
	int i;

	for (i = 1; i < argc; i++) {
		const char *f = argv[i];
		if (!strcmp(f, "--ws-mb"))
			ws_mb = parse_count(f, flag_value(argc, argv, &i));
		else if (!strcmp(f, "--chunk-mb"))
			chunk_mb = parse_count(f, flag_value(argc, argv, &i));
		else if (run_flag(argc, argv, &i, &r))
			continue;
		else if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "unknown argument '%s'\n", f);
			usage(stderr);
			return 2;
		}
	}
	unsigned long passes = r.passes;
	double oversub = r.oversub;
	int oracle = r.oracle, evict = r.evict;

	/* Each array gets a third of the working set, whole 2 MiB pages. */
	unsigned long array_bytes = (ws_mb * MIB / 3) & ~(2 * MIB - 1);
	if (array_bytes == 0) {
		fprintf(stderr, "--ws-mb %lu is too small (at least 6)\n", ws_mb);
		return 2;
	}
	unsigned long n = array_bytes / sizeof(float);
	unsigned long chunk = chunk_mb * MIB / sizeof(float);
	if (chunk > n)
		chunk = n;
	unsigned long nchunks = (n + chunk - 1) / chunk;

	int dev, sms;
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	const int threads = 256;
	const unsigned long max_blocks = (unsigned long)sms * 8;

	struct arrays x;
	memset(&x, 0, sizeof x);
	CK(cudaMallocManaged((void **)&x.a, array_bytes, cudaMemAttachGlobal));
	CK(cudaMallocManaged((void **)&x.b, array_bytes, cudaMemAttachGlobal));
	CK(cudaMallocManaged((void **)&x.c, array_bytes, cudaMemAttachGlobal));
	parallel_ranges(n, init_range, &x);

	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

	/* Load the module (and, under gpux, patch its PTX) before timing,
	 * with a kernel that names no buffer: a policy that acted on this
	 * launch would place data before the balloon leaves its room. */
	warm<<<1, 32, 0, s>>>();
	CK_LAUNCH();
	CK(cudaStreamSynchronize(s));

	void *balloon = balloon_inflate(oversub, 3 * array_bytes);
	fprintf(stderr, "stride_vadd: 3 arrays x %lu MiB, %lu chunks of %lu MiB, "
		"%lu passes, oversub %.2f, oracle %d, evict %d\n",
		array_bytes / MIB, nchunks, chunk * sizeof(float) / MIB, passes,
		oversub, oracle, evict);

	/* The timed launch loop. back[] remembers the chunks of the last two
	 * launches for --oracle-evict (launch order runs on across passes). */
	long back[2] = { -1, -1 };
	double t0 = now_ms();
	for (unsigned long p = 0; p < passes; p++) {
		for (unsigned long k = 0; k < nchunks; k++) {
			unsigned long off = k * chunk;
			unsigned long len = n - off < chunk ? n - off : chunk;
			size_t bytes = len * sizeof(float);
			unsigned long blocks = (len + threads - 1) / threads;
			if (blocks > max_blocks)
				blocks = max_blocks;

			if (oracle) {
				prefetch_to_gpu(x.a + off, bytes, dev, s);
				prefetch_to_gpu(x.b + off, bytes, dev, s);
				prefetch_to_gpu(x.c + off, bytes, dev, s);
			}
			vadd<<<(unsigned)blocks, threads, 0, s>>>(x.a + off, x.b + off,
								x.c + off, len);
			CK_LAUNCH();
			/* (with fewer than three chunks that chunk may be one of
			 * the last two launched: then it stays) */
			if (evict && back[0] >= 0 && back[0] != (long)k &&
			    back[0] != back[1]) {
				unsigned long eoff = (unsigned long)back[0] * chunk;
				unsigned long elen = n - eoff < chunk ? n - eoff : chunk;
				size_t ebytes = elen * sizeof(float);
				prefetch_to_cpu(x.a + eoff, ebytes, s);
				prefetch_to_cpu(x.b + eoff, ebytes, s);
				prefetch_to_cpu(x.c + eoff, ebytes, s);
			}
			back[0] = back[1];
			back[1] = (long)k;
		}
		CK(cudaStreamSynchronize(s));
	}
	double t1 = now_ms();
	fprintf(stderr, "time_ms %.3f\n", t1 - t0);

	/* Untimed: bring c home in bulk, then sum and check it on the CPU. */
	balloon_free(balloon);
	prefetch_to_cpu(x.c, array_bytes, s);
	CK(cudaStreamSynchronize(s));
	parallel_ranges(n, check_range, &x);
	double sum = 0;
	unsigned long bad = 0;
	for (i = 0; i < MAX_THREADS; i++) {
		sum += x.part[i];
		bad += x.bad[i];
	}
	printf("checksum %.1f\n", sum);
	fflush(stdout);

	CK(cudaStreamDestroy(s));
	CK(cudaFree(x.a));
	CK(cudaFree(x.b));
	CK(cudaFree(x.c));
	if (bad) {
		fprintf(stderr, "stride_vadd: %lu of %lu elements of c are wrong\n", bad, n);
		return 3;
	}
	return 0;
}
