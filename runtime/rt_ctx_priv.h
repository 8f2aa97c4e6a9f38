/* struct rt_ctx, shared by rt_ctx.c (setup) and rt_snap.c (snapshots,
 * rings, teardown). */
#ifndef GPUX_RT_CTX_PRIV_H
#define GPUX_RT_CTX_PRIV_H

#include "rt.h"

#define MAX_CTX 16
#define MAX_MODS 256
#define RING_SIZE (1u << 20)
#define HOSTCTL 4096 /* pinned control page before the ring data */

/* Pinned host page layout. */
#define H_TAIL 0
#define H_EXIT 8
#define H_CLOCK 16

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
	void *staging;         /* pinned copy target, size bytes */
	unsigned char *host;   /* pinned: control page, then the ring data */
	CUdeviceptr host_dev;
	CUdeviceptr ring_hdr;  /* struct gpux_ring in device memory */
	uint64_t tail;
	uint64_t gone_drops[64]; /* per map: drops of unloaded modules */
	uint64_t dev_drops;    /* records the device ring had no room for */
	uint64_t fwd_drops;    /* records the slot's event ring had no room for */
	CUevent done_ev;       /* completion point; NULL: none */
	int pending;           /* done_ev recorded, not yet seen complete */
	uint64_t last_snap_ns; /* when the last snapshot was published */
	int64_t clock_off;
	bool clock_done;
	uint64_t push_pos;      /* rt_host_push: the touch log pushed so far */
	unsigned char *keyed[64]; /* per shared map: slots whose key it has */
	CUmodule mods[MAX_MODS];
	CUlibrary libs[MAX_MODS];
	int nmods, nlibs;
};

extern struct rt_ctx ctxs[MAX_CTX];

/* A module's or a library's global by name, in the current context. */
typedef CUresult (*global_fn)(CUdeviceptr *, size_t *, void *, const char *);
CUresult rt_mod_global(CUdeviceptr *d, size_t *sz, void *mod, const char *name);
CUresult rt_lib_global(CUdeviceptr *d, size_t *sz, void *lib, const char *name);

/* Before module or library h goes: its map drop counters into
 * x->gone_drops (rt_snap.c). */
void rt_ctx_retire(struct rt_ctx *x, void *h, bool lib);
extern int nctx;
/* The live, set-up context c, or NULL (rt_lock held). */
struct rt_ctx *rt_ctx_of(CUcontext c);

#endif
