/* Sanitizer build only: preloaded after the ASan runtime and before the
 * ASan-built libgpux-rt.so, which defines dlsym. ASan looks up the
 * functions it intercepts with dlsym(RTLD_NEXT/RTLD_DEFAULT, ...) while
 * it initializes, and would land in the runtime's instrumented dlsym
 * before its shadow memory exists (a crash). This dlsym, built without
 * the sanitizers, answers those lookups itself and hands every lookup
 * in a real handle (what the tests exercise: dlsym(libcuda,
 * "cuGetProcAddress_v2")) to the runtime's dlsym. */
#include <dlfcn.h>
#include <stddef.h>

void *dlsym(void *handle, const char *name)
{
	static void *(*real)(void *, const char *);
	static void *(*next)(void *, const char *);
	if (!real)
		real = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!real)
		real = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	if (!real)
		return NULL;
	if (handle == RTLD_NEXT || handle == RTLD_DEFAULT)
		return real(handle, name);
	if (!next)
		next = (void *(*)(void *, const char *))real(RTLD_NEXT, "dlsym");
	return next(handle, name);
}
