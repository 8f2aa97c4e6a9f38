/* struct rt_ctx, shared by rt_ctx.c (setup) and rt_snap.c (snapshots,
 * rings, teardown). */
#ifndef GPUX_RT_CTX_PRIV_H
#define GPUX_RT_CTX_PRIV_H

#include "rt.h"
#include "gpux_dev.h"
#include "sass_ptx.h" /* the SASS patch module's table */

#define MAX_CTX 16
#define MAX_MODS 256
/* printf rings (rt_ring.c): NRINGS of RING_SIZE bytes in device memory
 * after their words */
#define NRINGS 128
#define RING_SIZE (1u << 16)
#define RINGS_WORDS (NRINGS * GPUX_RING_STRIDE)
#define HOSTCTL 4096 /* the pinned, mapped control page */

/* Pinned host page layout. */
#define H_EXIT 8
#define H_CLOCK 16

/* The clock's samples (rt_clock.c): device minus host time was off at
 * host time at, and moves by rate ns a ns. */
struct rt_clock {
	int64_t off, anchor_off;
	uint64_t at, anchor_at, next;    /* next: when to sample again */
	uint64_t trust;                  /* the longest exchange taken */
	unsigned rejects;                /* exchanges refused in a row */
	double rate;
	unsigned samples;
	bool launched;                   /* a sampler is queued or waiting for go */
	CUstream stream;                 /* where samples after the first run */
};

struct rt_ctx {
	CUcontext ctx;
	int device;
	bool primary;           /* the device's primary context */
	bool dead;
	bool failed;            /* setup failed: never tried again */
	struct gpux_sess_slot *slot;
	CUstream stream;
	CUdeviceptr store;     /* mirrors the slot from the first map area */
	uint64_t base, size;
	void *staging;         /* pinned copy target (rt_snap.c), staging_size bytes */
	uint64_t staging_size;
	unsigned char *host;   /* pinned and mapped: the control page */
	CUdeviceptr host_dev;
	CUdeviceptr rings;     /* the printf rings' words, then their bytes; 0: none */
	struct rt_ring_stage *stage; /* their pinned copies */
	uint64_t tails[NRINGS]; /* bytes of each ring consumed */
	bool ring_broken;      /* a damaged ring: read no more */
	uint64_t gone_drops[64]; /* per map: drops of unloaded modules */
	uint64_t dev_drops;    /* records the device ring had no room for */
	uint64_t fwd_drops;    /* records the slot's event ring had no room for */
	CUevent done_ev;       /* completion point; NULL: none */
	int pending;           /* done_ev recorded, not yet seen complete */
	uint64_t last_snap_ns; /* when the last snapshot was published */
	struct gpux_clock clock; /* what a module set up now is given */
	bool clock_done;
	struct rt_clock clk;
	uint64_t push_pos;      /* rt_host_push: the touch log pushed so far */
	unsigned char *keyed[64]; /* per shared map: slots whose key it has */
	/* SASS patching (rt_sass.c): 0 not tried, 1 set up, -1 failed; the
	 * patch module's variables (enum gpux_sass_table); its clock
	 * sampler; the kernels' records, RECS_PER_CHUNK a chunk */
	int sass;
	CUdeviceptr sass_tab[GPUX_SASS_T_MAPS + GPUX_SASS_MAX_MAPS];
	CUfunction sass_sampler;
	CUdeviceptr *sass_chunks;
	int nsass_chunks;
	uint32_t sass_used;
	CUmodule mods[MAX_MODS];
	CUlibrary libs[MAX_MODS];
	int nmods, nlibs;
};

extern struct rt_ctx ctxs[MAX_CTX];

/* A module's or a library's global by name, in the current context. */
typedef CUresult (*global_fn)(CUdeviceptr *, size_t *, void *, const char *);
CUresult rt_mod_global(CUdeviceptr *d, size_t *sz, void *mod, const char *name);
CUresult rt_lib_global(CUdeviceptr *d, size_t *sz, void *lib, const char *name);
/* Global `name` of x's module or library i, i below nmods + nlibs (the
 * modules, then the libraries), in the current context. */
CUresult rt_ctx_global(const struct rt_ctx *x, int i, const char *name, CUdeviceptr *d,
		       size_t *sz);

/* Modules, libraries and the SASS patch module of x: what
 * rt_ctx_global takes i below. */
static inline int rt_ctx_units(const struct rt_ctx *x)
{
	return x->nmods + x->nlibs + (x->sass > 0);
}

/* The context current on this thread, made a session context if it is
 * new (NULL: none, or it could not be); rt_lock held. */
struct rt_ctx *rt_ctx_current(void);
/* The SASS patch module's descriptors, control block and clock set up
 * (rt_sass_global finds them), as a patched module's are. */
bool rt_ctx_setup_sass(struct rt_ctx *x);
/* rt_sass.c: the patch module's variable `name` in context x (handle);
 * records off (the controller is gone); the end of a context. */
CUresult rt_sass_global(CUdeviceptr *d, size_t *sz, void *handle, const char *name);
void rt_sass_ctx_off(struct rt_ctx *x);
void rt_sass_finish(struct rt_ctx *x);
/* Context c is gone: what was known of its modules goes (rt_lock). */
void rt_sass_ctx_gone(CUcontext c);

/* Before module or library h goes: its map drop counters into
 * x->gone_drops (rt_snap.c). */
void rt_ctx_retire(struct rt_ctx *x, void *h, bool lib);

/* The clock (rt_clock.c): the first offset, from the sampling kernel f,
 * before a context's first module is set up; then samples and pushes of
 * the offset as it moves, from the runtime's loop. */
void rt_clock_calibrate(struct rt_ctx *x, CUfunction f);
void rt_clock_poll(struct rt_ctx *x);
extern int nctx;

/* rt_ring.c: the printf rings. alloc sets them up when the probes
 * printf, in x's stream (x->rings stays 0 without); queue_words queues a copy of every ring's words on x's
 * stream, after which drops sums their drop counters; drain forwards
 * the published records into the slot's event ring. */
CUresult rt_ring_alloc(struct rt_ctx *x);
bool rt_ring_queue_words(struct rt_ctx *x);
uint64_t rt_ring_drops(const struct rt_ctx *x);
void rt_ring_drain(struct rt_ctx *x);
/* The live, set-up context c, or NULL (rt_lock held). */
struct rt_ctx *rt_ctx_of(CUcontext c);

#endif
