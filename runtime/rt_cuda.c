/* The real driver entry points the runtime itself calls, and the real
 * dlsym: this library defines dlsym (rt_interpose.c), so every lookup of
 * our own must bypass it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt.h"

#include <dlfcn.h>
#include <glob.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

struct rt_cu rt_cu;

void *rt_real_dlsym(void *handle, const char *name)
{
	static void *(*real)(void *, const char *);
	if (!real) {
		/* glibc 2.34 moved dlsym into libc; older ones, and other
		 * architectures' base versions, as fallbacks */
		static const char *const vers[] = { "GLIBC_2.34", "GLIBC_2.2.5",
						    "GLIBC_2.17", "GLIBC_2.0" };
		for (size_t i = 0; !real && i < sizeof(vers) / sizeof(vers[0]); i++)
			real = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym",
								       vers[i]);
		if (!real)
			return NULL;
	}
	return real(handle, name);
}

void *rt_cuda_sym(const char *name)
{
	static void *lib;
	if (!lib)
		lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!lib)
		return NULL;
	return rt_real_dlsym(lib, name);
}

#define CU_SYM(field, sym)                                               \
	do {                                                             \
		*(void **)&rt_cu.field = rt_cuda_sym(sym);              \
		if (!rt_cu.field)                                       \
			return false;                                   \
	} while (0)

static bool resolve(void)
{
	CU_SYM(GetErrorString, "cuGetErrorString");
	CU_SYM(CtxGetCurrent, "cuCtxGetCurrent");
	CU_SYM(CtxSetCurrent, "cuCtxSetCurrent");
	CU_SYM(CtxGetDevice, "cuCtxGetDevice");
	CU_SYM(CtxSynchronize, "cuCtxSynchronize");
	CU_SYM(DeviceGet, "cuDeviceGet");
	CU_SYM(DeviceGetAttribute, "cuDeviceGetAttribute");
	CU_SYM(DevicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState");
	CU_SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	CU_SYM(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
	CU_SYM(MemAlloc, "cuMemAlloc_v2");
	CU_SYM(MemFree, "cuMemFree_v2");
	CU_SYM(MemsetD8Async, "cuMemsetD8Async");
	CU_SYM(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
	CU_SYM(ThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode");
	CU_SYM(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
	CU_SYM(MemHostAlloc, "cuMemHostAlloc");
	CU_SYM(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2");
	CU_SYM(MemFreeHost, "cuMemFreeHost");
	CU_SYM(StreamCreate, "cuStreamCreate");
	CU_SYM(StreamDestroy, "cuStreamDestroy_v2");
	CU_SYM(StreamSynchronize, "cuStreamSynchronize");
	CU_SYM(ModuleGetGlobal, "cuModuleGetGlobal_v2");
	CU_SYM(ModuleGetFunction, "cuModuleGetFunction");
	CU_SYM(LibraryGetGlobal, "cuLibraryGetGlobal");
	CU_SYM(LibraryGetKernel, "cuLibraryGetKernel");
	CU_SYM(KernelGetFunction, "cuKernelGetFunction");
	CU_SYM(LaunchKernel, "cuLaunchKernel");
	*(void **)&rt_cu.EventCreate = rt_cuda_sym("cuEventCreate");
	*(void **)&rt_cu.EventRecord = rt_cuda_sym("cuEventRecord");
	*(void **)&rt_cu.EventQuery = rt_cuda_sym("cuEventQuery");
	*(void **)&rt_cu.StreamIsCapturing = rt_cuda_sym("cuStreamIsCapturing");
	/* CUDA 12.8 added _v2 (what cuda.h 13 names cuEventElapsedTime) */
	if (!(*(void **)&rt_cu.EventElapsedTime = rt_cuda_sym("cuEventElapsedTime_v2")))
		*(void **)&rt_cu.EventElapsedTime = rt_cuda_sym("cuEventElapsedTime");
	*(void **)&rt_cu.EventDestroy = rt_cuda_sym("cuEventDestroy_v2");
	*(void **)&rt_cu.StreamBatchMemOp = rt_cuda_sym("cuStreamBatchMemOp_v2");
	*(void **)&rt_cu.FuncGetModule = rt_cuda_sym("cuFuncGetModule");
	*(void **)&rt_cu.FuncGetName = rt_cuda_sym("cuFuncGetName");
	*(void **)&rt_cu.KernelGetName = rt_cuda_sym("cuKernelGetName");
	*(void **)&rt_cu.ModuleGetFunctionCount = rt_cuda_sym("cuModuleGetFunctionCount");
	*(void **)&rt_cu.ModuleEnumerateFunctions = rt_cuda_sym("cuModuleEnumerateFunctions");
	*(void **)&rt_cu.LibraryGetModule = rt_cuda_sym("cuLibraryGetModule");
	*(void **)&rt_cu.KernelGetLibrary = rt_cuda_sym("cuKernelGetLibrary");
	return true;
}

bool rt_cu_ready(void)
{
	static int state; /* 0 unknown, 1 ready, -1 failed */
	if (state == 0) {
		state = resolve() ? 1 : -1;
		if (state < 0)
			rt_warn("libcuda lacks entry points the runtime needs; "
				"kernels run uninstrumented");
	}
	return state > 0;
}

unsigned rt_device_arch(CUdevice dev)
{
	int major = 0, minor = 0;
	if (rt_cu.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) !=
		    CUDA_SUCCESS ||
	    rt_cu.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) !=
		    CUDA_SUCCESS)
		return 0;
	return (unsigned)(major * 10 + minor);
}

void rt_device_desc(CUdevice dev, char *buf, size_t n)
{
	typedef CUresult (*name_fn)(char *, int, CUdevice);
	typedef CUresult (*bus_fn)(char *, int, CUdevice);
	name_fn name = (name_fn)rt_cuda_sym("cuDeviceGetName");
	bus_fn bus = (bus_fn)rt_cuda_sym("cuDeviceGetPCIBusId");
	char nm[128] = "", pci[32] = "";
	if (!name || name(nm, (int)sizeof(nm), dev) != CUDA_SUCCESS)
		nm[0] = '\0';
	if (!bus || bus(pci, (int)sizeof(pci), dev) != CUDA_SUCCESS)
		pci[0] = '\0';
	snprintf(buf, n, "%s%s%s", *nm ? nm : "a CUDA device", *pci ? ", PCI " : "", pci);
}

const char *rt_cu_err(CUresult rc)
{
	const char *s = NULL;
	if (rt_cu.GetErrorString)
		rt_cu.GetErrorString(rc, &s);
	return s ? s : "unknown CUDA error";
}

CUstreamCaptureMode rt_relaxed_begin(void)
{
	CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
	if (!rt_cu.ThreadExchangeStreamCaptureMode ||
	    rt_cu.ThreadExchangeStreamCaptureMode(&m) != CUDA_SUCCESS)
		m = CU_STREAM_CAPTURE_MODE_RELAXED;
	return m;
}

bool rt_capturing(CUstream s, bool per_thread)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	if (!s && per_thread)
		s = CU_STREAM_PER_THREAD;
	return rt_cu.StreamIsCapturing && rt_cu.StreamIsCapturing(s, &st) == CUDA_SUCCESS &&
	       st != CU_STREAM_CAPTURE_STATUS_NONE;
}

bool rt_is_primary(CUcontext c, CUdevice dev)
{
	unsigned flags;
	int active = 0;
	CUcontext prim = NULL;
	if (rt_cu.DevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active ||
	    rt_cu.DevicePrimaryCtxRetain(&prim, dev) != CUDA_SUCCESS)
		return false;
	rt_cu.DevicePrimaryCtxRelease(dev);
	return prim == c;
}

void rt_relaxed_end(CUstreamCaptureMode prev)
{
	if (rt_cu.ThreadExchangeStreamCaptureMode)
		rt_cu.ThreadExchangeStreamCaptureMode(&prev);
}

void *rt_dlopen_wheel(const char *const *rel, size_t n)
{
	char exe[1024];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return NULL;
	exe[len] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	void *h = NULL;
	for (size_t i = 0; !h && i < n; i++) {
		char pat[1400];
		glob_t g;
		snprintf(pat, sizeof(pat), "%s/../lib/python3*/site-packages/%s", exe, rel[i]);
		if (glob(pat, 0, NULL, &g))
			continue;
		for (size_t k = 0; !h && k < g.gl_pathc; k++)
			h = dlopen(g.gl_pathv[k], RTLD_NOW | RTLD_GLOBAL);
		globfree(&g);
	}
	return h;
}
