/* A driver-API program linked against libcuda (the fake one in tests):
 * loads kern.cu's code and launches its two kernels. Usage:
 *   drv_app MODE FILE
 * MODE: module   cuModuleLoadData on FILE's bytes
 *       modex    cuModuleLoadDataEx with a JIT info log option
 *       modexreg cuModuleLoadDataEx with CU_JIT_MAX_REGISTERS (64)
 *       file     cuModuleLoad(FILE)
 *       link     cuLinkAddData(PTX) + cuLinkComplete, cuModuleLoadData on
 *                the cubin (numba's way)
 *       library  cuLibraryLoadData before any context exists, then
 *                cuLibraryGetKernel, the CUkernel launched as a CUfunction
 *       image    cuModuleLoadData on FILE (a fatbin, a cubin) twice; no launch
 *       twoctx   two contexts, each loading FILE and launching add_one
 *                (once in the first, twice in the second)
 *       twodev   as twoctx, the second context on device 1
 *                (FAKE_CUDA_DEVICES=2)
 *       libctx   cuLibraryLoadData before any context, then add_one once
 *                in a first context, twice in a second, three more
 *                times in the first
 *       noclean  as module, then exit without unloading or destroying
 *       primary  as module, but between the add_one launches something
 *                else retains and releases the primary context (as
 *                cudart in the same process would)
 *       many     as module, but add_one<<<1, 32>>> N times (default
 *                5000), pausing 2 ms after every 20 (not with a fourth
 *                argument "burst")
 *       extra    as module, but add_one<<<1, 64>>>(buf, 256) once, its
 *                parameters packed in extra's CU_LAUNCH_PARAM_BUFFER_POINTER
 *       occupancy    as module, then sets add_one's dynamic shared memory
 *                limit and prints its registers, that limit and the
 *                occupancy API's blocks per SM for 256 threads
 *       liboccupancy the same through cuLibraryLoadData and a CUkernel
 *                (cuKernelSetAttribute, cuKernelGetAttribute)
 *       rdc      FILE is nvlink's linked fatbin, the files after it the
 *                units' fatbins: loads them as cudart loads relocatable
 *                device code (a version-2 wrapper listing the units) and
 *                launches _Z8rdc_vaddPKfS0_Pfi and _Z8rdc_fillPfi <<<1, 64>>>
 *       rename   as module, then add_one<<<1, 32>>> twice, once after the
 *                thread renamed itself with pthread_setname_np ("renamed1"),
 *                once after prctl(PR_SET_NAME) ("renamed2"), once from a
 *                thread named "worker"
 *       mem      as module, but add_one<<<1, 64>>> on 1 MiB of managed
 *                memory (n = 256, on a stream of its own), a synchronize of
 *                that stream, then on 4 KiB of device memory (n = 64,
 *                stream 0); prints the sums
 *       live     as module, then add_one<<<1, 32>>> and scale<<<1, 32>>> by
 *                turns, 1 ms apart, until SIGTERM (or N launches); each
 *                SIGUSR1 starts a new phase; prints each phase's launches
 *                of each kernel; with FILE from kern_vars.cu, what its
 *                kernels added to their launch counter, started at 1000
 *       late     as module, once a SIGUSR1 comes after the context is made
 *       busy     as late, spinning in the driver with its lock held meanwhile
 *                (and with DRV_APP_DLOPEN=LIB, another thread loading and
 *                unloading LIB all the while)
 *                (a process gpux -p attaches to in between)
 *       graphs   add_one captured into a graph, scale in a graph built by
 *                hand; the first replayed 3 times, the second 2, on a
 *                stream of its own
 *       live-twodev  as live, scale from the module loaded again in a
 *                context on device 1 (FAKE_CUDA_DEVICES=2)
 *       live-lib  as live, the module loaded with cuLibraryLoadData before
 *                the context, its kernels CUkernels, its counter read
 *                with cuLibraryGetGlobal
 *       live-graph  as live, through two graphs: add_one captured from a
 *                stream (captured again, and the executable graph updated
 *                from the new graph, every 32nd time), scale a kernel node
 *                of a graph the program keeps, whose parameters it sets on
 *                the executable graph before every other launch of it
 *       streams  as module, but on two streams of its own: add_one<<<4, 64>>>
 *                x3 (cuLaunchKernel) and add_one<<<3, 32>>>
 *                (cuLaunchCooperativeKernel) on the first, scale<<<2,
 *                (8, 4), 128>>> x2 (cuLaunchKernelEx) on the second,
 *                add_one<<<5, 32>>> on the per-thread default stream
 *                (cuLaunchKernel_ptsz); both streams synchronised, then
 *                scale<<<1, (8, 4), 128>>> on the second, left for the
 *                context's end (N = "exit": exit(0) right after it)
 *       spawn    no CUDA of its own: runs `drv_app module FILE` as a child
 *                started with every descriptor above 2 closed (as Python's
 *                spawn and subprocess start theirs) and waits for it
 *       forkexec the same child, its descriptors inherited
 * Prints what it did; exits 1 on any CUDA error. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "late.h"

/* busy's other thread: dlopen and dlclose lib until SIGUSR1 came */
static void *load_loop(void *lib)
{
	while (!late_go) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (h)
			dlclose(h);
	}
	return NULL;
}
#include "slurp.h"

static int check(CUresult rc, const char *what)
{
	if (rc == CUDA_SUCCESS)
		return 0;
	const char *s = NULL;
	cuGetErrorString(rc, &s);
	fprintf(stderr, "drv_app: %s: %s\n", what, s ? s : "?");
	exit(1);
}

/* rename mode: add_one<<<1, 32>>> twice under the thread's first name,
 * after pthread_setname_np "renamed1", after prctl "renamed2", and
 * from a thread named "worker" (the context made current there). */
struct rename_args {
	CUfunction f;
	void **args;
	CUcontext ctx;
};

static void rename_launch(const struct rename_args *a)
{
	check(cuLaunchKernel(a->f, 1, 1, 1, 32, 1, 1, 0, NULL, a->args, NULL), "cuLaunchKernel");
}

static void *rename_worker(void *p)
{
	const struct rename_args *a = p;
	pthread_setname_np(pthread_self(), "worker");
	check(cuCtxSetCurrent(a->ctx), "cuCtxSetCurrent");
	rename_launch(a);
	return NULL;
}

static void rename_launches(CUfunction f, void **args)
{
	struct rename_args a = { f, args, NULL };
	pthread_t t;
	check(cuCtxGetCurrent(&a.ctx), "cuCtxGetCurrent");
	rename_launch(&a);
	rename_launch(&a);
	pthread_setname_np(pthread_self(), "renamed1");
	rename_launch(&a);
	prctl(PR_SET_NAME, "renamed2", 0, 0, 0);
	rename_launch(&a);
	if (pthread_create(&t, NULL, rename_worker, &a) || pthread_join(t, NULL))
		exit(1);
	check(cuCtxSynchronize(), "cuCtxSynchronize");
	printf("drv_app: 5 launches, 3 names\n");
}

/* mem mode: whatever gpux's memory actions do, the results stay. */
static void mem_launches(CUfunction add_one)
{
	CUdeviceptr um, dm;
	CUstream s;
	int n1 = 256, n2 = 64;
	check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	check(cuMemAllocManaged(&um, 1 << 20, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
	check(cuMemAlloc(&dm, 4096), "cuMemAlloc");
	float *h = (float *)(uintptr_t)um, back[64];
	for (int i = 0; i < n1; i++)
		h[i] = (float)i;
	check(cuMemsetD32(dm, 0, 1024), "cuMemsetD32");
	void *a1[] = { &um, &n1 }, *a2[] = { &dm, &n2 };
	check(cuLaunchKernel(add_one, 1, 1, 1, 64, 1, 1, 0, s, a1, NULL), "cuLaunchKernel");
	check(cuStreamSynchronize(s), "cuStreamSynchronize");
	check(cuLaunchKernel(add_one, 1, 1, 1, 64, 1, 1, 0, NULL, a2, NULL), "cuLaunchKernel");
	check(cuCtxSynchronize(), "cuCtxSynchronize");
	check(cuMemcpyDtoH(back, dm, sizeof(back)), "cuMemcpyDtoH");
	double s1 = 0, s2 = 0;
	for (int i = 0; i < n1; i++)
		s1 += h[i];
	for (int i = 0; i < n2; i++)
		s2 += back[i];
	printf("drv_app: managed sum %.1f, device sum %.1f\n", s1, s2);
	check(cuMemFree(um), "cuMemFree");
	check(cuMemFree(dm), "cuMemFree");
	check(cuStreamDestroy(s), "cuStreamDestroy");
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			     unsigned by, unsigned bz, unsigned shm, CUstream s, void **p,
			     void **e);

/* live mode: launches counted by phase, SIGUSR1 moving to the next. A
 * launch is counted in the phase current when it returned, so a launch
 * held by a paused gpux counts in the phase it was let go in. */
#define PHASES 16
static volatile sig_atomic_t phase, live_quit;
static void on_usr1(int sig)
{
	(void)sig;
	if (phase < PHASES - 1)
		phase++;
}
static void on_term(int sig)
{
	(void)sig;
	live_quit = 1;
}
/* live-graph mode's graphs. */
static CUstream gs;
static CUgraphExec gadd, gscale;
static CUgraphNode gscale_node;
static CUDA_KERNEL_NODE_PARAMS gscale_params;

static CUgraph capture(CUfunction add_one, void **a1)
{
	CUgraph g;
	check(cuStreamBeginCapture(gs, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
	check(cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, gs, a1, NULL), "cuLaunchKernel");
	check(cuStreamEndCapture(gs, &g), "cuStreamEndCapture");
	return g;
}

static void graphs_make(CUfunction add_one, CUfunction scale, void **a1, void **a2)
{
	CUgraph g;
	check(cuStreamCreate(&gs, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	g = capture(add_one, a1);
	check(cuGraphInstantiate(&gadd, g, 0), "cuGraphInstantiate");
	check(cuGraphDestroy(g), "cuGraphDestroy");
	gscale_params = (CUDA_KERNEL_NODE_PARAMS){ .func = scale, .gridDimX = 1, .gridDimY = 1,
						   .gridDimZ = 1, .blockDimX = 8, .blockDimY = 4,
						   .blockDimZ = 1, .kernelParams = a2 };
	check(cuGraphCreate(&g, 0), "cuGraphCreate");
	check(cuGraphAddKernelNode(&gscale_node, g, NULL, 0, &gscale_params), "cuGraphAddKernelNode");
	check(cuGraphInstantiate(&gscale, g, 0), "cuGraphInstantiate");
	/* g stays: its node names the executable graph's */
}

static void graph_launch(long i, int k, CUfunction add_one, void **a1)
{
	if (k == 0 && i % 64 == 32) {
		CUgraph g = capture(add_one, a1);
		CUgraphExecUpdateResultInfo info;
		check(cuGraphExecUpdate(gadd, g, &info), "cuGraphExecUpdate");
		check(cuGraphDestroy(g), "cuGraphDestroy");
	}
	if (k == 1 && i % 4 == 1)
		check(cuGraphExecKernelNodeSetParams(gscale, gscale_node, &gscale_params),
		      "cuGraphExecKernelNodeSetParams");
	check(cuGraphLaunch(k ? gscale : gadd, gs), "cuGraphLaunch");
}

/* c2: the context scale runs in (NULL: the current one, as add_one). */
static void live_launches(CUfunction add_one, CUfunction scale, void **a1, void **a2, long max,
			  bool graphs, CUcontext c2)
{
	CUcontext c1 = NULL;
	check(cuCtxGetCurrent(&c1), "cuCtxGetCurrent");
	static long n[PHASES][2];
	signal(SIGUSR1, on_usr1);
	signal(SIGTERM, on_term);
	if (graphs)
		graphs_make(add_one, scale, a1, a2);
	printf("drv_app: launching\n");
	fflush(stdout);
	for (long i = 0; !live_quit && (!max || i < max); i++) {
		int k = (int)(i & 1);
		if (graphs)
			graph_launch(i, k, add_one, a1);
		else if (k == 0)
			check(cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, NULL, a1, NULL),
			      "cuLaunchKernel");
		else if (!c2)
			check(cuLaunchKernel(scale, 1, 1, 1, 8, 4, 1, 0, NULL, a2, NULL),
			      "cuLaunchKernel");
		if (k == 1 && c2 && !graphs) {
			check(cuCtxSetCurrent(c2), "cuCtxSetCurrent");
			check(cuLaunchKernel(scale, 1, 1, 1, 8, 4, 1, 0, NULL, a2, NULL),
			      "cuLaunchKernel");
			check(cuCtxSynchronize(), "cuCtxSynchronize");
			check(cuCtxSetCurrent(c1), "cuCtxSetCurrent");
		}
		n[phase][k]++;
		if (k)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	check(cuCtxSynchronize(), "cuCtxSynchronize");
	if (graphs) {
		check(cuGraphExecDestroy(gadd), "cuGraphExecDestroy");
		check(cuGraphExecDestroy(gscale), "cuGraphExecDestroy");
	}
	for (int p = 0; p <= phase; p++)
		printf("drv_app: phase %d: add_one %ld, scale %ld\n", p, n[p][0], n[p][1]);
}

/* streams mode. */
static void stream_launches(CUfunction add_one, CUfunction scale, CUdeviceptr buf, bool quit)
{
	CUstream s1, s2;
	int n = 256;
	float a = 2.0f;
	void *a1[] = { &buf, &n }, *a2[] = { &buf, &a, &n };
	check(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	check(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	for (int i = 0; i < 3; i++)
		check(cuLaunchKernel(add_one, 4, 1, 1, 64, 1, 1, 0, s1, a1, NULL), "cuLaunchKernel");
	CUlaunchConfig c = { .gridDimX = 2, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 8,
			     .blockDimY = 4, .blockDimZ = 1, .sharedMemBytes = 128, .hStream = s2 };
	for (int i = 0; i < 2; i++)
		check(cuLaunchKernelEx(&c, scale, a2, NULL), "cuLaunchKernelEx");
	check(cuLaunchCooperativeKernel(add_one, 3, 1, 1, 32, 1, 1, 0, s1, a1),
	      "cuLaunchCooperativeKernel");
	check(cuLaunchKernel_ptsz(add_one, 5, 1, 1, 32, 1, 1, 0, NULL, a1, NULL),
	      "cuLaunchKernel_ptsz");
	check(cuStreamSynchronize(s1), "cuStreamSynchronize");
	check(cuStreamSynchronize(s2), "cuStreamSynchronize");
	c.gridDimX = 1;
	check(cuLaunchKernelEx(&c, scale, a2, NULL), "cuLaunchKernelEx");
	printf("drv_app: 8 launches on two streams and the per-thread one\n");
	fflush(stdout);
	if (quit)
		exit(0);
	check(cuStreamDestroy(s1), "cuStreamDestroy");
	check(cuStreamDestroy(s2), "cuStreamDestroy");
}

static int run_child(char **argv, bool close_fds)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		if (close_fds)
			for (int fd = 3; fd < 1024; fd++)
				close(fd);
		char *args[] = { argv[0], "module", argv[2], NULL };
		execv(argv[0], args);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	printf("drv_app: the child exited with %d\n", WEXITSTATUS(status));
	return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	if (argc < 3 || (argc > 4 && strcmp(argv[1], "rdc") && strcmp(argv[1], "many"))) {
		fprintf(stderr, "usage: drv_app module|modex|file|library|link|image|twoctx|rdc|"
			"libctx|noclean|primary|many|segv|abort|extra|mem|streams|live|live-lib|live-graph|"
			"spawn|forkexec|twodev|live-twodev|late|busy|graphs FILE [N [burst]]\n");
		return 2;
	}
	const char *mode = argv[1];
	/* DRV_APP_ADD_ONE: add_one's name in FILE (a test renames it) */
	const char *add_one_name = getenv("DRV_APP_ADD_ONE") ? getenv("DRV_APP_ADD_ONE") : "add_one";
	if (!strcmp(mode, "spawn") || !strcmp(mode, "forkexec"))
		return run_child(argv, !strcmp(mode, "spawn"));
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod = NULL;
	CUlibrary lib = NULL;
	CUfunction add_one, scale;
	char *image = strcmp(mode, "file") ? slurp(argv[2]) : NULL;

	check(cuInit(0), "cuInit");
	check(cuDeviceGet(&dev, 0), "cuDeviceGet");
	if (!strcmp(mode, "library") || !strcmp(mode, "libctx") || !strcmp(mode, "live-lib"))
		check(cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0),
		      "cuLibraryLoadData");
	check(cuCtxCreate(&ctx, NULL, 0, dev), "cuCtxCreate");
	if (!strcmp(mode, "late")) { /* CUDA going, nothing loaded: gpux -p attaches now */
		late_wait("drv_app");
		mode = "module";
	}
	if (!strcmp(mode, "busy")) { /* as late, waiting inside the driver */
		void (*hold)(unsigned) = (void (*)(unsigned))dlsym(RTLD_DEFAULT, "fake_cuda_hold");
		const char *lib = getenv("DRV_APP_DLOPEN");
		pthread_t loader;
		if (!hold) {
			fprintf(stderr, "drv_app: busy needs the fake driver\n");
			return 1;
		}
		/* meanwhile another thread loads and unloads a library, as a
		 * program's threads may while gpux attaches */
		bool loading = lib && *lib && !pthread_create(&loader, NULL, load_loop, (void *)lib);
		late_busy("drv_app", hold);
		if (loading)
			pthread_join(loader, NULL);
		mode = "module";
	}

	if (!strcmp(mode, "image")) {
		for (int i = 0; i < 2; i++) {
			check(cuModuleLoadData(&mod, image), "cuModuleLoadData");
			printf("drv_app: loaded the image\n");
			check(cuModuleUnload(mod), "cuModuleUnload");
		}
		check(cuCtxDestroy(ctx), "cuCtxDestroy");
		free(image);
		return 0;
	}
	if (!strcmp(mode, "libctx")) {
		CUcontext c2;
		CUkernel k;
		int n = 64;
		CUdeviceptr buf = 0;
		void *args[] = { &buf, &n };
		static const int times[] = { 1, 2, 3 };
		check(cuCtxCreate(&c2, NULL, 0, dev), "cuCtxCreate");
		check(cuLibraryGetKernel(&k, lib, add_one_name), "cuLibraryGetKernel");
		for (int i = 0; i < 3; i++) {
			check(cuCtxSetCurrent(i == 1 ? c2 : ctx), "cuCtxSetCurrent");
			for (int j = 0; j < times[i]; j++)
				check(cuLaunchKernel((CUfunction)k, 1, 1, 1, 64, 1, 1, 0, NULL, args,
						     NULL), "cuLaunchKernel");
		}
		printf("drv_app: add_one<<<1, 64>>> in two contexts from one library\n");
		check(cuLibraryUnload(lib), "cuLibraryUnload");
		check(cuCtxDestroy(ctx), "cuCtxDestroy");
		check(cuCtxDestroy(c2), "cuCtxDestroy");
		free(image);
		return 0;
	}
	if (!strcmp(mode, "twoctx") || !strcmp(mode, "twodev")) {
		CUcontext c2;
		CUmodule m2;
		CUdevice dev2 = dev;
		int n = 64;
		CUdeviceptr buf = 0;
		void *args[] = { &buf, &n };
		if (!strcmp(mode, "twodev"))
			check(cuDeviceGet(&dev2, 1), "cuDeviceGet");
		check(cuCtxCreate(&c2, NULL, 0, dev2), "cuCtxCreate"); /* now current */
		check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
		check(cuModuleLoadData(&mod, image), "cuModuleLoadData");
		check(cuModuleGetFunction(&add_one, mod, add_one_name), "cuModuleGetFunction");
		check(cuLaunchKernel(add_one, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel");
		check(cuCtxSetCurrent(c2), "cuCtxSetCurrent");
		check(cuModuleLoadData(&m2, image), "cuModuleLoadData");
		check(cuModuleGetFunction(&add_one, m2, add_one_name), "cuModuleGetFunction");
		for (int i = 0; i < 2; i++)
			check(cuLaunchKernel(add_one, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL),
			      "cuLaunchKernel");
		printf("drv_app: add_one<<<1, 64>>> in two contexts\n");
		check(cuCtxDestroy(ctx), "cuCtxDestroy");
		check(cuCtxDestroy(c2), "cuCtxDestroy");
		free(image);
		return 0;
	}
	if (!strcmp(mode, "extra")) {
		check(cuModuleLoadData(&mod, image), "cuModuleLoadData");
		check(cuModuleGetFunction(&add_one, mod, add_one_name), "cuModuleGetFunction");
		CUdeviceptr buf;
		check(cuMemAlloc(&buf, 1024), "cuMemAlloc");
		struct { CUdeviceptr x; int n; int pad; } packed = { buf, 256, 0 };
		size_t size = sizeof(packed);
		void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &packed,
				  CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END };
		check(cuLaunchKernel(add_one, 1, 1, 1, 64, 1, 1, 0, NULL, NULL, extra),
		      "cuLaunchKernel");
		printf("drv_app: add_one through extra\n");
		check(cuCtxSynchronize(), "cuCtxSynchronize");
		check(cuMemFree(buf), "cuMemFree");
		check(cuModuleUnload(mod), "cuModuleUnload");
		check(cuCtxDestroy(ctx), "cuCtxDestroy");
		free(image);
		return 0;
	}
	if (!strcmp(mode, "occupancy") || !strcmp(mode, "liboccupancy")) {
		bool viaLib = mode[0] == 'l';
		CUkernel k = NULL;
		int regs = 0, smem = 0, blocks = 0, n = 64;
		if (viaLib) {
			check(cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0),
			      "cuLibraryLoadData");
			check(cuLibraryGetKernel(&k, lib, add_one_name), "cuLibraryGetKernel");
			add_one = (CUfunction)k;
			check(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
						   4096, k, dev), "cuKernelSetAttribute");
			check(cuKernelGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, k, dev),
			      "cuKernelGetAttribute");
		} else {
			check(cuModuleLoadData(&mod, image), "cuModuleLoadData");
			check(cuModuleGetFunction(&add_one, mod, add_one_name), "cuModuleGetFunction");
			check(cuFuncSetAttribute(add_one, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
						 4096), "cuFuncSetAttribute");
			check(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, add_one),
			      "cuFuncGetAttribute");
		}
		check(cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
					 add_one), "cuFuncGetAttribute");
		check(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_one, 256, 0),
		      "cuOccupancyMaxActiveBlocksPerMultiprocessor");
		printf("drv_app: add_one: %d registers, %d bytes of dynamic shared memory, "
		       "%d blocks of 256 per SM\n", regs, smem, blocks);
		CUdeviceptr buf = 0;
		void *args[] = { &buf, &n };
		check(cuLaunchKernel(add_one, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL),
		      "cuLaunchKernel");
		check(cuCtxSynchronize(), "cuCtxSynchronize");
		if (lib)
			check(cuLibraryUnload(lib), "cuLibraryUnload");
		else
			check(cuModuleUnload(mod), "cuModuleUnload");
		check(cuCtxDestroy(ctx), "cuCtxDestroy");
		free(image);
		return 0;
	}
	if (!strcmp(mode, "rdc")) {
		const void *units[8] = { 0 };
		char *bufs[8] = { 0 };
		for (int i = 3; i < argc && i - 3 < 7; i++)
			units[i - 3] = bufs[i - 3] = slurp(argv[i]);
		struct {
			uint32_t magic, version;
			const void *data;
			const void **units;
		} w = { 0x466243B1u, 2, image, units };
		check(cuModuleLoadData(&mod, &w), "cuModuleLoadData");
		CUfunction vadd, fill;
		check(cuModuleGetFunction(&vadd, mod, "_Z8rdc_vaddPKfS0_Pfi"), "cuModuleGetFunction");
		check(cuModuleGetFunction(&fill, mod, "_Z8rdc_fillPfi"), "cuModuleGetFunction");
		CUdeviceptr buf = 0;
		int n = 64;
		void *va[] = { &buf, &buf, &buf, &n }, *fa[] = { &buf, &n };
		check(cuLaunchKernel(vadd, 1, 1, 1, 64, 1, 1, 0, NULL, va, NULL), "cuLaunchKernel");
		check(cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, NULL, fa, NULL), "cuLaunchKernel");
		printf("drv_app: rdc_vadd and rdc_fill<<<1, 64>>> from relocatable device code\n");
		check(cuModuleUnload(mod), "cuModuleUnload");
		check(cuCtxDestroy(ctx), "cuCtxDestroy");
		for (int i = 0; i < 8; i++)
			free(bufs[i]);
		free(image);
		return 0;
	}
	if (!strcmp(mode, "mem")) {
		check(cuModuleLoadData(&mod, image), "cuModuleLoadData");
		check(cuModuleGetFunction(&add_one, mod, add_one_name), "cuModuleGetFunction");
		mem_launches(add_one);
		check(cuModuleUnload(mod), "cuModuleUnload");
		check(cuCtxDestroy(ctx), "cuCtxDestroy");
		free(image);
		return 0;
	}
	if (!strcmp(mode, "module") || !strcmp(mode, "noclean") || !strcmp(mode, "many") ||
	    !strcmp(mode, "primary") || !strcmp(mode, "segv") || !strcmp(mode, "abort") ||
	    !strcmp(mode, "streams") || !strcmp(mode, "live-graph") || !strcmp(mode, "graphs") ||
	    !strcmp(mode, "rename")) {
		check(cuModuleLoadData(&mod, image), "cuModuleLoadData");
	} else if (!strcmp(mode, "live") || !strcmp(mode, "live-twodev")) {
		/* DRV_APP_MAXREG: loaded with CU_JIT_MAX_REGISTERS, as a
		 * program that shapes its code does */
		const char *mr = getenv("DRV_APP_MAXREG");
		CUjit_option o[] = { CU_JIT_MAX_REGISTERS };
		void *v[] = { (void *)(uintptr_t)(mr ? strtoul(mr, NULL, 10) : 0) };
		check(cuModuleLoadDataEx(&mod, image, mr ? 1 : 0, o, v), "cuModuleLoadDataEx");
	} else if (!strcmp(mode, "modex")) {
		char info[256] = "";
		CUjit_option o[] = { CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES };
		void *v[] = { info, (void *)(uintptr_t)sizeof(info) };
		check(cuModuleLoadDataEx(&mod, image, 2, o, v), "cuModuleLoadDataEx");
	} else if (!strcmp(mode, "modexreg")) {
		CUjit_option o[] = { CU_JIT_MAX_REGISTERS };
		void *v[] = { (void *)(uintptr_t)64 };
		check(cuModuleLoadDataEx(&mod, image, 1, o, v), "cuModuleLoadDataEx");
	} else if (!strcmp(mode, "file")) {
		check(cuModuleLoad(&mod, argv[2]), "cuModuleLoad");
	} else if (!strcmp(mode, "link")) {
		CUlinkState ls;
		void *cubin;
		size_t size;
		check(cuLinkCreate(0, NULL, NULL, &ls), "cuLinkCreate");
		check(cuLinkAddData(ls, CU_JIT_INPUT_PTX, image, strlen(image) + 1, "kern.ptx", 0,
				    NULL, NULL), "cuLinkAddData");
		check(cuLinkComplete(ls, &cubin, &size), "cuLinkComplete");
		check(cuModuleLoadData(&mod, cubin), "cuModuleLoadData");
		check(cuLinkDestroy(ls), "cuLinkDestroy");
	} else if (strcmp(mode, "library") && strcmp(mode, "live-lib")) {
		fprintf(stderr, "drv_app: unknown mode %s\n", mode);
		return 2;
	}
	if (lib) {
		CUkernel k1, k2;
		check(cuLibraryGetKernel(&k1, lib, add_one_name), "cuLibraryGetKernel");
		check(cuLibraryGetKernel(&k2, lib, "_Z5scalePffi"), "cuLibraryGetKernel");
		add_one = (CUfunction)k1; /* a CUkernel may stand for a CUfunction */
		scale = (CUfunction)k2;
	} else {
		check(cuModuleGetFunction(&add_one, mod, add_one_name), "cuModuleGetFunction");
		check(cuModuleGetFunction(&scale, mod, "_Z5scalePffi"), "cuModuleGetFunction");
	}
	printf("drv_app: loaded (%s)\n", mode);

	int n = 256;
	float a = 2.0f, host[256];
	for (int i = 0; i < n; i++)
		host[i] = (float)i;
	CUdeviceptr buf;
	check(cuMemAlloc(&buf, sizeof(host)), "cuMemAlloc");
	check(cuMemcpyHtoD(buf, host, sizeof(host)), "cuMemcpyHtoD");
	void *args1[] = { &buf, &n };
	void *args2[] = { &buf, &a, &n };
	if (!strcmp(mode, "streams")) {
		stream_launches(add_one, scale, buf, argc == 4 && !strcmp(argv[3], "exit"));
		check(cuMemFree(buf), "cuMemFree");
		check(cuModuleUnload(mod), "cuModuleUnload");
		check(cuCtxDestroy(ctx), "cuCtxDestroy");
		printf("drv_app: done\n");
		free(image);
		return 0;
	}
	if (!strcmp(mode, "segv") || !strcmp(mode, "abort")) {
		/* 10 synchronised launches, then the program crashes */
		for (int i = 0; i < 10; i++) {
			check(cuLaunchKernel(add_one, 4, 1, 1, 64, 1, 1, 0, NULL, args1, NULL),
			      "cuLaunchKernel");
			check(cuCtxSynchronize(), "cuCtxSynchronize");
		}
		printf("drv_app: add_one<<<4, 64>>> x10, then %s\n", mode);
		fflush(stdout);
		if (!strcmp(mode, "abort"))
			abort();
		*(volatile int *)(uintptr_t)argc = 0; /* SIGSEGV */
		return 1;
	}
	if (!strcmp(mode, "live") || !strcmp(mode, "live-graph") || !strcmp(mode, "live-lib") ||
	    !strcmp(mode, "live-twodev")) {
		CUcontext c2 = NULL;
		if (!strcmp(mode, "live-twodev")) { /* scale from a module on device 1 */
			CUdevice d1;
			CUmodule m2;
			check(cuDeviceGet(&d1, 1), "cuDeviceGet");
			check(cuCtxCreate(&c2, NULL, 0, d1), "cuCtxCreate");
			check(cuModuleLoadData(&m2, image), "cuModuleLoadData");
			check(cuModuleGetFunction(&scale, m2, "_Z5scalePffi"), "cuModuleGetFunction");
			check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
		}
		/* a module with a launch counter (kern_vars.cu) starts it at
		 * 1000 and prints what its kernels added */
		CUdeviceptr runs;
		unsigned v = 1000;
		size_t bytes;
		bool vars = (lib ? cuLibraryGetGlobal(&runs, &bytes, lib, "fk_runs")
				 : cuModuleGetGlobal(&runs, &bytes, mod, "fk_runs")) == CUDA_SUCCESS;
		if (vars)
			check(cuMemcpyHtoD(runs, &v, sizeof(v)), "cuMemcpyHtoD");
		live_launches(add_one, scale, args1, args2, argc == 4 ? atol(argv[3]) : 0,
			      !strcmp(mode, "live-graph"), c2);
		if (vars) {
			check(cuMemcpyDtoH(&v, runs, sizeof(v)), "cuMemcpyDtoH");
			printf("drv_app: fk_runs %u\n", v - 1000);
		}
		return 0;
	}
	if (!strcmp(mode, "graphs")) { /* add_one's graph 3 times, scale's 2 */
		graphs_make(add_one, scale, args1, args2);
		for (int i = 0; i < 5; i++)
			check(cuGraphLaunch(i < 3 ? gadd : gscale, gs), "cuGraphLaunch");
		check(cuStreamSynchronize(gs), "cuStreamSynchronize");
		printf("drv_app: graphs replayed 5 times\n");
		return 0;
	}
	if (!strcmp(mode, "rename")) {
		rename_launches(add_one, args1);
		return 0;
	}
	if (!strcmp(mode, "many")) {
		long times = argc >= 4 ? atol(argv[3]) : 5000;
		bool burst = argc == 5 && !strcmp(argv[4], "burst");
		for (long i = 0; i < times; i++) {
			check(cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, NULL, args1, NULL),
			      "cuLaunchKernel");
			if (!burst && i % 20 == 19) /* 10 KiB of records per 2 ms at most */
				nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
		}
		printf("drv_app: add_one<<<1, 32>>> x%ld\n", times);
	}
	for (int i = 0; i < 3; i++) {
		check(cuLaunchKernel(add_one, 4, 1, 1, 64, 1, 1, 0, NULL, args1, NULL),
		      "cuLaunchKernel");
		printf("drv_app: add_one<<<4, 64>>>\n");
		if (i == 0 && !strcmp(mode, "primary")) {
			CUcontext p;
			check(cuDevicePrimaryCtxRetain(&p, dev), "cuDevicePrimaryCtxRetain");
			check(cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");
			printf("drv_app: the primary context retained and released\n");
		}
	}
	check(cuLaunchKernel(scale, 2, 1, 1, 8, 4, 1, 0, NULL, args2, NULL), "cuLaunchKernel");
	printf("drv_app: scale<<<2, (8, 4)>>>\n");
	check(cuCtxSynchronize(), "cuCtxSynchronize");
	if (!strcmp(mode, "noclean")) {
		printf("drv_app: exit without cleaning up\n");
		free(image);
		exit(0);
	}
	check(cuMemFree(buf), "cuMemFree");
	if (lib)
		check(cuLibraryUnload(lib), "cuLibraryUnload");
	else
		check(cuModuleUnload(mod), "cuModuleUnload");
	check(cuCtxDestroy(ctx), "cuCtxDestroy");
	printf("drv_app: done\n");
	free(image);
	return 0;
}
