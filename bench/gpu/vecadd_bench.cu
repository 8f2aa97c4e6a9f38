// vectorAdd launch + cudaDeviceSynchronize latency, bpftime's benchmark
// shape: vecadd_bench SIZE ITERATIONS THREADS BLOCKS [WARMUP]
// (bpftime presets: tiny 32 10000 32 1, small 1000 10000 256 4,
// medium 10000 10000 256 40, large 100000 1000 512 196,
// xlarge 1000000 1000 512 1954). Each iteration is timed alone with
// clock_gettime(CLOCK_MONOTONIC) around the launch and the sync; WARMUP
// (default 10) untimed iterations first (module load, JIT). Prints one
// line with the median, p10, p90 in microseconds, then a result check.
#include "bench.h"

__global__ void vectorAdd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: %s SIZE ITERATIONS THREADS BLOCKS [WARMUP]\n", argv[0]);
		return 2;
	}
	int n = atoi(argv[1]), iters = atoi(argv[2]), threads = atoi(argv[3]),
	    blocks = atoi(argv[4]), warm = argc > 5 ? atoi(argv[5]) : 10;
	if (n <= 0 || iters <= 0 || threads <= 0 || blocks <= 0 || warm < 0) {
		fprintf(stderr, "vecadd_bench: bad arguments\n");
		return 2;
	}
	std::vector<float> a(n), b(n), c(n);
	for (int i = 0; i < n; i++) {
		a[i] = (float)(i % 1000) * 0.5f;
		b[i] = (float)(i % 777) * 0.25f;
	}
	float *da, *db, *dc;
	CK(cudaMalloc((void **)&da, n * sizeof(float)));
	CK(cudaMalloc((void **)&db, n * sizeof(float)));
	CK(cudaMalloc((void **)&dc, n * sizeof(float)));
	CK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	for (int i = 0; i < warm; i++) {
		vectorAdd<<<blocks, threads>>>(da, db, dc, n);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
	}
	std::vector<double> t;
	t.reserve(iters);
	double limit = max_us(), start = now_us();
	for (int i = 0; i < iters; i++) {
		double t0 = now_us();
		vectorAdd<<<blocks, threads>>>(da, db, dc, n);
		cudaError_t e = cudaDeviceSynchronize();
		double t1 = now_us();
		CK(e);
		t.push_back(t1 - t0);
		if (t1 - start > limit)
			break;
	}
	CK(cudaGetLastError());
	char what[160];
	snprintf(what, sizeof(what), "vecadd size=%d threads=%d blocks=%d", n, threads, blocks);
	report(what, t);
	CK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
	int covered = std::min(n, threads * blocks), bad = 0;
	for (int i = 0; i < covered; i++)
		bad += c[i] != a[i] + b[i];
	printf("check: %s\n", bad ? "FAIL" : "ok");
	CK(cudaFree(da));
	CK(cudaFree(db));
	CK(cudaFree(dc));
	return bad ? 1 : 0;
}
