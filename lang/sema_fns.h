/* What the checks of functions share (sema_calls.c, sema_libfns.c). */
#ifndef GPUX_SEMA_FNS_H
#define GPUX_SEMA_FNS_H

#include "sema_types.h"

struct fn;
typedef struct type (*fn_check)(struct tctx *c, struct node *call, const struct fn *fn);

/* A function of the language: its arity, where it runs, its check. */
struct fn {
	const char *name;
	int min, max;
	unsigned places;
	enum agg_kind agg; /* AGG_NONE unless it is an aggregation */
	fn_check check;
	const char *why_not_device; /* reason it does not run in gdev: */
};

/* The i-th argument of call, or NULL. */
struct node *sema_arg(struct node *call, int i);
/* Checks a as an integer argument of call (what: "address", "length"),
 * with a located error if it is not one. */
bool sema_want_int(struct tctx *c, struct node *call, struct node *a, const char *what);

/* sema_libfns.c */
struct type sema_chk_bswap(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_unwatch(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_system(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_signal(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_join(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_buf(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_strftime(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_ntop(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_macaddr(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_pton(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_cgroupid(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_reg(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_addr_space(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_strncmp(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_strcontains(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_strerror(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_cgroup_path(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_path(struct tctx *c, struct node *call, const struct fn *fn);

/* sema_stacks.c */
struct type sema_chk_stack(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_sym(struct tctx *c, struct node *call, const struct fn *fn);
struct type sema_chk_symaddr(struct tctx *c, struct node *call, const struct fn *fn);

#endif
