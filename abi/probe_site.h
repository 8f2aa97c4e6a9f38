/* Contract between the PTX rewriter and device probes: which sites a
 * probe can be spliced in at, and what each site passes the probe.
 *   Site kinds: the controller (cli/dev_session.c) writes them into the
 *   session's probe table (gpux_sess_probe.site, abi/session.h) by gdev:
 *   event name; the runtime's rewriter (runtime/ptx_*.c) reads them.
 *   Context: the rewriter's trampoline (runtime/ptx_tramp.c) writes a
 *   struct gpux_dev_ctx per lane at every site, in PTX; the probe that
 *   device lowering compiles (codegen/device_abi.c's field table, the
 *   JIT's `kernel` builtin) reads it through r1.
 * Plain C, also included by CUDA C test kernels. */
#ifndef GPUX_PROBE_SITE_H
#define GPUX_PROBE_SITE_H

#include <stddef.h>
#include <stdint.h>

enum ptx_site_kind {
	PTX_SITE_KERNEL_ENTRY, /* .entry, after the leading ld.param loads */
	PTX_SITE_KERNEL_EXIT,  /* ret in an .entry; exit anywhere */
	PTX_SITE_ACCESS,       /* ld/st/atom/red global, or generic + isspacep */
	PTX_SITE_FUNC_ENTRY,   /* .func, after its ld.param loads */
	PTX_SITE_FUNC_EXIT,    /* ret in a .func */
	PTX_SITE_COUNT
};

/* By enum ptx_site_kind: the gdev: event each kind implements. */
#define PTX_SITE_NAMES { "kernel_entry", "kernel_exit", "access", "func_entry", "func_exit" }

/* Which memory instructions an access probe is spliced at
 * (gpux_sess_probe.only, written by the controller from the compiler's
 * dev_probe.access_only): its predicate requires `store`, `!store` or
 * `atomic`, which each instruction settles when it is rewritten, so a
 * site that could only fail the predicate costs nothing. 0: every one. */
#define GPUX_SITE_STORES 1u  /* st, atom, red (store == 1) */
#define GPUX_SITE_LOADS 2u   /* ld (store == 0) */
#define GPUX_SITE_ATOMICS 4u /* atom, red (atomic == 1) */
/* The probe only counts accesses (`@m = count()` or `@m[kernel] =
 * count()`, nothing else settled at run time): the rewriter may count
 * the sites each thread executes in a register instead of calling it,
 * and at every ret and exit call its counted form, FUNC "_n", with the
 * thread's count in context word 0 (addr) when it is not 0. */
#define GPUX_SITE_COUNT 8u
#define GPUX_COUNTED_SUFFIX "_n"
/* A kernel_exit probe whose effect does not depend on when in the
 * thread's life it runs (it only aggregates lifelong values: the
 * kernel, the thread's indices, no clock): SASS patching may call it
 * when the thread starts, through the Sanitizer's block-enter hook,
 * whose fixed cost is nil where the block-exit hook's is not. Its maps
 * differ only if a kernel faults before its threads exit. */
#define GPUX_SITE_ANYTIME 16u

/* r1 on entry to a probe: one context per lane, 8-byte aligned, in
 * memory generic loads reach (the trampoline's .local buffer). */
struct gpux_dev_ctx {
	uint64_t addr;      /* gdev:access: the lane's address */
	uint32_t size;      /* gdev:access: bytes per lane */
	uint8_t store;      /* gdev:access */
	uint8_t atomic;     /* gdev:access */
	uint16_t pad;
	uint32_t kernel_id; /* the session's kernel name table index */
	uint32_t site_id;   /* the probe site within the kernel */
};

/* The trampoline stores three 64-bit words: addr; size | store << 32 |
 * atomic << 40; kernel_id | site_id << 32. */
#ifdef __cplusplus
#define GPUX_SITE_ASSERT static_assert
#else
#define GPUX_SITE_ASSERT _Static_assert
#endif
GPUX_SITE_ASSERT(sizeof(struct gpux_dev_ctx) == 24, "probe context size");
GPUX_SITE_ASSERT(offsetof(struct gpux_dev_ctx, size) == 8 &&
		 offsetof(struct gpux_dev_ctx, store) == 12 &&
		 offsetof(struct gpux_dev_ctx, atomic) == 13 &&
		 offsetof(struct gpux_dev_ctx, kernel_id) == 16 &&
		 offsetof(struct gpux_dev_ctx, site_id) == 20,
		 "probe context layout (the trampoline's words)");
#undef GPUX_SITE_ASSERT

#endif
