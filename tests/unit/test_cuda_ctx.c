/* The cuda: event contexts the runtime builds (abi/cuda_events.h)
 * against the layout the host codegen reads (llvm_host.h: the catalog's
 * fields in order, 8-aligned, strings char[HOST_STR_MAX], dim3 in 16
 * bytes; cuda:launch's and cuda:kernel_end's kernel id after them). Prints "N passed, N
 * failed"; exits non-zero on any failure. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "cuda_events.h"

static int passed, failed;

struct member {
	const char *name;
	size_t off;
};

struct layout {
	const char *event;
	const struct member *m;
	size_t size;
};

#define M(s, f) { #f, offsetof(struct s, f) }
#define A(i) { "arg" #i, offsetof(struct gpux_cev_launch, args) + 8 * (i) }
static const struct member launch[] = { M(gpux_cev_launch, kernel), M(gpux_cev_launch, grid),
	M(gpux_cev_launch, block), M(gpux_cev_launch, shmem), M(gpux_cev_launch, stream),
	M(gpux_cev_launch, nargs),
	A(0), A(1), A(2), A(3), A(4), A(5), A(6), A(7), A(8), A(9), A(10), A(11),
	M(gpux_cev_launch, kernel_id), { NULL, 0 } };
static const struct member malloc_[] = { M(gpux_cev_malloc, ptr), M(gpux_cev_malloc, bytes),
	M(gpux_cev_malloc, managed), { NULL, 0 } };
static const struct member free_[] = { M(gpux_cev_free, ptr), { NULL, 0 } };
static const struct member memcpy_[] = { M(gpux_cev_memcpy, dst), M(gpux_cev_memcpy, src),
	M(gpux_cev_memcpy, bytes), M(gpux_cev_memcpy, kind), M(gpux_cev_memcpy, stream),
	M(gpux_cev_memcpy, async), { NULL, 0 } };
static const struct member sync_[] = { M(gpux_cev_sync, stream), { NULL, 0 } };
static const struct member module[] = { M(gpux_cev_module_load, module),
	M(gpux_cev_module_load, bytes), M(gpux_cev_module_load, ptx), { NULL, 0 } };

static const struct member kend[] = { M(gpux_cev_kernel_end, kernel),
	M(gpux_cev_kernel_end, stream), M(gpux_cev_kernel_end, grid),
	M(gpux_cev_kernel_end, block), M(gpux_cev_kernel_end, shmem),
	M(gpux_cev_kernel_end, start), M(gpux_cev_kernel_end, end),
	M(gpux_cev_kernel_end, duration), M(gpux_cev_kernel_end, kernel_id), { NULL, 0 } };

static const struct member graph[] = { M(gpux_cev_graph_launch, graph),
	M(gpux_cev_graph_launch, stream), M(gpux_cev_graph_launch, nodes),
	M(gpux_cev_graph_launch, kernels), { NULL, 0 } };

static const struct layout layouts[GPUX_CEV_COUNT] = {
	[GPUX_CEV_LAUNCH] = { "launch", launch, sizeof(struct gpux_cev_launch) },
	[GPUX_CEV_MALLOC] = { "malloc", malloc_, sizeof(struct gpux_cev_malloc) },
	[GPUX_CEV_FREE] = { "free", free_, sizeof(struct gpux_cev_free) },
	[GPUX_CEV_MEMCPY] = { "memcpy", memcpy_, sizeof(struct gpux_cev_memcpy) },
	[GPUX_CEV_SYNC] = { "sync", sync_, sizeof(struct gpux_cev_sync) },
	[GPUX_CEV_MODULE_LOAD] = { "module_load", module, sizeof(struct gpux_cev_module_load) },
	[GPUX_CEV_KERNEL_END] = { "kernel_end", kend, sizeof(struct gpux_cev_kernel_end) },
	[GPUX_CEV_GRAPH_LAUNCH] = { "graph_launch", graph, sizeof(struct gpux_cev_graph_launch) },
};

static void expect(int ok, const char *ev, const char *what, size_t want, size_t got)
{
	if (ok) {
		passed++;
		return;
	}
	failed++;
	fprintf(stderr, "FAIL cuda:%s %s: codegen offset %zu, struct offset %zu\n", ev, what,
		want, got);
}

int main(void)
{
	static const char *const names[] = GPUX_CEV_NAMES;
	const struct provider *cuda = catalog_provider("cuda");
	for (int e = 0; e < GPUX_CEV_COUNT; e++) {
		const struct layout *l = &layouts[e];
		expect(!strcmp(names[e], l->event), l->event, "name", 0, 0);
		const struct event *ev = catalog_event(cuda, l->event);
		if (!ev) {
			expect(0, l->event, "in the catalog", 0, 0);
			continue;
		}
		size_t off = 0;
		const struct member *m = l->m;
		for (const struct field *f = ev->fields; f->name; f++, m++) {
			int same = m->name && !strcmp(m->name, f->name);
			expect(same, l->event, f->name, off, same ? m->off : 0);
			if (same)
				expect(m->off == off, l->event, f->name, off, m->off);
			off += f->type.kind == TY_STR ? GPUX_CEV_STR : f->type.kind == TY_DIM3 ? 16 : 8;
		}
		if (e == GPUX_CEV_LAUNCH || e == GPUX_CEV_KERNEL_END) { /* the hidden kernel id */
			expect(m->name && !strcmp(m->name, "kernel_id") && m->off == off, l->event,
			       "kernel_id", off, m->name ? m->off : 0);
			off += 8;
		}
		expect(l->size == off, l->event, "size", off, l->size);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
