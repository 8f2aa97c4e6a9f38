/* In sanitized builds only (GPUX_SANITIZE): LeakSanitizer's defaults for
 * gpux. Its scan of dynamic TLS at exit reads a bogus entry once libLLVM
 * (libgpux-host.so) is loaded beside libelf, and its tracer faults
 * ("DTLS 6 at 0x2ae", "Tracer caught signal 11"): gcc 12's libsanitizer
 * misreads glibc 2.36's dynamic TLS there. gpux keeps no heap pointer
 * only in TLS, so leak checking stays on without that scan; the glibc
 * TLS block the default suppressions then hide is not reported, nor the
 * loader's own list of a dlopen'ed module's dependencies, which only
 * that scan found. The traced programs' processes keep LeakSanitizer's
 * own defaults. */
const char *__lsan_default_options(void);

const char *__lsan_default_options(void)
{
	return "use_tls=0:print_suppressions=0";
}

const char *__lsan_default_suppressions(void);

const char *__lsan_default_suppressions(void)
{
	return "leak:_dl_map_object_deps\n";
}
