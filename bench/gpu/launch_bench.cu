// The host-side cost of cudaLaunchKernel: batches of BATCH launches of an
// empty kernel, the CPU time of each batch's launch calls timed alone
// (the sync after the batch is not), so gpux's cuda:launch path shows as
// the difference per launch between modes (bench/gpu/launch.sh). With
// "capture", each batch is launched into a stream being captured into a
// graph: the same API path (and gpux's hook), but nothing reaches the
// GPU, so the GPU's queue adds no noise.
//   launch_bench BATCHES [BATCH] [WARMUP] [capture]
#include "bench.h"

#include <cstring>

__global__ void emptyK(int *p)
{
	if (p && threadIdx.x == 1024)
		*p = 1; // never: keeps the parameter
}

int main(int argc, char **argv)
{
	int batches = argc > 1 ? atoi(argv[1]) : 2000;
	int batch = argc > 2 ? atoi(argv[2]) : 256;
	int warmup = argc > 3 ? atoi(argv[3]) : 20;
	bool capture = argc > 4 && !strcmp(argv[4], "capture");
	cudaStream_t cs;
	CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
	if (batches < 1 || batch < 1 || warmup < 0) {
		fprintf(stderr, "usage: launch_bench BATCHES [BATCH] [WARMUP]\n");
		return 2;
	}
	std::vector<double> per;
	double stop = now_us() + max_us();
	for (int b = -warmup; b < batches; b++) {
		cudaGraph_t g;
		if (capture)
			CK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeRelaxed));
		double t0 = now_us();
		for (int i = 0; i < batch; i++)
			emptyK<<<1, 32, 0, capture ? cs : 0>>>(nullptr);
		double t1 = now_us();
		CK(cudaGetLastError());
		if (capture) {
			CK(cudaStreamEndCapture(cs, &g));
			CK(cudaGraphDestroy(g));
		}
		CK(cudaDeviceSynchronize());
		if (b >= 0)
			per.push_back((t1 - t0) * 1000.0 / batch); // ns per launch
		if (b >= 0 && now_us() > stop)
			break;
	}
	std::sort(per.begin(), per.end());
	double sum = 0;
	for (double x : per)
		sum += x;
	printf("launch%s batches=%zu batch=%d median_ns=%.1f p10_ns=%.1f p90_ns=%.1f mean_ns=%.1f\n",
	       capture ? " captured" : "", per.size(), batch, pct(per, 50), pct(per, 10), pct(per, 90), sum / per.size());
	return 0;
}
