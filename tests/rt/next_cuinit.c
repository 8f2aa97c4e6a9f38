/* Another interposer of the driver, preloaded after libgpux-rt.so (as
 * gpux puts the runtime first in LD_PRELOAD): its cuInit finds the next
 * cuInit with dlsym(RTLD_NEXT), the usual way, and forwards to it. */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

CUresult cuInit(unsigned flags)
{
	static int depth;
	CUresult (*next)(unsigned) = (CUresult(*)(unsigned))dlsym(RTLD_NEXT, "cuInit");
	if (!next || next == cuInit || depth++) {
		fprintf(stderr, "next_cuinit: dlsym(RTLD_NEXT, \"cuInit\") gave %s\n",
			next ? "this library's own cuInit" : "nothing");
		_exit(3);
	}
	fprintf(stderr, "next_cuinit: cuInit forwarded\n");
	CUresult rc = next(flags);
	depth--;
	return rc;
}
