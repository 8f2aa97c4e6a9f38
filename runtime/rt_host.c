/* cuda: events: the session's host programs, run in the userspace BPF
 * VM inside the traced process (placeholder until the VM is wired: with
 * GPUX_RT_TRACE=1 every event is wanted and logged). */
#include "rt.h"

uint32_t rt_cev_wanted;

__attribute__((constructor)) static void placeholder_init(void)
{
	if (rt_tracing())
		rt_cev_wanted = ~0u;
}

void rt_cev_fire(enum gpux_cev ev, const void *ctx, size_t size, const char *ptx_name)
{
	(void)ptx_name;
	static const char *const names[] = GPUX_CEV_NAMES;
	if (ev == GPUX_CEV_LAUNCH)
		RT_TRACE("cuda:launch %s", ((const struct gpux_cev_launch *)ctx)->kernel);
	else
		RT_TRACE("cuda:%s (%zu bytes)", names[ev], size);
}
