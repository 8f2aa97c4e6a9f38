// Shared by the e2e CUDA programs: error checks and a deterministic
// summary of a result array (FNV-1a 64 of its bytes, the exact double sum
// and a few elements in %a), so that "stdout with gpux == stdout without"
// is a bit-for-bit comparison of the results. Every program also checks
// its results against a host model and exits 1 on a mismatch.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CK(call)                                                              \
	do {                                                                      \
		cudaError_t e_ = (call);                                              \
		if (e_ != cudaSuccess) {                                              \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,     \
				cudaGetErrorString(e_));                                      \
			exit(2);                                                          \
		}                                                                     \
	} while (0)

// After a launch: launch errors now, execution errors at the next sync.
#define CKLAUNCH() CK(cudaGetLastError())

static inline uint64_t fnv1a64(const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

// One line: name, length, hash of the bytes, sum (host order), elements
// 0, 1, n/2 and n-1 in hex float.
static inline void summary(const char *name, const float *v, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	printf("%s: n=%zu fnv1a64=%016llx sum=%a [0]=%a [1]=%a [%zu]=%a [%zu]=%a\n",
	       name, n, (unsigned long long)fnv1a64(v, n * sizeof(*v)), s,
	       (double)v[0], (double)v[n > 1 ? 1 : 0], n / 2, (double)v[n / 2],
	       n - 1, (double)v[n - 1]);
}

// Exact comparison with the host model; prints one line, returns 1 on a
// mismatch (the first one is shown).
static inline int check(const char *name, const float *got, const float *want,
			size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (memcmp(&got[i], &want[i], sizeof(float))) {
			printf("check %s: MISMATCH at %zu: got %a want %a\n", name, i,
			       (double)got[i], (double)want[i]);
			return 1;
		}
	printf("check %s: ok\n", name);
	return 0;
}

static inline float *dev_alloc(size_t n)
{
	float *p;
	CK(cudaMalloc((void **)&p, n * sizeof(float)));
	return p;
}

static inline void to_dev(float *d, const float *h, size_t n)
{
	CK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
}

static inline void to_host(float *h, const float *d, size_t n)
{
	CK(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
}

// The final line of every program.
static inline int finish(int bad)
{
	CK(cudaDeviceSynchronize());
	printf("%s\n", bad ? "result: FAIL" : "result: ok");
	fflush(stdout);
	return bad ? 1 : 0;
}
