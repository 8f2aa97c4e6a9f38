/* Checks of bpftrace's library functions beyond gpux's core (sema_calls.c
 * has the table that names them): strings and bytes, time, addresses,
 * registers, and the unsafe ones that act on the system. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "catalog.h"
#include "cdefs.h"
#include "sema_fns.h"

/* system(fmt, args...): as printf, only with --unsafe (bpftrace's words) */
struct type sema_chk_system(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	check_printf(c, call);
	if (!c->prog->unsafe) {
		struct diag *dg = terr(c, call->span,
				       "system() is an unsafe function being used in safe mode");
		if (dg)
			diag_hint(dg, "run gpux with --unsafe to let the program run commands");
	}
	return TYPE_VOID;
}

/* join(argv[, delim]): the strings of a NULL-ended array of pointers,
 * read by a kernel probe from the process it interrupted. */
struct type sema_chk_join(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	const struct provider *p = c->probe->u.probe.attach->u.attach.prov;
	char pb[64];
	sema_want_int(c, call, sema_arg(call, 0), "address");
	struct node *d = sema_arg(call, 1);
	if (d && !sema_str_literal(c, d)) {
		check_expr(c, d);
		terr(c, d->span, "join() expects a string literal as its delimiter");
	} else if (d) {
		d->type = TYPE_STR;
	}
	if (!p || p->runner != RUNNER_KERNEL)
		terr(c, call->span, "join() can not be used with \"%s\" probes: only kernel "
		     "probes (uprobes, tracepoints) read a process's arrays",
		     probe_name(c, pb, sizeof(pb)));
	return TYPE_VOID;
}

/* buf(data, length): length bytes of a string or of the process's memory
 * at an address, up to BUF_MAX (bpftrace's string length), printed with
 * %r. */
struct type sema_chk_buf(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	struct node *d = sema_arg(call, 0), *n = sema_arg(call, 1);
	char b[64];
	check_expr(c, d);
	/* an array read already: buf(rec->bytes) takes all of it (a char
	 * array is a string, as in bpftrace, and needs its length) */
	bool array = d->type.kind == TY_ARRAY;
	if (d->type.kind != TY_NONE && d->type.kind != TY_STR && d->type.kind != TY_INT &&
	    d->type.kind != TY_POINTER && !array)
		terr(c, d->span, "buf() reads a string or an address, not a value of type '%s'",
		     tname(d->type, b));
	if (!n) {
		if (!array && d->type.kind != TY_NONE)
			terr(c, call->span, "buf() expects a length argument for non-array type %s",
			     tname(d->type, b));
		return (struct type){ .kind = TY_BUF };
	}
	int64_t v;
	if (sema_want_int(c, call, n, "length") && const_int(n, &v)) {
		if (v < 0)
			terr(c, n->span, "buf() length must not be negative");
		else if (v > BUF_MAX && c->final)
			diag_warning(c->diags, call->span, "buf() length is too long and will be "
				     "shortened to %d bytes (see BPFTRACE_STRLEN)", BUF_MAX);
	}
	return (struct type){ .kind = TY_BUF };
}

/* strftime(fmt, ns): ns since boot as a wall-clock time, formatted when
 * printed (printf %s, print(), keys and values), as bpftrace 0.17 does. */
struct type sema_chk_strftime(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	struct node *f = sema_arg(call, 0);
	sema_want_int(c, call, sema_arg(call, 1), "time in ns");
	if (!sema_str_literal(c, f)) {
		check_expr(c, f);
		terr(c, f->span, "strftime() expects a format string literal");
		return TYPE_NONE;
	}
	f->type = TYPE_STR;
	return (struct type){ .kind = TY_TIMESTAMP, .name = f->u.str.s };
}

/* An array of 4 or 16 bytes (a record's u8 addr[16], read as a
 * string), as ntop() takes an IPv4 or IPv6 address. */
static bool inet_bytes(struct type t)
{
	unsigned n = t.kind == TY_STR ? t.count
		   : t.kind == TY_ARRAY && t.inner && t.inner->kind == TY_INT && t.inner->bits == 8
			   ? t.count
			   : 0;
	return n == 4 || n == 16;
}

/* ntop([af,] addr): an IPv4 address in an integer (network order), or
 * with af 10 (AF_INET6) the integer's bytes as the first of 16; or the
 * 4 or 16 bytes of an array, IPv4 or IPv6 by its size; printed as
 * bpftrace 0.17 prints them. */
struct type sema_chk_ntop(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	if (call->u.call.nargs == 2)
		sema_want_int(c, call, sema_arg(call, 0), "address family");
	struct node *a = sema_arg(call, call->u.call.nargs - 1);
	check_expr(c, a);
	if (!inet_bytes(a->type))
		sema_want_int(c, call, a, "address");
	return (struct type){ .kind = TY_INET };
}

/* Argument a of call, which must be a string literal: typed, or why
 * not (msg) at the call. */
static bool literal_arg(struct tctx *c, struct node *call, struct node *a, const char *msg)
{
	if (!sema_str_literal(c, a)) {
		check_expr(c, a);
		terr(c, call->span, "%s", msg);
		return false;
	}
	a->type = TYPE_STR;
	return true;
}

/* pton("1.2.3.4"), pton("::1"): the address's bytes, an array of 4 or
 * 16, from a literal, as bpftrace 0.17 reads it. */
struct type sema_chk_pton(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	static const struct type byte = { .kind = TY_INT, .bits = 8 };
	struct node *a = sema_arg(call, 0);
	if (!literal_arg(c, call, a, "pton() expects a string literal of an IPv4/IPv6 address"))
		return TYPE_NONE;
	unsigned n = sema_pton(a->u.str.s, NULL);
	if (!n) {
		terr(c, call->span, "pton() expects a valid IPv4/IPv6 address, got %s", a->u.str.s);
		return TYPE_NONE;
	}
	return (struct type){ .kind = TY_ARRAY, .inner = &byte, .count = n };
}

unsigned sema_pton(const char *s, unsigned char out[16])
{
	unsigned char b[16];
	unsigned n = inet_pton(AF_INET, s, b) == 1 ? 4 : inet_pton(AF_INET6, s, b) == 1 ? 16 : 0;
	if (out)
		memcpy(out, b, n);
	return n;
}

/* cgroupid("/sys/fs/cgroup/unified/x"): the cgroup's id, a number the
 * compiler reads from the path. */
struct type sema_chk_cgroupid(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	struct node *a = sema_arg(call, 0);
	return literal_arg(c, call, a, "cgroupid() expects a string literal, a cgroup's path")
		       ? TYPE_U64
		       : TYPE_NONE;
}

/* macaddr(addr): the 6 bytes at addr in the process, printed as
 * 67:70:75:78:09:62; or the first 6 of a byte array read already (a
 * record's char mac[6]). */
struct type sema_chk_macaddr(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	struct node *a = sema_arg(call, 0);
	check_expr(c, a);
	bool bytes = (a->type.kind == TY_STR && a->type.count) || type_is_bytes(a->type);
	if (bytes && a->type.count < 6)
		terr(c, call->span, "macaddr() needs 6 bytes; this array has %u", a->type.count);
	else if (a->type.kind == TY_STR && !bytes)
		terr(c, call->span, "macaddr() reads 6 bytes at an address; a string is not one");
	else if (!bytes)
		sema_want_int(c, call, a, "address");
	return (struct type){ .kind = TY_MACADDR };
}

/* kptr(p), uptr(p): which address space a pointer is in, as bpftrace
 * says it: a typed pointer then reads the kernel's memory or the
 * process's; an integer passes unchanged (gpux reads through it with
 * its probe's own helper). */
struct type sema_chk_addr_space(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	struct node *a = sema_arg(call, 0);
	check_expr(c, a);
	if (a->type.kind == TY_POINTER) {
		struct type t = a->type;
		t.kernel_mem = call->u.call.name[0] == 'k';
		return t;
	}
	return sema_want_int(c, call, a, "pointer") ? a->type : TYPE_NONE;
}

/* x86-64's struct pt_regs, in order, 8 bytes each */
static const char *const regs[] = {
	"r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax",
	"cx", "dx", "si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss",
};

bool sema_pt_regs(struct tctx *c, struct type *out)
{
	if (!sema_script_record(c, "struct pt_regs")) {
		/* the kernel's types are not read: gpux's own layout */
		char def[512] = "struct pt_regs {";
		for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
			snprintf(def + strlen(def), sizeof(def) - strlen(def), " unsigned long %s;",
				 regs[i]);
		snprintf(def + strlen(def), sizeof(def) - strlen(def), " };");
		cdefs_add(c->prog, c->diags, def);
	}
	return sema_record_pointer(c, "struct pt_regs", 1, out);
}

int sema_reg_offset(const char *name)
{
	for (int i = 0; i < (int)(sizeof(regs) / sizeof(regs[0])); i++)
		if (!strcmp(regs[i], name))
			return 8 * i;
	return -1;
}

/* reg("ip"): a register of the task a uprobe or uretprobe interrupted. */
struct type sema_chk_reg(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	struct node *a = sema_arg(call, 0);
	const struct provider *p = c->probe->u.probe.attach->u.attach.prov;
	char pb[64];
	if (a->kind != N_STR) {
		check_expr(c, a);
		terr(c, a->span, "reg() expects a register name as a string literal");
		return TYPE_U64;
	}
	a->type = TYPE_STR;
	if (sema_reg_offset(a->u.str.s) < 0)
		terr(c, call->span, "'%s' is not a valid register on this architecture (x86_64)",
		     a->u.str.s);
	/* the registers where a kprobe, uprobe, usdt probe, breakpoint or
	 * sample fired: the probe's context holds them first */
	if (!p || (!p->regs && p->syntax != SYN_USDT && p->syntax != SYN_WATCHPOINT &&
		   p->attach != ATTACH_PERF_EVENT))
		terr(c, call->span, "reg can not be used with \"%s\" probes",
		     probe_name(c, pb, sizeof(pb)));
	return TYPE_U64;
}

int sema_signal_number(const char *name)
{
	static const char *const sigs[] = {
		[1] = "HUP", [2] = "INT", [3] = "QUIT", [4] = "ILL", [5] = "TRAP",
		[6] = "ABRT", [7] = "BUS", [8] = "FPE", [9] = "KILL", [10] = "USR1",
		[11] = "SEGV", [12] = "USR2", [13] = "PIPE", [14] = "ALRM", [15] = "TERM",
		[16] = "STKFLT", [17] = "CHLD", [18] = "CONT", [19] = "STOP", [20] = "TSTP",
		[21] = "TTIN", [22] = "TTOU", [23] = "URG", [24] = "XCPU", [25] = "XFSZ",
		[26] = "VTALRM", [27] = "PROF", [28] = "WINCH", [29] = "IO", [30] = "PWR",
		[31] = "SYS",
	};
	if (!strncmp(name, "SIG", 3))
		name += 3;
	for (int i = 1; i < (int)(sizeof(sigs) / sizeof(sigs[0])); i++)
		if (!strcmp(sigs[i], name))
			return i;
	return -1;
}

/* signal(SIG): bpf_send_signal to the task a kernel probe interrupted,
 * by name ("SIGUSR1", "USR1") or number, with --unsafe as in bpftrace. */
struct type sema_chk_signal(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	struct node *a = sema_arg(call, 0);
	const struct provider *p = c->probe->u.probe.attach->u.attach.prov;
	char pb[64];
	if (!c->prog->unsafe) {
		struct diag *dg = terr(c, call->span,
				       "signal() is an unsafe function being used in safe mode");
		if (dg)
			diag_hint(dg, "run gpux with --unsafe to let the program send signals");
	}
	if (!p || p->runner != RUNNER_KERNEL)
		terr(c, call->span, "signal can not be used with \"%s\" probes",
		     probe_name(c, pb, sizeof(pb)));
	else if (p->attach == ATTACH_ITER) /* the current task is the one reading it */
		diag_hint(terr(c, call->span, "signal can not be used with \"%s\" probes",
			       probe_name(c, pb, sizeof(pb))),
			  "an iterator runs in the task that reads it (gpux, or a pinned "
			  "file's reader), not in the task it visits");
	if (a->kind == N_STR) {
		a->type = TYPE_STR;
		if (sema_signal_number(a->u.str.s) < 0)
			terr(c, call->span, "%s is not a valid signal", a->u.str.s);
	} else if (sema_want_int(c, call, a, "signal number")) {
		int64_t v;
		if (const_int(a, &v) && (v < 1 || v > 64))
			terr(c, call->span, "%lld is not a valid signal", (long long)v);
	}
	return TYPE_VOID;
}

/* bswap(x): the bytes of x in reverse order, within x's own width. */
struct type sema_chk_bswap(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	struct node *a = sema_arg(call, 0);
	if (!sema_want_int(c, call, a, "value"))
		return TYPE_NONE;
	return a->type;
}

/* unwatch(addr): the watchpoints at addr are removed (by the controller,
 * after the record), wherever the call runs on the host. */
struct type sema_chk_unwatch(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	struct node *a = sema_arg(call, 0);
	check_expr(c, a);
	if (a->type.kind != TY_POINTER)
		sema_want_int(c, call, a, "address");
	return TYPE_VOID;
}

/* strerror(n): error number n, printed as the C library's text for it. */
struct type sema_chk_strerror(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	sema_want_int(c, call, sema_arg(call, 0), "error number");
	return (struct type){ .kind = TY_ERRNO };
}

/* cgroup_path(id[, "glob"]): a cgroup id, printed as its directory in
 * each mounted hierarchy (those the glob names), found when printed. */
struct type sema_chk_cgroup_path(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	sema_want_int(c, call, sema_arg(call, 0), "cgroup id");
	struct node *g = sema_arg(call, 1);
	if (!g)
		return (struct type){ .kind = TY_CGROUP_PATH };
	if (!sema_str_literal(c, g)) {
		check_expr(c, g);
		terr(c, g->span, "cgroup_path() expects a string literal as its filter");
		return TYPE_NONE;
	}
	g->type = TYPE_STR;
	return (struct type){ .kind = TY_CGROUP_PATH, .name = g->u.str.s };
}

/* path(P): the path of a kernel struct path P reached from ctx
 * (ctx->file->f_path), written by the kernel's d_path, which it lets
 * only iterators call among gpux's probes. */
struct type sema_chk_path(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	struct node *a = sema_arg(call, 0);
	check_expr(c, a);
	const struct attach *at = &c->probe->u.probe.attach->u.attach;
	if (!at->prov || at->prov->attach != ATTACH_ITER) {
		/* bpftrace 0.17's words, less the probes gpux lacks */
		terr(c, call->span, "The path function can only be used with 'iter' probes");
		return TYPE_NONE;
	}
	if (a->type.kind != TY_RECORD || !a->type.rec || strcmp(a->type.rec->name, "struct path") ||
	    !a->type.kernel_mem) {
		char tb[64];
		terr(c, a->span, "path() expects a kernel struct path (%s provided)",
		     type_str(a->type, tb, sizeof(tb)));
		return TYPE_NONE;
	}
	return TYPE_STR;
}

/* strcontains(haystack, needle): 1 when needle occurs in haystack. The
 * needle is a literal in gpux (a string known when compiling): each
 * place it may start is compared against its bytes. */
struct type sema_chk_strcontains(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	char b[64];
	struct node *h = sema_arg(call, 0), *n = sema_arg(call, 1);
	check_expr(c, h);
	if (h->type.kind != TY_STR && h->type.kind != TY_NONE)
		terr(c, h->span, "strcontains() expects a string (%s supplied)", tname(h->type, b));
	if (!sema_str_literal(c, n)) {
		check_expr(c, n);
		terr(c, n->span, "strcontains() takes a string literal as its needle in gpux");
		return TYPE_U64;
	}
	n->type = TYPE_STR;
	return TYPE_U64;
}

/* strncmp(a, b, n): 0 when the strings agree in their first n bytes (or
 * up to an end both reach together), 1 otherwise; n is a literal, as
 * bpftrace 0.17 wants it. */
struct type sema_chk_strncmp(struct tctx *c, struct node *call, const struct fn *fn)
{
	(void)fn;
	char b[64];
	for (int i = 0; i < 2; i++) {
		struct node *s = sema_arg(call, i);
		check_expr(c, s);
		if (s->type.kind != TY_STR && s->type.kind != TY_NONE)
			terr(c, s->span, "strncmp() expects a string (%s supplied)", tname(s->type, b));
	}
	struct node *n = sema_arg(call, 2);
	check_expr(c, n);
	if (n->kind != N_INT)
		terr(c, n->span, "strncmp() expects an integer literal as its length");
	return TYPE_U64;
}
