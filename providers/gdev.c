/* gdev: probes inside CUDA kernels, spliced into their PTX or SASS by
 * the runtime in the traced program; no host program. */
#include "provider.h"

#define DEV_ACTS ACTION_BIT(ACT_DEV_PREFETCH) /* an L2 prefetch */

extern const struct provider_unit gdev_unit;

static const struct provider providers[] = {
	{ &gdev_unit, "gdev", NULL, PLACE_DEVICE, RUNNER_TARGET, SYN_EVENT,
	  "inside CUDA kernels on the GPU, warp-collective", false,
	  ATTACH_DEVICE, false },
};

static const struct field no_fields[] = { FIELDS_END };

static const struct field gdev_access_fields[] = {
	{ "addr", TYPE_U64, UNIF_VARYING, "address accessed by this lane" },
	{ "size", TYPE_U32, UNIF_UNIFORM,
	  "bytes per lane of the memory instruction" },
	{ "store", TYPE_INT(8, false), UNIF_UNIFORM, "1 for stores" },
	{ "atomic", TYPE_INT(8, false), UNIF_UNIFORM,
	  "1 for atomic and reduction instructions" },
	FIELDS_END,
};

static const struct field gdev_func_fields[] = {
	{ "func", TYPE_STR, UNIF_UNIFORM, "device function name" },
	FIELDS_END,
};

static const struct event events[] = {
	{ &providers[0], "kernel_entry", PLACE_DEVICE, FILTER_KERNEL, no_fields, 0, DEV_ACTS,
	  "kernel start, once per thread (after parameter loads)", DEV_PATH_PTX | DEV_PATH_SASS, 0, 0, 0, NULL, 0 },
	{ &providers[0], "kernel_exit", PLACE_DEVICE, FILTER_KERNEL, no_fields, 0, DEV_ACTS,
	  "kernel end, once per thread, on every exit path", DEV_PATH_PTX | DEV_PATH_SASS, 0, 0, 0, NULL, 0 },
	{ &providers[0], "access", PLACE_DEVICE, FILTER_KERNEL, gdev_access_fields,
	  0, DEV_ACTS, "global load/store/atomic, once per thread per instruction",
	  DEV_PATH_PTX | DEV_PATH_SASS, 0, 0, 0, NULL, 0 },
	{ &providers[0], "func_entry", PLACE_DEVICE, FILTER_FUNC, gdev_func_fields,
	  0, DEV_ACTS, "device function entry, once per thread", DEV_PATH_PTX, 0, 0, 0, NULL, 0 },
	{ &providers[0], "func_exit", PLACE_DEVICE, FILTER_FUNC, gdev_func_fields,
	  0, DEV_ACTS, "device function return, once per thread", DEV_PATH_PTX, 0, 0, 0, NULL, 0 },
};

const struct provider_unit gdev_unit = {
	.providers = providers,
	.nproviders = sizeof(providers) / sizeof(providers[0]),
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.resolve = spec_resolve_events,
	.usage = NULL,
	.section = NULL,
};
