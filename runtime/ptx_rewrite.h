/* The PTX rewriter: splice probe trampolines into a user's PTX module.
 *
 *   struct ptx_probe probes[] = {
 *           { PTX_SITE_ACCESS, "*gemm*", "gpux_probe_0" },
 *   };
 *   struct ptx_rewrite_in in = {
 *           .user = ptx, .user_len = len,
 *           .probes_ptx = dev, .probes_len = dev_len,  // dev_write_ptx output
 *           .probes = probes, .nprobes = 1,
 *   };
 *   struct ptx_rewrite_out out;
 *   if (ptx_rewrite(&in, &out) == 0)
 *           load out.ptx (out.len bytes); out.warnings say what changed
 *   ptx_rewrite_free(&out);          // also after a failure
 *
 * probes_ptx is one whole module as dev_write_ptx writes it (header,
 * helper prototypes, map descriptors, the probe .funcs, the helper
 * library, PTX_LINK_SAME_MODULE; or without the library, the helpers
 * .extern, PTX_LINK_LIBRARY_CUBIN, to be linked with the library's
 * cubin). Its .version/.target/.address_size
 * lines are dropped; the rest goes after the user's header, before the
 * user's code. The output's .version is max(user's, probes'), its
 * .target the user's unless the probes' is a higher sm_NN; either change
 * is reported in warnings.
 *
 * Each trampoline fills a struct gpux_dev_ctx (abi/probe_site.h) in
 * a .local buffer of the function and calls the probe with a plain
 * (not .uni) call, predicated like the site, so the lanes that reach the
 * site call it together (codegen/ptx/README.md). Kernel registers are
 * untouched: the rewriter only adds %gpux_* registers.
 *
 * Bounded: the work is linear in the input; the output is capped at
 * max_out bytes (0: 64 x the input + the probes + 1 MiB). */
#ifndef GPUX_PTX_REWRITE_H
#define GPUX_PTX_REWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe_site.h" /* enum ptx_site_kind */

/* Comments around the probes module in the output: what lies between
 * them is gpux's (ptx_vars.c leaves it alone). */
#define PTX_PROBES_BEGIN "// gpux: probes and helper library"
#define PTX_PROBES_END "// gpux: end of probes"

struct ptx_probe {
	enum ptx_site_kind kind;
	const char *glob; /* on the PTX (mangled) function name; NULL: all */
	const char *func; /* the JIT'ed probe: "gpux_probe_0" */
	unsigned only;    /* GPUX_SITE_*: for access, what the instruction must be
			   * (0: any) */
};

struct ptx_func_sites {
	char *name;     /* as in the PTX */
	bool is_kernel; /* .entry */
	uint32_t id;    /* ctx.kernel_id passed at its sites */
	unsigned sites[PTX_SITE_COUNT]; /* instrumented sites per kind */
	/* PTX_SITE_ACCESS by instruction: loads, stores, atom, red; generic
	 * counts those also checked with isspacep.global at run time. */
	unsigned loads, stores, atomics, reds, generic;
	unsigned skipped; /* accesses it could not instrument (see warnings) */
	unsigned max_regs; /* the .maxnreg it was given, 0 if none */
};

struct ptx_rewrite_in {
	const char *user;
	size_t user_len;
	const char *probes_ptx;
	size_t probes_len;
	const struct ptx_probe *probes;
	int nprobes;
	/* ctx.kernel_id for a function (kernels and device functions);
	 * NULL: its index among the module's function definitions. */
	uint32_t (*func_id)(void *arg, const char *name, bool is_kernel);
	/* Whether probe p applies to the function named name; NULL: p->glob
	 * on the PTX name. (The runtime also tries demangled names.) */
	bool (*match)(void *arg, const struct ptx_probe *p, const char *name);
	/* The most registers per thread kernel name may use (its original
	 * code's count), 0 for no cap; NULL: no caps. */
	unsigned (*max_regs)(void *arg, const char *name);
	/* The user's PTX is a unit of a relocatable link (-rdc): every
	 * unit carries the probes module, its functions internal to the
	 * unit (so that ptxas compiles them within each kernel's register
	 * cap, which it cannot do for a function others may call) and its
	 * data and entry defined by the first unit, weak in the others. */
	enum ptx_unit { PTX_WHOLE_MODULE, PTX_FIRST_UNIT, PTX_LATER_UNIT } unit;
	void *arg;
	size_t max_out;
};

struct ptx_rewrite_out {
	char *ptx;                    /* NUL-terminated */
	size_t len;
	struct ptx_func_sites *funcs; /* every function defined, in order */
	int nfuncs;
	char **warnings;              /* changes made, sites skipped */
	int nwarnings;
	char err[256];                /* why ptx_rewrite failed */
};

/* 0, or -1 with out->err. out is always safe to free. */
int ptx_rewrite(const struct ptx_rewrite_in *in, struct ptx_rewrite_out *out);
void ptx_rewrite_free(struct ptx_rewrite_out *out);

const char *ptx_site_name(enum ptx_site_kind kind);

/* One call of probe func+suffix (a .func taking three .b64 context
 * words, returning one) under guard ("" or "@%p"), in a scope of its
 * own: the trampolines' and the Sanitizer callbacks' (sass_ptx.c). */
struct ptx_buf;
void ptx_call_probe(struct ptx_buf *b, const char *const words[3], const char *guard,
		    const char *func, const char *suffix);

#endif
