// What the device side of a probe costs at scale, taken apart: vectorAdd
// at bpftime's xlarge preset (1,000,448 threads) with, at every thread's
// exit, one of the memory patterns gpux's probes use (counts into one
// line or into shards, a per-thread histogram, printf records reserved
// in a ring of host or device memory, with this or that fence). Kernel
// time only (CUDA events around each launch), median of ITERS launches.
// A benchmark, not a test: it asserts nothing about time; it checks that
// every count and record landed.
//   atomics_bench [ITERS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

typedef unsigned long long u64;

#define CK(x)                                                                    \
	do {                                                                     \
		cudaError_t e_ = (x);                                            \
		if (e_ != cudaSuccess) {                                         \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,       \
				cudaGetErrorString(e_));                         \
			exit(1);                                                 \
		}                                                                \
	} while (0)

// One ring's words, a line each group: reservation head, credits taken,
// records dropped, the consumer's tail.
struct Ring {
	u64 head, credit, drops, tail;
	u64 pad[12];
};

enum Variant {
	BASE,
	C_ONE,        // count: one red per warp, one address
	C_SH32,       // count: 32 shards by %smid (gpux today)
	C_SH32_DESC,  // as C_SH32, the table's address loaded from memory first
	C_SM,         // count: a line per SM
	C_LANE,       // count: 32 shards, a red per lane (no aggregation)
	C_MATCH,      // count: 32 shards, lanes grouped by __match_any_sync
	H_ONE,        // hist: one red per lane into 1024 keys, one table
	H_SH32,       // hist: 32 tables by %smid (gpux today)
	H_SM,         // hist: a table per SM
	H_SH32_U32,   // hist: 32 tables, 32-bit counters
	H_MATCH,      // hist: 32 tables, lanes grouped by __match_any_sync
	P_CAS_HOST,   // printf: CAS on one head, record in host memory, fence.sys (gpux today)
	P_ADD_HOST,   // one atomicAdd on the head instead of a CAS loop
	P_ADD_HOST_REL, // as P_ADD_HOST, st.release.sys for len instead of a fence
	P_ADD_HOST_NF,  // as P_ADD_HOST, no fence (not correct: how much the fence costs)
	P_SM_HOST,    // a ring per SM, atomicAdd, host memory, fence.sys
	P_SM_HOST_REL, // a ring per SM, atomicAdd, host memory, st.release.sys
	P_CAS_DEV,    // one head, CAS, device memory, fence.gpu
	P_ADD_DEV,    // one head, atomicAdd, device memory, fence.gpu
	P_SM_DEV,     // a ring per SM, atomicAdd, device memory, fence.gpu
	P_SMCR_DEV,   // as P_SM_DEV with credits taken first (two atomics)
	P_SMCR_HOST_REL, // credits, ring per SM, host memory, st.release.sys
	D_ONE,        // full ring: the drop path, one drop counter
	D_SM,         // full ring: a drop counter per SM
	NV
};

static const char *const names[NV] = {
	"base", "count: 1 line", "count: 32 shards", "count: 32 shards, address loaded",
	"count: line per SM", "count: 32 shards, red per lane",
	"count: 32 shards, match.any groups", "hist: 1 table", "hist: 32 tables", "hist: table per SM",
	"hist: 32 tables, u32", "hist: 32 tables, match.any groups", "printf: CAS, host, fence.sys", "printf: add, host, fence.sys",
	"printf: add, host, release.sys", "printf: add, host, no fence (unsafe)",
	"printf: per-SM add, host, fence.sys", "printf: per-SM add, host, release.sys",
	"printf: CAS, device, fence.gpu", "printf: add, device, fence.gpu",
	"printf: per-SM add, device, fence.gpu", "printf: per-SM credits, device, fence.gpu",
	"printf: per-SM credits, host, release.sys", "full ring: one drop counter",
	"full ring: drop counter per SM",
};

#define SHARD_STRIDE 4096 // bytes between count shards
#define KEYS 1024
#define NSM 256
#define RING_BYTES (64u << 20)

struct Args {
	const float *a, *b;
	float *c;
	int n;
	u64 *cnt;            // count and hist tables
	u64 *const *desc;    // C_SH32_DESC: where the table's address is
	unsigned char *data; // the ring's bytes
	Ring *rings;         // NSM rings' words
	u64 size;            // bytes per ring (0: always full)
};

__device__ __forceinline__ unsigned smid()
{
	unsigned s;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
	return s;
}

__device__ __forceinline__ unsigned lane()
{
	unsigned l;
	asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
	return l;
}

__device__ __forceinline__ void red64(u64 *p, u64 v)
{
	asm volatile("red.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void red32(unsigned *p, unsigned v)
{
	asm volatile("red.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ void store_release_sys(unsigned *p, unsigned v)
{
	asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

template <int V> __device__ __forceinline__ void count(const Args &x)
{
	unsigned act = __activemask();
	if (V == C_LANE || V == C_MATCH) {
		u64 *p = (u64 *)((char *)x.cnt + (u64)(smid() & 31) * SHARD_STRIDE);
		if (V == C_LANE) {
			red64(p, 1ull);
			return;
		}
		unsigned g = __match_any_sync(act, (u64)p);
		if (lane() == (unsigned)(__ffs(g) - 1))
			red64(p, (u64)__popc(g));
		return;
	}
	if (lane() != (unsigned)(__ffs(act) - 1))
		return;
	u64 *t = x.cnt;
	if (V == C_SH32_DESC)
		t = *(u64 *volatile *)x.desc;
	unsigned sh = V == C_ONE ? 0 : V == C_SM ? smid() % NSM : smid() & 31;
	red64((u64 *)((char *)t + (u64)sh * SHARD_STRIDE), (u64)__popc(act));
}

template <int V> __device__ __forceinline__ void hist(const Args &x, unsigned key)
{
	unsigned sh = V == H_ONE ? 0 : V == H_SM ? smid() % NSM : smid() & 31;
	if (V == H_MATCH) {
		u64 *p = x.cnt + (u64)sh * KEYS + key;
		unsigned g = __match_any_sync(__activemask(), (u64)p);
		if (lane() == (unsigned)(__ffs(g) - 1))
			red64(p, (u64)__popc(g));
		return;
	}
	if (V == H_SH32_U32)
		red32((unsigned *)x.cnt + (u64)sh * KEYS + key, 1u);
	else
		red64(x.cnt + (u64)sh * KEYS + key, 1ull);
}

// One record per warp: header {len, fmt, mask, size} and 8 bytes a lane.
template <int V> __device__ __forceinline__ void record(const Args &x, u64 word)
{
	const bool per_sm = V == P_SM_HOST || V == P_SM_HOST_REL || V == P_SM_DEV ||
			    V == P_SMCR_DEV || V == P_SMCR_HOST_REL || V == D_SM;
	const bool cas = V == P_CAS_HOST || V == P_CAS_DEV;
	const bool credits = V == P_SMCR_DEV || V == P_SMCR_HOST_REL;
	unsigned act = __activemask(), me = lane(), leader = __ffs(act) - 1;
	u64 len = (16 + (u64)__popc(act) * 8 + 15) & ~15ull;
	unsigned r = per_sm ? smid() % NSM : 0;
	Ring *ring = x.rings + r;
	u64 size = per_sm ? x.size / NSM : x.size;
	unsigned char *data = x.data + (per_sm ? (u64)r * (RING_BYTES / NSM) : 0);
	u64 off = 0;
	if (me == leader) {
		if (V == D_ONE || V == D_SM) {
			u64 head = *(volatile u64 *)&ring->head;
			u64 tail = *(volatile u64 *)&ring->tail;
			if (head + len - tail > size) {
				atomicAdd(&ring->drops, 1ull);
				off = ~0ull;
			}
		} else if (cas) {
			u64 head = *(volatile u64 *)&ring->head;
			for (;;) {
				u64 old = atomicCAS(&ring->head, head, head + len);
				if (old == head)
					break;
				head = old;
			}
			off = head;
		} else if (credits) {
			u64 tail = *(volatile u64 *)&ring->tail;
			u64 c = atomicAdd(&ring->credit, len);
			if (c + len - tail > size) {
				atomicAdd(&ring->credit, (u64)0 - len);
				atomicAdd(&ring->drops, 1ull);
				off = ~0ull;
			} else {
				off = atomicAdd(&ring->head, len);
			}
		} else {
			off = atomicAdd(&ring->head, len);
		}
	}
	off = __shfl_sync(act, off, leader);
	if (off == ~0ull)
		return;
	u64 wrap = size - 1;
	unsigned rank = __popc(act & ((1u << me) - 1));
	*(u64 *)(data + ((off + 16 + 8 * (u64)rank) & wrap)) = word;
	__syncwarp(act);
	if (me != leader)
		return;
	unsigned *h = (unsigned *)(data + (off & wrap));
	h[1] = 1;
	h[2] = act;
	h[3] = 8;
	if (V == P_ADD_HOST_REL || V == P_SM_HOST_REL || V == P_SMCR_HOST_REL) {
		store_release_sys(h, (unsigned)len);
		return;
	}
	if (V == P_CAS_HOST || V == P_ADD_HOST || V == P_SM_HOST)
		__threadfence_system();
	else if (V != P_ADD_HOST_NF)
		__threadfence();
	*(volatile unsigned *)h = (unsigned)len;
}

template <int V> __global__ void vadd(Args x)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < x.n)
		x.c[i] = x.a[i] + x.b[i];
	if (V == BASE)
		return;
	if (V >= C_ONE && V <= C_MATCH)
		count<V>(x);
	else if (V >= H_ONE && V <= H_MATCH)
		hist<V>(x, (unsigned)i % KEYS);
	else
		record<V>(x, (u64)i);
}

typedef void (*kern)(Args);
template <int V> struct Table {
	static void fill(kern *k)
	{
		k[V] = vadd<V>;
		Table<V + 1>::fill(k);
	}
};
template <> struct Table<NV> {
	static void fill(kern *) {}
};

static bool host_ring(int v)
{
	return v == P_CAS_HOST || v == P_ADD_HOST || v == P_ADD_HOST_REL || v == P_ADD_HOST_NF ||
	       v == P_SM_HOST || v == P_SM_HOST_REL || v == P_SMCR_HOST_REL;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 200;
	const int n = 1000000, threads = 512, blocks = 1954;
	const u64 nthreads = (u64)threads * blocks;
	kern k[NV];
	Table<0>::fill(k);

	float *a, *b, *c;
	u64 *cnt, **desc;
	unsigned char *dev_data, *host_data, *host_dev;
	Ring *rings;
	CK(cudaMalloc(&a, n * sizeof(float)));
	CK(cudaMalloc(&b, n * sizeof(float)));
	CK(cudaMalloc(&c, n * sizeof(float)));
	CK(cudaMemset(a, 0, n * sizeof(float)));
	CK(cudaMemset(b, 0, n * sizeof(float)));
	size_t cnt_bytes = (size_t)NSM * KEYS * sizeof(u64) + (size_t)NSM * SHARD_STRIDE;
	CK(cudaMalloc(&cnt, cnt_bytes));
	CK(cudaMalloc(&desc, sizeof(u64 *)));
	CK(cudaMemcpy(desc, &cnt, sizeof(u64 *), cudaMemcpyHostToDevice));
	CK(cudaMalloc(&dev_data, RING_BYTES));
	CK(cudaHostAlloc(&host_data, RING_BYTES, cudaHostAllocMapped));
	CK(cudaHostGetDevicePointer((void **)&host_dev, host_data, 0));
	CK(cudaMalloc(&rings, NSM * sizeof(Ring)));

	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	std::vector<u64> tab(cnt_bytes / 8);
	std::vector<Ring> rs(NSM);
	double base = 0;
	printf("| pattern at each thread's exit (xlarge, %llu threads) | median µs | p10 | p90 | ratio | check |\n",
	       nthreads);
	printf("|---|---|---|---|---|---|\n");
	for (int v = 0; v < NV; v++) {
		Args x = { a, b, c, n, cnt, desc, host_ring(v) ? host_dev : dev_data, rings,
			   (v == D_ONE || v == D_SM) ? 0 : (u64)RING_BYTES };
		CK(cudaMemset(cnt, 0, cnt_bytes));
		std::vector<float> ms;
		int warm = 5;
		for (int it = 0; it < warm + iters; it++) {
			CK(cudaMemsetAsync(rings, 0, NSM * sizeof(Ring)));
			CK(cudaEventRecord(e0));
			k[v]<<<blocks, threads>>>(x);
			CK(cudaEventRecord(e1));
			CK(cudaEventSynchronize(e1));
			CK(cudaGetLastError());
			float t;
			CK(cudaEventElapsedTime(&t, e0, e1));
			if (it >= warm)
				ms.push_back(t * 1000.0f);
		}
		std::sort(ms.begin(), ms.end());
		double med = ms[ms.size() / 2], p10 = ms[ms.size() / 10],
		       p90 = ms[ms.size() * 9 / 10];
		if (v == BASE)
			base = med;
		// check: every launch's events landed
		const char *check = "ok";
		u64 runs = (u64)(warm + iters);
		CK(cudaMemcpy(tab.data(), cnt, cnt_bytes, cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(rs.data(), rings, NSM * sizeof(Ring), cudaMemcpyDeviceToHost));
		u64 sum = 0;
		for (u64 w : tab)
			sum += w;
		if (((v >= C_ONE && v <= H_SH32) || v == H_MATCH) && sum != nthreads * runs)
			check = "COUNT WRONG";
		if (v == H_SM && sum != nthreads * runs)
			check = "COUNT WRONG";
		if (v == H_SH32_U32) {
			u64 s32 = 0;
			const unsigned *w32 = (const unsigned *)tab.data();
			for (size_t j = 0; j < cnt_bytes / 4; j++)
				s32 += w32[j];
			if (s32 != nthreads * runs)
				check = "COUNT WRONG";
		}
		if (v >= P_CAS_HOST && v <= P_SMCR_HOST_REL) {
			// the last launch's bytes: one 272-byte record per warp
			u64 bytes = 0;
			for (const Ring &r : rs)
				bytes += r.head;
			if (bytes != nthreads / 32 * 272)
				check = "RECORDS WRONG";
		}
		if (v == D_ONE || v == D_SM) {
			u64 d = 0;
			for (const Ring &r : rs)
				d += r.drops;
			if (d != nthreads / 32)
				check = "DROPS WRONG";
		}
		printf("| %s | %.2f | %.2f | %.2f | %.2fx | %s |\n", names[v], med, p10, p90,
		       med / base, check);
	}
	return 0;
}
