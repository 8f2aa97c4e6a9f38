/* Shared by the rewriter's files: the state of one rewrite. */
#ifndef GPUX_PTX_RW_PRIV_H
#define GPUX_PTX_RW_PRIV_H

#include "gpux_dev.h" /* GPUX_SYM_OFF */
#include "ptx_rewrite.h"
#include "ptx_scan.h"
#include "ptx_site.h"

#define RW_MAX_PROBES 256

/* Replace user[off, off + del) with text[t0, t0 + tlen). At one offset,
 * lower prio goes first, then queue order. */
struct rw_edit {
	size_t off, del;
	int prio;
	size_t seq;
	size_t t0, tlen;
};

/* A ret or exit of the function: where counted accesses are handed to
 * their probes (GPUX_SITE_COUNT), under the instruction's own guard. */
struct rw_flush {
	size_t off;
	char guard[72];
};

/* The function being walked. */
struct rw_fn {
	struct ptx_func_sites *sites; /* its entry in out->funcs */
	int probes[PTX_SITE_COUNT][RW_MAX_PROBES]; /* matching probe indices */
	int nprobes[PTX_SITE_COUNT];
	unsigned next_site;
	/* probe i counts this function's accesses in %gpux_n<i> */
	bool counted[RW_MAX_PROBES];
	bool any_counted;
	struct rw_flush *flush; /* every ret and exit, kept across functions */
	size_t nflush, capflush;
};

struct rw {
	const struct ptx_rewrite_in *in;
	struct ptx_rewrite_out *out;
	struct ptx_buf text; /* the text of every edit */
	struct rw_edit *edits;
	size_t nedits, capedits;
	char *clean; /* ptx_clean scratch */
	size_t clean_cap;
	struct ptx_regs *regs;
	struct rw_fn fn;
	bool oom;
	/* The first name of the user's that gpux adds too (a function, a
	 * variable or a %gpux_ register), NUL-terminated: the module cannot
	 * take the probes (instrumented by gpux already, or named as gpux
	 * names its own). Other names with gpux_ in them are the user's. */
	char clash[64];
	/* The user's header lines, the probes module's values. */
	struct ptx_tok ver, tgt, asz;
	char pver[16], ptgt[16];
	size_t probes_t0, probes_tlen;
};

int rw_fail(struct rw *rw, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rw_warn(struct rw *rw, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Queue text[t0, text.len) as an edit. */
void rw_edit(struct rw *rw, size_t off, size_t del, int prio, size_t t0);

/* ptx_tramp.c: the names the rewriter itself adds (a trampoline's
 * locals, GPUX_SYM_OFF; %gpux_ registers besides), NULL-ended. */
extern const char *const rw_added_names[];

/* ptx_walk.c: the module and function bodies. */
int rw_walk(struct rw *rw);

/* ptx_tramp.c: queue one site's trampoline before offset off (in is
 * NULL for entries). */
void rw_site(struct rw *rw, size_t off, enum ptx_site_kind kind,
	     const struct ptx_insn *in);
/* The per-function declarations, right after its '{' at off. */
void rw_decls(struct rw *rw, size_t off);
/* A ret or exit at off: remember it; rw_flushes hands the counted
 * accesses to their probes there once the body is walked. */
void rw_exit_point(struct rw *rw, size_t off, const struct ptx_insn *in);
void rw_flushes(struct rw *rw);

#endif
