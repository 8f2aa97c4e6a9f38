// A long-running program for live sessions (gpux --repl -c): two kernels
// launched by turns until SIGTERM; each SIGUSR1 starts a new phase. A
// launch counts in the phase current when it returned, so a launch held
// by a paused gpux counts in the phase it was let go in. At the end:
// each phase's launches of each kernel, and a checksum of the data.
// `live graph` launches the same kernels through two CUDA graphs: add_one
// captured from a stream (captured again, and the executable graph
// updated from the new capture, every 64th time), scale a kernel node of
// a graph the program keeps, whose parameters it sets on the executable
// graph before every other launch of it.
// The kernels use module variables as programs do: each launch adds
// c_step (a __constant__ the program sets with cudaMemcpyToSymbol) to
// runs (a __device__ counter it reads back at the end), so `live: runs`
// equals the launches only if every launch, instrumented copy or not,
// used the program's variables.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "common.h"

#define PHASES 16
static volatile sig_atomic_t phase, quit;

static void on_usr1(int) { if (phase < PHASES - 1) phase++; }
static void on_term(int) { quit = 1; }

__device__ unsigned long long runs;
__constant__ unsigned c_step;

__global__ void add_one(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i == 0)
		atomicAdd(&runs, (unsigned long long)c_step);
	if (i < n)
		x[i] += 1.0f;
}

__global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i == 0)
		atomicAdd(&runs, (unsigned long long)c_step);
	if (i < n)
		x[i] *= a;
}

static const int n = 1 << 16, threads = 256, blocks = n / threads;

struct graphs {
	cudaStream_t s;
	cudaGraphExec_t add, scale;
	cudaGraph_t scale_graph; // kept: its node names the executable graph's
	cudaGraphNode_t scale_node;
	cudaKernelNodeParams scale_params;
	void *args[3];
	float *d;
	float a;
	int n;
};

static cudaGraph_t capture(graphs &g)
{
	cudaGraph_t graph;
	CK(cudaStreamBeginCapture(g.s, cudaStreamCaptureModeGlobal));
	add_one<<<blocks, threads, 0, g.s>>>(g.d, n);
	CK(cudaStreamEndCapture(g.s, &graph));
	return graph;
}

static void graphs_make(graphs &g, float *d)
{
	g.d = d;
	g.a = 0.5f;
	g.n = n;
	CK(cudaStreamCreateWithFlags(&g.s, cudaStreamNonBlocking));
	cudaGraph_t graph = capture(g);
	CK(cudaGraphInstantiate(&g.add, graph, 0));
	CK(cudaGraphDestroy(graph));
	g.args[0] = &g.d;
	g.args[1] = &g.a;
	g.args[2] = &g.n;
	g.scale_params = cudaKernelNodeParams{};
	g.scale_params.func = (void *)scale;
	g.scale_params.gridDim = dim3(blocks);
	g.scale_params.blockDim = dim3(threads);
	g.scale_params.kernelParams = g.args;
	CK(cudaGraphCreate(&g.scale_graph, 0));
	CK(cudaGraphAddKernelNode(&g.scale_node, g.scale_graph, nullptr, 0, &g.scale_params));
	CK(cudaGraphInstantiate(&g.scale, g.scale_graph, 0));
}

static void graph_launch(graphs &g, long i)
{
	if (i % 128 == 64) {
		cudaGraph_t graph = capture(g);
		cudaGraphExecUpdateResultInfo info;
		CK(cudaGraphExecUpdate(g.add, graph, &info));
		CK(cudaGraphDestroy(graph));
	}
	if (i % 4 == 1)
		CK(cudaGraphExecKernelNodeSetParams(g.scale, g.scale_node, &g.scale_params));
	CK(cudaGraphLaunch(i % 2 ? g.scale : g.add, g.s));
	if (i % 2)
		CK(cudaStreamSynchronize(g.s));
}

int main(int argc, char **argv)
{
	bool use_graphs = argc > 1 && !std::strcmp(argv[1], "graph");
	static long launches[PHASES][2];
	static graphs g;
	float *d;
	CK(cudaMalloc(&d, n * sizeof(float)));
	CK(cudaMemset(d, 0, n * sizeof(float)));
	const unsigned step = 1;
	CK(cudaMemcpyToSymbol(c_step, &step, sizeof(step)));
	std::signal(SIGUSR1, on_usr1);
	std::signal(SIGTERM, on_term);
	if (use_graphs)
		graphs_make(g, d);
	std::printf("live: launching %d x %d threads%s\n", blocks, threads,
		    use_graphs ? " through graphs" : "");
	std::fflush(stdout);
	// a SIGTERM ends the run after a whole pair: the result is the same
	for (long i = 0; !(quit && i % 2 == 0); i++) {
		if (use_graphs)
			graph_launch(g, i);
		else if (i % 2 == 0)
			add_one<<<blocks, threads>>>(d, n);
		else
			scale<<<blocks, threads>>>(d, 0.5f, n);
		CK(cudaGetLastError());
		launches[phase][i % 2]++;
		if (i % 2) {
			CK(cudaDeviceSynchronize());
			timespec t = { 0, 500000 };
			nanosleep(&t, nullptr);
		}
	}
	CK(cudaDeviceSynchronize());
	float h[4];
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	for (int p = 0; p <= phase; p++)
		std::printf("live: phase %d: add_one %ld, scale %ld\n", p, launches[p][0],
			    launches[p][1]);
	std::printf("live: x[0] = %.6f\n", h[0]);
	unsigned long long r;
	CK(cudaMemcpyFromSymbol(&r, runs, sizeof(r)));
	std::printf("live: runs %llu\n", r);
	if (use_graphs) {
		CK(cudaGraphExecDestroy(g.add));
		CK(cudaGraphExecDestroy(g.scale));
		CK(cudaGraphDestroy(g.scale_graph));
		CK(cudaStreamDestroy(g.s));
	}
	CK(cudaFree(d));
	return 0;
}
