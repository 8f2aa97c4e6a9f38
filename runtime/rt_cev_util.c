/* What the cuda: event hooks share: the field log of GPUX_RT_TRACE=1
 * and the module_load context, read from the image the program gave. */
#include "rt_hooks.h"

#include <string.h>

#include "fatbin.h"

typedef unsigned long long ull;

/* One line of the context's fields, so tests can check what the hooks
 * built; the dispatcher logs the event itself. */
static void trace_fields(enum gpux_cev ev, const void *ctx)
{
	switch (ev) {
	case GPUX_CEV_LAUNCH: {
		const struct gpux_cev_launch *c = ctx;
		rt_log("cev launch kernel=%s grid=%u,%u,%u block=%u,%u,%u shmem=%llu "
			"stream=0x%llx id=%lld", c->kernel, c->grid[0], c->grid[1], c->grid[2],
			c->block[0], c->block[1], c->block[2], (ull)c->shmem, (ull)c->stream,
			c->kernel_id == UINT32_MAX ? -1LL : (long long)c->kernel_id);
		break;
	}
	case GPUX_CEV_MALLOC: {
		const struct gpux_cev_malloc *c = ctx;
		rt_log("cev malloc ptr=0x%llx bytes=%llu managed=%llu", (ull)c->ptr,
			(ull)c->bytes, (ull)c->managed);
		break;
	}
	case GPUX_CEV_FREE:
		rt_log("cev free ptr=0x%llx", (ull)((const struct gpux_cev_free *)ctx)->ptr);
		break;
	case GPUX_CEV_MEMCPY: {
		const struct gpux_cev_memcpy *c = ctx;
		rt_log("cev memcpy dst=0x%llx src=0x%llx bytes=%llu kind=%s stream=0x%llx "
			"async=%llu", (ull)c->dst, (ull)c->src, (ull)c->bytes, c->kind,
			(ull)c->stream, (ull)c->async);
		break;
	}
	case GPUX_CEV_SYNC:
		rt_log("cev sync stream=0x%llx", (ull)((const struct gpux_cev_sync *)ctx)->stream);
		break;
	case GPUX_CEV_MODULE_LOAD: {
		const struct gpux_cev_module_load *c = ctx;
		rt_log("cev module_load module=0x%llx bytes=%llu ptx=%llu", (ull)c->module,
			(ull)c->bytes, (ull)c->ptx);
		break;
	}
	case GPUX_CEV_KERNEL_END: {
		const struct gpux_cev_kernel_end *c = ctx;
		rt_log("cev kernel_end kernel=%s grid=%u,%u,%u block=%u,%u,%u shmem=%llu "
			"stream=0x%llx start=%llu end=%llu duration=%llu", c->kernel, c->grid[0],
			c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2],
			(ull)c->shmem, (ull)c->stream, (ull)c->start, (ull)c->end,
			(ull)c->duration);
		break;
	}
	default:
		break;
	}
}

void rt_cev_emit(enum gpux_cev ev, const void *ctx, size_t size, const char *ptx_name)
{
	if (rt_tracing())
		trace_fields(ev, ctx);
	rt_cev_fire(ev, ctx, size, ptx_name);
}

/* A fatbin container's size and whether an element is PTX (compressed
 * or not: the kind says it without decompressing). */
static void fatbin_info(const unsigned char *b, uint64_t *bytes, uint64_t *ptx)
{
	size_t len;
	if (gpux_fb_container_size(b, GPUX_FB_HEADER_SIZE, &len))
		return;
	*bytes = len;
	struct gpux_fb_iter it;
	struct gpux_fb_elem e;
	gpux_fb_iter_init(&it, b, len);
	while (gpux_fb_next(&it, &e) == GPUX_FB_OK)
		if (e.kind == GPUX_FB_PTX) {
			*ptx = 1;
			return;
		}
}

/* Size and PTX-ness of an image: PTX text, a fatbin (or the wrapper
 * host code registers), an ELF cubin; 0 and 0 for anything else. */
static void image_info(const void *image, size_t size, uint64_t *bytes, uint64_t *ptx)
{
	const unsigned char *b = image;
	uint32_t magic;
	*bytes = size;
	*ptx = 0;
	if (!image)
		return;
	memcpy(&magic, b, 4);
	if (magic == GPUX_FB_WRAPPER_MAGIC) {
		struct gpux_fb_wrapper w;
		if (!gpux_fb_wrapper_parse(b, GPUX_FB_WRAPPER_SIZE, &w) && w.data)
			fatbin_info((const unsigned char *)(uintptr_t)w.data, bytes, ptx);
		return;
	}
	if (magic == GPUX_FB_MAGIC) {
		fatbin_info(b, bytes, ptx);
		return;
	}
	size_t n = size;
	enum rt_img_kind k = rt_image_classify(image, &n);
	if (k == RT_IMG_ELF || k == RT_IMG_PTX) {
		*bytes = n;
		*ptx = k == RT_IMG_PTX;
	}
}

void rt_cev_module(const void *handle, const void *image, size_t size)
{
	struct gpux_cev_module_load c = { .module = (uint64_t)(uintptr_t)handle };
	image_info(image, size, &c.bytes, &c.ptx);
	rt_cev_emit(GPUX_CEV_MODULE_LOAD, &c, sizeof c, NULL);
}
