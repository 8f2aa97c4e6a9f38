/*
 * Helpers shared by the UVM prefetch-policy workloads (stride_vadd.cu,
 * layer_sweep.cu): error checks, flag parsing, the memory balloon, the
 * prefetch calls of the --oracle rows, wall time, and a small thread pool
 * for the host-side initialisation and checksum loops.
 *
 * Host code is plain C (nvcc compiles it as C++, so a few casts are
 * spelled out).
 */
#ifndef POLICY_COMMON_H
#define POLICY_COMMON_H

#include <cuda_runtime.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MIB (1UL << 20)

/* Any failing CUDA call ends the program with a message and status 1. */
#define CK(call)                                                           \
	do {                                                               \
		cudaError_t err_ = (call);                                 \
		if (err_ != cudaSuccess) {                                 \
			fprintf(stderr, "%s:%d: %s failed: %s (%s)\n",     \
				__FILE__, __LINE__, #call,                  \
				cudaGetErrorString(err_),                   \
				cudaGetErrorName(err_));                    \
			exit(1);                                           \
		}                                                          \
	} while (0)

/* A launch reports its configuration errors through cudaGetLastError. */
#define CK_LAUNCH() CK(cudaGetLastError())

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ---- flag parsing ---------------------------------------------------- */

/* The value after flag argv[*i]; stops with a message when it is missing. */
static const char *flag_value(int argc, char **argv, int *i)
{
	if (*i + 1 >= argc) {
		fprintf(stderr, "%s needs a value (see --help)\n", argv[*i]);
		exit(2);
	}
	*i += 1;
	return argv[*i];
}

/* A positive whole number, or stop. */
static unsigned long parse_count(const char *flag, const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (*s == '\0' || *end != '\0' || *s == '-' || v == 0) {
		fprintf(stderr, "%s: '%s' is not a positive whole number\n", flag, s);
		exit(2);
	}
	return v;
}

/* A ratio >= 1 (working set / GPU memory left), or 0 for no balloon. */
static double parse_ratio(const char *flag, const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (*s == '\0' || *end != '\0' || !(v == 0.0 || v >= 1.0)) {
		fprintf(stderr, "%s: '%s' must be 0 (no balloon) or a ratio >= 1\n",
			flag, s);
		exit(2);
	}
	return v;
}

/* The flags both workloads take. */
struct run_flags {
	unsigned long passes;
	double oversub;
	int oracle, evict;
};

/* Reads argv[*i] into r if it is one of those flags: 1, else 0. */
static int run_flag(int argc, char **argv, int *i, struct run_flags *r)
{
	const char *f = argv[*i];
	if (!strcmp(f, "--passes"))
		r->passes = parse_count(f, flag_value(argc, argv, i));
	else if (!strcmp(f, "--oversub"))
		r->oversub = parse_ratio(f, flag_value(argc, argv, i));
	else if (!strcmp(f, "--oracle"))
		r->oracle = 1;
	else if (!strcmp(f, "--oracle-evict"))
		r->oracle = r->evict = 1;
	else
		return 0;
	return 1;
}

/* ---- the balloon ------------------------------------------------------ */

/*
 * Shrinks the GPU memory that managed pages can use: plain device memory
 * (cudaMalloc, never evictable by the UVM driver) of size
 * free - working_set / ratio, rounded down to 2 MiB, so the managed
 * working set is `ratio` times the memory left. ratio 0: no balloon.
 * Returns the balloon (NULL when none) and prints the memory left.
 */
static void *balloon_inflate(double ratio, size_t working_set)
{
	size_t free_b, total_b, want = 0;
	void *balloon = NULL;

	CK(cudaMemGetInfo(&free_b, &total_b));
	if (ratio > 0) {
		size_t keep = (size_t)((double)working_set / ratio);
		if (free_b > keep)
			want = (free_b - keep) & ~(2 * MIB - 1);
	}
	if (want > 0)
		CK(cudaMalloc(&balloon, want));
	else if (ratio > 0)
		fprintf(stderr, "oversub %.2f: the GPU has no more than working_set"
			" / ratio free already; no balloon\n", ratio);
	CK(cudaMemGetInfo(&free_b, &total_b));
	fprintf(stderr, "balloon_mb %zu free_mb_after_balloon %zu total_mb %zu "
		"working_set_mb %zu\n", want / MIB, free_b / MIB, total_b / MIB,
		working_set / MIB);
	return balloon;
}

static void balloon_free(void *balloon)
{
	if (balloon)
		CK(cudaFree(balloon));
}

/* ---- prefetch (the --oracle rows) --------------------------------------- */

/* Queue a migration of [p, p + bytes) to GPU `dev` on stream s. */
static void prefetch_to_gpu(const void *p, size_t bytes, int dev, cudaStream_t s)
{
	struct cudaMemLocation loc;
	loc.type = cudaMemLocationTypeDevice;
	loc.id = dev;
	CK(cudaMemPrefetchAsync(p, bytes, loc, 0, s));
}

/* Queue a migration of [p, p + bytes) back to host memory on stream s. */
static void prefetch_to_cpu(const void *p, size_t bytes, cudaStream_t s)
{
	struct cudaMemLocation loc;
	loc.type = cudaMemLocationTypeHost;
	loc.id = 0; /* ignored for the host */
	CK(cudaMemPrefetchAsync(p, bytes, loc, 0, s));
}

/* ---- host threads ---------------------------------------------------------- */

/*
 * Runs fn(arg, begin, end, slot) over [0, n) split into one contiguous
 * range per thread (up to 16 threads, the online CPUs). `slot` is the
 * thread's index, for per-thread partial results (at most 16).
 */
#define MAX_THREADS 16
typedef void (*range_fn)(void *arg, unsigned long begin, unsigned long end,
			 int slot);

struct range_job {
	range_fn fn;
	void *arg;
	unsigned long begin, end;
	int slot;
};

static void *range_thread(void *p)
{
	struct range_job *j = (struct range_job *)p;
	j->fn(j->arg, j->begin, j->end, j->slot);
	return NULL;
}

static int host_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	return n > MAX_THREADS ? MAX_THREADS : (int)n;
}

static void parallel_ranges(unsigned long n, range_fn fn, void *arg)
{
	int nt = host_threads(), t;
	pthread_t tid[MAX_THREADS];
	struct range_job job[MAX_THREADS];
	unsigned long step = (n + (unsigned long)nt - 1) / (unsigned long)nt;

	for (t = 0; t < nt; t++) {
		job[t].fn = fn;
		job[t].arg = arg;
		job[t].begin = step * (unsigned long)t < n ? step * (unsigned long)t : n;
		job[t].end = job[t].begin + step < n ? job[t].begin + step : n;
		job[t].slot = t;
		if (pthread_create(&tid[t], NULL, range_thread, &job[t]) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			exit(1);
		}
	}
	for (t = 0; t < nt; t++)
		pthread_join(tid[t], NULL);
}

#endif
