/* probe_tgt's USDT probe behind a semaphore: it fires only while a
 * tracer has raised the semaphore (sys/sdt.h makes every probe of a file
 * that asks for semaphores have one, hence a file of its own). */
#if defined(__has_include)
#if __has_include(<sys/sdt.h>)
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

void usdt_guarded(int i);

__attribute__((used, section(".probes"))) unsigned short gpux_tgt_guarded_semaphore;

__attribute__((noinline)) void usdt_guarded(int i)
{
	if (gpux_tgt_guarded_semaphore)
		DTRACE_PROBE1(gpux_tgt, guarded, i * 10);
}
#endif
#endif
