// Shared by the GPU benchmarks: timing, percentiles, error checks.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#define CK(call)                                                              \
	do {                                                                      \
		cudaError_t e_ = (call);                                              \
		if (e_ != cudaSuccess) {                                              \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,     \
				cudaGetErrorString(e_));                                      \
			exit(2);                                                          \
		}                                                                     \
	} while (0)

static inline double now_us()
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

// BENCH_MAX_S (default 8): stop the timed loop once this much time has
// gone by, whatever the iteration count, so a slow mode cannot run away;
// the reported iters says how many ran.
static inline double max_us()
{
	const char *s = getenv("BENCH_MAX_S");
	double v = s ? atof(s) : 8.0;
	return (v > 0 ? v : 8.0) * 1e6;
}

// Nearest-rank percentile of sorted samples.
static inline double pct(const std::vector<double> &v, double p)
{
	size_t i = (size_t)(p / 100.0 * (double)(v.size() - 1) + 0.5);
	return v[std::min(i, v.size() - 1)];
}

static inline void report(const char *what, std::vector<double> t)
{
	std::sort(t.begin(), t.end());
	double sum = 0;
	for (double x : t)
		sum += x;
	printf("%s iters=%zu median_us=%.3f p10_us=%.3f p90_us=%.3f min_us=%.3f mean_us=%.3f\n",
	       what, t.size(), pct(t, 50), pct(t, 10), pct(t, 90), t.front(),
	       sum / (double)t.size());
}
