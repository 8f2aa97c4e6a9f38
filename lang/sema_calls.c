/* Calls: aggregations, map functions, output, and policy actions. One
 * table says how many arguments each takes and where it may run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sema_fns.h"
#include "suggest.h"

static struct type chk_agg(struct tctx *c, struct node *call, const struct fn *fn);
static struct type chk_lhist(struct tctx *c, struct node *call, const struct fn *fn);
static struct type chk_map_fn(struct tctx *c, struct node *call, const struct fn *fn);
static struct type chk_delete(struct tctx *c, struct node *call, const struct fn *fn);
static struct type chk_print(struct tctx *c, struct node *call, const struct fn *fn);
static struct type chk_printf(struct tctx *c, struct node *call, const struct fn *fn);
static struct type chk_debugf(struct tctx *c, struct node *call, const struct fn *fn);
static struct type chk_exit(struct tctx *c, struct node *call, const struct fn *fn);
static struct type chk_time(struct tctx *c, struct node *call, const struct fn *fn);
static struct type chk_str(struct tctx *c, struct node *call, const struct fn *fn);
static struct type chk_in_target(struct tctx *c, struct node *call, const struct fn *fn);

#define HOSTISH (PLACE_HOST | PLACE_DRIVER)

static const struct fn fns[] = {
	{ "count", 0, 0, PLACE_ANY, AGG_COUNT, chk_agg, NULL },
	{ "sum", 1, 1, PLACE_ANY, AGG_SUM, chk_agg, NULL },
	{ "avg", 1, 1, PLACE_ANY, AGG_AVG, chk_agg, NULL },
	{ "min", 1, 1, PLACE_ANY, AGG_MIN, chk_agg, NULL },
	{ "max", 1, 1, PLACE_ANY, AGG_MAX, chk_agg, NULL },
	{ "stats", 1, 1, PLACE_ANY, AGG_STATS, chk_agg, NULL },
	{ "hist", 1, 1, PLACE_ANY, AGG_HIST, chk_agg, NULL },
	{ "lhist", 4, 4, PLACE_ANY, AGG_LHIST, chk_lhist, NULL },
	{ "delete", 1, 2, PLACE_ANY, AGG_NONE, chk_delete, NULL },
	{ "clear", 1, 1, HOSTISH, AGG_NONE, chk_map_fn,
	  "it empties the whole map, which the host owns" },
	{ "zero", 1, 1, HOSTISH, AGG_NONE, chk_map_fn,
	  "it resets the whole map, which the host owns" },
	{ "print", 1, 3, HOSTISH, AGG_NONE, chk_print,
	  "output is formatted on the host; use printf() on the device" },
	{ "printf", 1, 64, PLACE_ANY, AGG_NONE, chk_printf, NULL },
	{ "debugf", 1, 64, PLACE_HOST, AGG_NONE, chk_debugf,
	  "it writes to the kernel's trace buffer (bpf_trace_printk); use printf() on the "
	  "device" },
	{ "cat", 1, 64, HOSTISH, AGG_NONE, chk_printf,
	  "gpux reads the file on the host; use printf() on the device" },
	{ "system", 1, 64, HOSTISH, AGG_NONE, sema_chk_system,
	  "gpux runs the command on the host" },
	{ "kptr", 1, 1, HOSTISH, AGG_NONE, sema_chk_addr_space, NULL },
	{ "uptr", 1, 1, HOSTISH, AGG_NONE, sema_chk_addr_space, NULL },
	{ "reg", 1, 1, PLACE_HOST, AGG_NONE, sema_chk_reg,
	  "it reads the registers of the task a uprobe interrupted" },
	{ "macaddr", 1, 1, HOSTISH, AGG_NONE, sema_chk_macaddr,
	  "it reads host memory" },
	{ "ntop", 1, 2, HOSTISH, AGG_NONE, sema_chk_ntop,
	  "gpux formats the address on the host" },
	{ "pton", 1, 1, HOSTISH, AGG_NONE, sema_chk_pton,
	  "gpux reads the address on the host" },
	{ "cgroupid", 1, 1, HOSTISH, AGG_NONE, sema_chk_cgroupid,
	  "gpux reads the cgroup's id on the host" },
	{ "strftime", 2, 2, HOSTISH, AGG_NONE, sema_chk_strftime,
	  "gpux formats the host's wall clock; use nsecs on the device" },
	{ "buf", 1, 2, HOSTISH, AGG_NONE, sema_chk_buf,
	  "it reads host memory" },
	{ "join", 1, 2, PLACE_HOST, AGG_NONE, sema_chk_join,
	  "it reads the traced process's memory from the kernel" },
	{ "signal", 1, 1, PLACE_HOST, AGG_NONE, sema_chk_signal,
	  "the kernel sends it to the task a kernel probe interrupted" },
	{ "ustack", 0, 2, PLACE_HOST, AGG_NONE, sema_chk_stack,
	  "the kernel walks the stack of the task a kernel probe interrupted" },
	{ "kstack", 0, 2, PLACE_HOST, AGG_NONE, sema_chk_stack,
	  "the kernel walks the stack of the task a kernel probe interrupted" },
	{ "usym", 1, 1, HOSTISH, AGG_NONE, sema_chk_sym,
	  "gpux symbolizes addresses on the host" },
	{ "ksym", 1, 1, HOSTISH, AGG_NONE, sema_chk_sym,
	  "gpux symbolizes addresses on the host" },
	{ "uaddr", 1, 1, PLACE_HOST, AGG_NONE, sema_chk_symaddr,
	  "it names a symbol of a uprobe's binary" },
	{ "kaddr", 1, 1, HOSTISH, AGG_NONE, sema_chk_symaddr,
	  "it names a kernel symbol" },
	{ "exit", 0, 1, PLACE_ANY, AGG_NONE, chk_exit, NULL },
	{ "time", 0, 1, HOSTISH, AGG_NONE, chk_time,
	  "it formats the host's wall clock; use nsecs on the device" },
	{ "str", 1, 2, HOSTISH, AGG_NONE, chk_str,
	  "it reads host memory" },
	{ "unwatch", 1, 1, PLACE_HOST, AGG_NONE, sema_chk_unwatch,
	  "gpux removes watchpoints on the host" },
	{ "bswap", 1, 1, HOSTISH, AGG_NONE, sema_chk_bswap,
	  "device code has no byte swap yet" },
	{ "strncmp", 3, 3, HOSTISH, AGG_NONE, sema_chk_strncmp,
	  "device code compares only kernel names" },
	{ "strerror", 1, 1, HOSTISH, AGG_NONE, sema_chk_strerror,
	  "gpux writes the text on the host" },
	{ "cgroup_path", 1, 2, HOSTISH, AGG_NONE, sema_chk_cgroup_path,
	  "gpux finds the directories on the host" },
	{ "path", 1, 1, PLACE_HOST, AGG_NONE, sema_chk_path,
	  "the kernel writes it, in an iterator" },
	{ "strcontains", 2, 2, HOSTISH, AGG_NONE, sema_chk_strcontains,
	  "device code compares only kernel names" },
	{ "alloc_base", 1, 1, PLACE_HOST, AGG_NONE, chk_in_target,
	  "allocations are tracked on the host; a cuda: probe can look them up" },
	{ "alloc_size", 1, 1, PLACE_HOST, AGG_NONE, chk_in_target,
	  "allocations are tracked on the host; a cuda: probe can look them up" },
	{ "gpu_free", 0, 0, PLACE_HOST, AGG_NONE, chk_in_target,
	  "the driver answers on the host; a cuda: probe can ask it" },
};

/* Calls whose work gpux does on a record the probe writes (printf's is
 * the kernel's seq_printf in a pinned iterator). */
static bool writes_records(const char *name)
{
	static const char *const w[] = { "print", "exit", "time", "cat", "system", "join",
					 "clear", "zero", "unwatch" };
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if (!strcmp(name, w[i]))
			return true;
	return false;
}

/* iter:KIND:PIN: the kernel runs it when the file is read. */
static bool pinned_iterator(const struct tctx *c)
{
	const struct attach *at = &c->probe->u.probe.attach->u.attach;
	return at->prov && at->prov->attach == ATTACH_ITER && at->filter;
}

static const struct fn *fn_find(const char *name)
{
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (!strcmp(fns[i].name, name))
			return &fns[i];
	return NULL;
}

static const char *count_words(int n)
{
	static const char *const w[] = { "no arguments", "one argument",
					 "two arguments", "three arguments",
					 "4 arguments" };
	return n >= 0 && n <= 4 ? w[n] : "that many arguments";
}

static bool check_nargs(struct tctx *c, struct node *call, int min, int max)
{
	int n = call->u.call.nargs;
	if (n >= min && n <= max)
		return true;
	if (min == max)
		terr(c, call->span, "%s() requires %s (%d provided)",
		     call->u.call.name, count_words(min), n);
	else if (n < min)
		terr(c, call->span, "%s() requires at least %s (%d provided)",
		     call->u.call.name, count_words(min), n);
	else
		terr(c, call->span, "%s() takes at most %s (%d provided)",
		     call->u.call.name, count_words(max), n);
	return false;
}

struct node *sema_arg(struct node *call, int i)
{
	struct node *a = call->u.call.args;
	while (a && i--)
		a = a->next;
	return a;
}

bool sema_want_int(struct tctx *c, struct node *call, struct node *a,
		    const char *what)
{
	char b[64];
	check_expr(c, a);
	if (a->type.kind == TY_NONE)
		return false;
	if (a->type.kind == TY_INT)
		return true;
	if (a->type.kind == TY_DIM3) {
		struct diag *dg = terr(c, a->span, "%s() expects an integer %s, not a dim3",
				       call->u.call.name, what);
		diag_hint(dg, "use one of its fields: .x, .y or .z");
	} else {
		terr(c, a->span, "%s() expects an integer %s (%s supplied)",
		     call->u.call.name, what, tname(a->type, b));
	}
	return false;
}

static struct type chk_agg(struct tctx *c, struct node *call, const struct fn *fn)
{
	if (fn->max == 1)
		sema_want_int(c, call, sema_arg(call, 0), "argument");
	return TYPE_AGG(fn->agg);
}

static struct type chk_lhist(struct tctx *c, struct node *call, const struct fn *fn)
{
	static const char *const names[] = { "min", "max", "step" };
	int64_t v[3];
	bool known = true;
	sema_want_int(c, call, sema_arg(call, 0), "value");
	for (int i = 0; i < 3; i++) {
		struct node *a = sema_arg(call, i + 1);
		check_expr(c, a);
		if (!const_int(a, &v[i])) {
			terr(c, a->span, "lhist() %s must be a constant integer", names[i]);
			known = false;
		}
	}
	if (known && v[0] < 0)
		terr(c, sema_arg(call, 1)->span, "lhist() min must be non-negative");
	else if (known && v[1] <= v[0])
		terr(c, sema_arg(call, 2)->span, "lhist() max must be greater than min");
	else if (known && v[2] <= 0)
		terr(c, sema_arg(call, 3)->span, "lhist() step must be >= 1");
	else if (known && (v[1] - v[0]) / v[2] > 1000)
		terr(c, call->span, "lhist() would need more than 1000 buckets");
	return TYPE_AGG(fn->agg);
}

/* Printing or clearing a map nobody assigns is harmless but likely a
 * typo; a later script part may fill it, so warn rather than fail. */
static void warn_unwritten(struct tctx *c, struct map_info *mi, struct node *m,
			   const char *fn)
{
	if (!c->final || mi->written || mi->warned)
		return;
	mi->warned = true;
	struct diag *dg = diag_warning(c->diags, m->span,
				       "@%s is never assigned; %s() will find it empty",
				       mi->name, fn);
	diag_hint(dg, "check the map's name");
}

/* clear(@m), zero(@m): the whole map, so no keys. */
static struct type chk_map_fn(struct tctx *c, struct node *call, const struct fn *fn)
{
	struct node *m = sema_arg(call, 0);
	if (m->kind != N_MAP) {
		terr(c, m->span, "%s() expects a map, e.g. %s(@counts)", fn->name, fn->name);
		return TYPE_VOID;
	}
	if (m->u.map.nkeys) {
		struct diag *dg = terr(c, m->span, "%s() works on a whole map, not an element",
				       fn->name);
		diag_hint(dg, "write %s(@%s); to remove one element use delete(@%s[...])",
			  fn->name, m->u.map.name, m->u.map.name);
		return TYPE_VOID;
	}
	warn_unwritten(c, map_lookup(c, m), m, fn->name);
	return TYPE_VOID;
}

/* delete(@m[k]) or delete(@m, k). */
static struct type chk_delete(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	struct node *m = sema_arg(call, 0);
	if (m->kind != N_MAP) {
		terr(c, m->span, "delete() expects a map element, e.g. delete(@m[key])");
		return TYPE_VOID;
	}
	if (call->u.call.nargs == 2) {
		if (m->u.map.nkeys) {
			terr(c, call->span, "delete() takes a map element or a map and a key, not both");
			return TYPE_VOID;
		}
		/* Rewrite delete(@m, k) as delete(@m[k]) for later stages. */
		struct node *k = m->next;
		m->next = NULL;
		m->u.map.keys = k;
		m->u.map.nkeys = 1;
		call->u.call.nargs = 1;
	}
	check_expr(c, m);
	return TYPE_VOID;
}

static struct type chk_print(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	struct node *m = sema_arg(call, 0);
	if (m->kind == N_MAP && !m->u.map.nkeys) {
		warn_unwritten(c, map_lookup(c, m), m, "print");
	} else {
		check_expr(c, m);
		if (call->u.call.nargs > 1) {
			terr(c, call->span, "print() of a value takes one argument; top and div apply to maps");
			return TYPE_VOID;
		}
	}
	for (int i = 1; i < call->u.call.nargs; i++) {
		struct node *a = sema_arg(call, i);
		int64_t v;
		check_expr(c, a);
		if (!const_int(a, &v) || v < 0)
			terr(c, a->span, "print() %s must be a non-negative constant",
			     i == 1 ? "top" : "div");
	}
	return TYPE_VOID;
}

static struct type chk_printf(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	check_printf(c, call);
	return TYPE_VOID;
}

/* debugf(): printf's checks, bpf_trace_printk's three conversions, and
 * bpftrace's warning (its lines go to the trace buffer, not the output) */
static struct type chk_debugf(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	if (c->final)
		diag_warning(c->diags, call->span, "The debugf() builtin is not recommended for "
			     "production use. For more information see bpf_trace_printk in "
			     "bpf-helpers(7).");
	check_printf(c, call);
	for (const struct node *a = c->probe ? c->probe->u.probe.attach : NULL; a; a = a->next)
		if (a->u.attach.prov && a->u.attach.prov->runner == RUNNER_TARGET) {
			struct diag *dg = terr(c, call->span, "debugf() cannot be used in a %s: probe",
					       a->u.attach.prov->name);
			diag_hint(dg, "the traced program would write its lines; use printf()");
			return TYPE_VOID;
		}
	const struct node *fmt = call->u.call.args;
	int convs = 0;
	for (size_t i = 0; fmt && fmt->kind == N_STR && i < fmt->u.str.len; i++)
		if (fmt->u.str.s[i] == '%') {
			if (i + 1 < fmt->u.str.len && fmt->u.str.s[i + 1] == '%')
				i++;
			else
				convs++;
		}
	if (convs > 3)
		terr(c, call->span, "debugf: Cannot use more than 3 conversion specifiers");
	return TYPE_VOID;
}

static struct type chk_exit(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	if (call->u.call.nargs)
		sema_want_int(c, call, sema_arg(call, 0), "exit status");
	return TYPE_VOID;
}

static struct type chk_time(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	struct node *a = sema_arg(call, 0);
	if (a && a->kind != N_STR)
		terr(c, a->span, "time() expects a strftime format string literal");
	else if (a)
		a->type = TYPE_STR;
	return TYPE_VOID;
}

/* str() of text known when compiling: the call becomes the literal (at
 * most its length argument's bytes) in the reporting walk. */
static struct type str_text(struct tctx *c, struct node *call, const char *s)
{
	size_t len = strlen(s);
	struct node *n = sema_arg(call, 1);
	if (n) {
		if (n->kind != N_INT) {
			terr(c, n->span, "str() of a positional parameter takes a constant length");
			return TYPE_NONE;
		}
		if (n->u.num.value < len)
			len = (size_t)n->u.num.value;
	}
	if (!c->final)
		return TYPE_STR;
	call->kind = N_STR;
	call->u.str.s = arena_strndup(&c->prog->arena, s, len);
	call->u.str.len = len;
	call->u.str.of_str = true;
	return TYPE_STR;
}

/* str($N[, len]): the text of positional parameter N as given ("" when
 * it is not), numeric or not, as bpftrace has it. */
static struct type str_positional(struct tctx *c, struct node *call, struct node *p)
{
	int i = p->u.positional.index;
	if (c->final && i > c->prog->npositional)
		positional_unset(c, p);
	return str_text(c, call, i <= c->prog->npositional ? c->prog->positional[i - 1] : "");
}

static struct type chk_str(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	struct node *a = sema_arg(call, 0);
	if (a && a->kind == N_POSITIONAL && a->u.positional.index > 0)
		return str_positional(c, call, a);
	/* str($1 + N): the text from its N-th byte, as bpftrace reads the
	 * parameter's address plus N */
	int64_t skip;
	if (a && a->kind == N_BINOP && a->u.binop.op == OP_ADD &&
	    a->u.binop.lhs->kind == N_POSITIONAL && a->u.binop.lhs->u.positional.index > 0 &&
	    a->u.binop.lhs->u.positional.index <= c->prog->npositional &&
	    const_int(a->u.binop.rhs, &skip) && skip >= 0) {
		const char *s = c->prog->positional[a->u.binop.lhs->u.positional.index - 1];
		char *end;
		(void)strtoll(s, &end, 0);
		size_t len = strlen(s);
		if (!*s || *end) /* a string, not a number */
			return str_text(c, call, s + ((size_t)skip < len ? (size_t)skip : len));
	}
	/* str(args.filename): bpftrace reads a tracepoint's string through
	 * str(); args.NAME is that string already, which str() passes on */
	if (a && sema_is_args_field(c, a)) {
		check_expr(c, a);
		if (a->type.kind == TY_STR) {
			if (call->u.call.nargs == 2)
				sema_want_int(c, call, sema_arg(call, 1), "length");
			return TYPE_STR;
		}
	}
	check_expr(c, a);
	/* a pointer (char *name of a record) is the address it holds */
	if (a->type.kind != TY_POINTER)
		sema_want_int(c, call, a, "address");
	if (call->u.call.nargs == 2)
		sema_want_int(c, call, sema_arg(call, 1), "length");
	return TYPE_STR;
}

/* alloc_base(ptr), alloc_size(ptr): the runtime in the traced program
 * keeps the allocations it saw, so only cuda: probes can ask; so too
 * gpu_free(), the driver's free memory on the event's GPU. */
static struct type chk_in_target(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	char pb[64];
	const struct attach *at = &c->probe->u.probe.attach->u.attach;
	if (!at->prov || !provider_in_target_vm(at->prov)) {
		struct diag *dg = terr(c, call->span, "%s() is not available in %s",
				       call->u.call.name, probe_name(c, pb, sizeof(pb)));
		diag_hint(dg, "only cuda: probes run in the traced program, beside the driver");
	}
	if (call->u.call.nargs)
		sema_want_int(c, call, sema_arg(call, 0), "address");
	return TYPE_U64;
}

/* ---- policy actions ---- */

/* The action of that name callable in e, or NULL (catalog_action_in
 * falls back to the first of the name, for the message that says where
 * it is callable). */
static const struct action *callable_in(const char *name, const struct event *e)
{
	const struct action *a = catalog_action_in(name, e);
	return a && (e->actions & ACTION_BIT(a->id)) ? a : NULL;
}

/* Every event where an action of that name may be called. */
static void action_where(const char *name, char *buf, size_t len)
{
	size_t n, off = 0;
	char eb[64];
	const struct event *const *es = catalog_events(&n);
	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++)
		if (callable_in(name, es[i]))
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off ? ", " : "",
						event_str(es[i], eb, sizeof(eb)));
}

/* advise()'s hint: a name from the catalog's list, nothing computed. */
static void check_hint(struct tctx *c, struct node *call, struct node *a)
{
	size_t n;
	const struct hint_info *hs = catalog_hints(&n);
	const struct hint_info *h =
		a->kind == N_IDENT ? catalog_hint(a->u.ident.name) : NULL;
	if (h) {
		a->u.ident.kind = ID_HINT;
		a->u.ident.hint = h->value;
		a->type = TYPE_U64;
		return;
	}
	const char *cands[16];
	size_t k = 0;
	char list[320];
	size_t off = 0;
	for (size_t i = 0; i < n && k < 16; i++) {
		cands[k++] = hs[i].name;
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
					off ? ", " : "", hs[i].name);
		if (off >= sizeof(list))
			off = sizeof(list) - 1;
	}
	struct diag *dg = terr(c, a->span, "%s() takes a hint name here", call->u.call.name);
	const char *best = a->kind == N_IDENT ? suggest_closest(a->u.ident.name, cands, k) : NULL;
	if (best)
		diag_hint(dg, "did you mean '%s'?", best);
	else
		diag_hint(dg, "the hints are %s", list);
}

static struct type check_action(struct tctx *c, struct node *call,
				const struct action *act)
{
	char pb[64], where[256], b1[64], b2[64];
	const struct probe *p = &c->probe->u.probe;
	for (const struct node *a = p->attach; a; a = a->next)
		for (int i = 0; i < a->u.attach.nevents; i++) {
			const struct event *e = a->u.attach.events[i];
			if (callable_in(act->name, e) == act)
				continue;
			action_where(act->name, where, sizeof(where));
			struct diag *dg = terr(c, call->span, "%s() is not available in %s",
				act->name, event_str(e, pb, sizeof(pb)));
			diag_hint(dg, "%s() is %s; it is available in %s", act->name,
				  e->place == PLACE_DRIVER || act->id <= ACT_REJECT_BIND
					  ? "a driver policy action" : "a memory action",
				  where);
			return TYPE_VOID;
		}
	if (!check_nargs(c, call, act->nargs, act->nargs))
		return TYPE_VOID;
	int i = 0;
	for (struct node *a = call->u.call.args; a; a = a->next, i++) {
		if (i == act->hint_arg) {
			check_hint(c, call, a);
			continue;
		}
		check_expr(c, a);
		if (a->type.kind == TY_NONE)
			continue;
		if (!type_compatible(act->args[i], a->type))
			terr(c, a->span, "%s() expects a '%s' argument (%s supplied)",
			     act->name, tname(act->args[i], b1), tname(a->type, b2));
	}
	return TYPE_VOID;
}

static void unknown_function(struct tctx *c, struct node *call)
{
	const char *cands[64];
	size_t k = 0, na;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		cands[k++] = fns[i].name;
	const struct action *acts = catalog_actions(&na);
	for (size_t i = 0; i < na && k < 64; i++)
		cands[k++] = acts[i].name;
	/* bpftrace 0.17's functions that gpux lacks: not a typo to correct */
	static const char *const bt[] = {
		"override", "sizeof", "unwatch", "skboutput",
	};
	for (size_t i = 0; i < sizeof(bt) / sizeof(bt[0]); i++)
		if (!strcmp(call->u.call.name, bt[i])) {
			terr(c, call->span, "gpux does not support bpftrace's function %s() yet",
			     bt[i]);
			return;
		}
	struct diag *dg = terr(c, call->span, "Unknown function: %s", call->u.call.name);
	const char *best = suggest_closest(call->u.call.name, cands, k);
	if (best)
		diag_hint(dg, "did you mean '%s()'?", best);
}

struct type check_call(struct tctx *c, struct node *call, bool map_value)
{
	const char *name = call->u.call.name;
	char pb[64];
	const struct attach *at = &c->probe->u.probe.attach->u.attach;
	const struct action *act =
		catalog_action_in(name, at->nevents ? at->events[0] : NULL);
	if (act) {
		call->u.call.fn = act;
		return check_action(c, call, act);
	}
	const struct fn *fn = fn_find(name);
	if (!fn) {
		unknown_function(c, call);
		for (struct node *a = call->u.call.args; a; a = a->next)
			check_expr(c, a);
		return TYPE_NONE;
	}
	call->u.call.fn = fn;
	enum place place = c->probe->u.probe.place;
	if (!(fn->places & place)) {
		struct diag *dg = terr(c, call->span, "%s() is not available in %s (%s probe)",
				       name, probe_name(c, pb, sizeof(pb)), place_name(place));
		if (fn->why_not_device && place == PLACE_DEVICE)
			diag_hint(dg, "%s", fn->why_not_device);
		return fn->agg ? TYPE_AGG(fn->agg) : TYPE_VOID;
	}
	if (fn->agg && !map_value) {
		terr(c, call->span, "%s() should be directly assigned to a map", name);
		return TYPE_NONE;
	}
	if (!check_nargs(c, call, fn->min, fn->max))
		return fn->agg ? TYPE_AGG(fn->agg) : TYPE_NONE;
	if (writes_records(name) && pinned_iterator(c)) {
		struct diag *dg = terr(c, call->span, "%s() cannot be used in a pinned iterator",
				       name);
		diag_hint(dg, "it runs when its file is read, after gpux has ended: only "
			  "printf() writes there (the kernel's seq_printf), and maps keep what "
			  "it counts");
		return fn->check(c, call, fn);
	}
	return fn->check(c, call, fn);
}

const char *sema_function(size_t i, unsigned *places)
{
	if (i >= sizeof(fns) / sizeof(fns[0]))
		return NULL;
	if (places)
		*places = fns[i].places;
	return fns[i].name;
}
