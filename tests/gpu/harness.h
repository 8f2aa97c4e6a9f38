/* Shared between the harness driver (probe_harness.c) and the case table
 * (cases.c): one case, and what a run of it left in the maps and ring. */
#ifndef GPUX_TEST_HARNESS_H
#define GPUX_TEST_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "kparams.h"

#define MAX_MAPS 8

/* One `.map NAME KEY VALUE ENTRIES ; agg` line of device.bpf. */
struct map_meta {
	char name[64];
	char agg[64]; /* the comment after ';' */
	uint32_t key_size, value_size, max_entries;
	int64_t lhist_min, lhist_max, lhist_step; /* lhist() only */
	bool array; /* GPUX_MAP_ARRAY: the slot is the key (" array" in the line) */
};

/* A map after the launch: its FULL slots, in slot order. */
struct map_data {
	struct map_meta meta;
	uint32_t n;     /* entries */
	uint64_t *keys; /* n * key_size / 8 words */
	uint64_t *vals; /* n * value_size / 8 words */
	uint64_t drops;
	uint32_t busy, dead; /* slots left in those states */
};

enum base_kind {
	BASE_NONE,
	BASE_BUFFER,    /* a real 4 MiB buffer the kernel stores into */
	BASE_SYNTHETIC, /* an address nothing dereferences */
};

struct run;

/* An nvcc-compiled app (tests/gpu/apps/NAME.cu) instrumented through the
 * PTX rewriter: the harness runs its kernel from the original PTX and from
 * the rewritten one on the same seeded inputs. Kernels take (in0, [in1],
 * out, n) with float arrays. */
#define APP_MAX_FUNCS 4

/* What the app's code does per function id (the rewriter's func_id):
 * global loads and stores executed, calls made to it. */
struct app_counts {
	int n;
	uint32_t id[APP_MAX_FUNCS];
	uint64_t loads[APP_MAX_FUNCS], stores[APP_MAX_FUNCS],
		store_bytes[APP_MAX_FUNCS], calls[APP_MAX_FUNCS];
};

struct app {
	const char *name;   /* build-gpu/apps/NAME.ptx */
	const char *kernel; /* the .entry launched */
	const char *ids;    /* "FUNC=ID ...": every function of the PTX */
	uint32_t kernel_id; /* the kernel's id among ids */
	unsigned grid, block;
	uint32_t n;    /* elements */
	int nin;       /* input arrays of n floats */
	uint32_t nout; /* output floats */
	/* The host model: out (holding its initial contents) as the kernel
	 * leaves it, and the accesses and calls per function id. */
	void (*model)(const struct app *a, const float *const *in, float *out,
		      struct app_counts *c);
};

enum app_prog {
	APP_EXIT,         /* @[kernel] = count() at kernel_exit */
	APP_ACCESS,       /* @n[kernel] = count() at access */
	APP_STORE_BYTES,  /* @bytes[kernel] = sum(size) at access /store/ */
	APP_ENTRY_BLOCKS, /* @b[blockIdx.x] = count() at kernel_entry */
	APP_FUNC_ENTRY,   /* @f[kernel] = count() at func_entry */
};

struct tcase {
	const char *name;
	const char *prog; /* the gpux program */
	uint32_t mode;    /* enum kmode */
	unsigned grid, block;
	uint32_t stride;  /* KMODE_ACCESS */
	enum base_kind base;
	int rec; /* record %smid and %warpid per thread */
	int (*check)(struct run *r);
	const struct app *app; /* an app case: grid/block/mode unused */
	enum app_prog aprog;
};

struct run {
	const struct tcase *tc;
	int nsm;
	uint64_t base; /* the base the kernel used */
	uint32_t kernel_id;
	int nmaps;
	struct map_data maps[MAX_MAPS];
	const uint8_t *ring; /* the printf ring, ring_size bytes */
	uint64_t ring_size, ring_head, ring_tail, ring_drops;
	const uint32_t *smid, *warpid; /* per thread, when tc->rec */
	const struct app_counts *counts; /* app cases: the host model's */
	char msg[512];                 /* why it failed */
};

extern const struct tcase gpu_cases[];
extern const int gpu_ncases;

/* Record a failure in r->msg (the first one wins); returns 1. */
int fail(struct run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
