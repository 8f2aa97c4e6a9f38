/* printf: the format string is parsed at compile time and each
 * conversion checked against its argument, as bpftrace does. */
#include <stdio.h>
#include <string.h>

#include "sema_types.h"

enum want { WANT_INT, WANT_STR, WANT_PTR, WANT_BUF };

struct printf_spec sema_printf_spec(const char *s, size_t len)
{
	struct printf_spec sp = { 0 };
	size_t i = 0;
	while (i < len && strchr("-+ #0", s[i]))
		sp.alt |= s[i++] == '#';
	while (i < len && s[i] >= '0' && s[i] <= '9')
		i++;
	sp.flags_width = i;
	if (i < len && s[i] == '.') {
		sp.precision = true;
		i++;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	static const char *const lengths[] = { "hh", "ll", "h", "l", "z", "j", "t" };
	for (size_t k = 0; k < sizeof(lengths) / sizeof(lengths[0]); k++) {
		size_t n = strlen(lengths[k]);
		if (i + n <= len && !strncmp(s + i, lengths[k], n)) {
			i += n;
			break;
		}
	}
	if (i >= len)
		return sp;
	sp.conv = s[i];
	sp.len = i + 1;
	return sp;
}

static bool conv_want(char conv, enum want *w)
{
	switch (conv) {
	case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'c':
		*w = WANT_INT;
		return true;
	case 's':
		*w = WANT_STR;
		return true;
	case 'p':
		*w = WANT_PTR;
		return true;
	case 'r':
		*w = WANT_BUF;
		return true;
	default:
		return false;
	}
}

static bool arg_fits(enum want w, struct type t)
{
	switch (w) {
	case WANT_INT: /* a pointer prints as its address (curtask) */
		return t.kind == TY_INT || t.kind == TY_POINTER ||
		       (t.kind == TY_PTR && t.name && !strncmp(t.name, "struct ", 7));
	case WANT_STR:
		return t.kind == TY_STR || type_prints_as_text(t) || t.kind == TY_INET ||
		       t.kind == TY_STACK || t.kind == TY_KSYM || t.kind == TY_USYM;
	case WANT_PTR:
		return t.kind == TY_INT || t.kind == TY_PTR || t.kind == TY_POINTER;
	case WANT_BUF:
		return t.kind == TY_BUF;
	}
	return false;
}

/* cat() and system() act in gpux, as root, on what a record says: a
 * probe whose records the traced program writes (the catalog's
 * RUNNER_TARGET: cuda:) could be made to name any file or command. */
static void check_acts_here(struct tctx *c, struct node *call, const char *who)
{
	if ((strcmp(who, "cat") && strcmp(who, "system")) || !c->probe)
		return;
	for (const struct node *a = c->probe->u.probe.attach; a; a = a->next) {
		const struct provider *p = a->u.attach.prov;
		if (p && p->runner == RUNNER_TARGET && p->place == PLACE_HOST) {
			struct diag *dg = terr(c, call->span,
					       "%s() cannot be used in a %s: probe", who, p->name);
			if (dg)
				diag_hint(dg, "its records come from the traced program, which could "
					  "make gpux %s; print what you need and act on it elsewhere",
					  !strcmp(who, "cat") ? "read any file" : "run any command");
			return;
		}
	}
}

void check_printf(struct tctx *c, struct node *call)
{
	struct node *fmt = call->u.call.args;
	const char *who = call->u.call.name; /* printf, cat or system */
	char b[64];
	check_acts_here(c, call, who);
	for (struct node *a = fmt ? fmt->next : NULL; a; a = a->next)
		check_expr(c, a);
	if (!fmt || fmt->kind != N_STR) {
		if (fmt)
			check_expr(c, fmt);
		terr(c, fmt ? fmt->span : call->span,
		     "%s: the first argument must be a format string literal", who);
		return;
	}
	fmt->type = TYPE_STR;
	const char *s = fmt->u.str.s;
	size_t len = fmt->u.str.len;
	struct node *a = fmt->next;
	int expected = 0, supplied = call->u.call.nargs - 1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '%')
			continue;
		if (i + 1 < len && s[i + 1] == '%') {
			i++;
			continue;
		}
		struct printf_spec sp = sema_printf_spec(s + i + 1, len - i - 1);
		char conv = sp.conv;
		size_t n = sp.len;
		enum want w;
		if (!n || !conv_want(conv, &w)) {
			/* not a conversion: the '%' is text, as bpftrace 0.17
			 * prints it ("100%", "%5|"); doubled for the printer */
			char *t = arena_alloc(&c->prog->arena, len + 2);
			memcpy(t, s, i + 1);
			memcpy(t + i + 1, s + i, len - i + 1);
			fmt->u.str.s = t;
			fmt->u.str.len = ++len;
			s = t;
			i++;
			continue;
		}
		expected++;
		if (a) {
			if (a->type.kind != TY_NONE && !arg_fits(w, a->type)) {
				struct diag *dg = terr(c, a->span,
					"%s: %%%.*s specifier expects a value of type %s (%s supplied)",
					who, (int)n, s + i + 1,
					w == WANT_STR ? "string" : w == WANT_PTR ? "pointer"
					: w == WANT_BUF ? "buffer" : "integer",
					tname(a->type, b));
				if (a->type.kind == TY_DIM3)
					diag_hint(dg, "print one field: .x, .y or .z");
			}
			a = a->next;
		}
		i += n;
	}
	if (supplied < expected)
		terr(c, call->span,
		     "%s: Not enough arguments for format string (%d supplied, %d expected)",
		     who, supplied, expected);
	else if (supplied > expected)
		terr(c, call->span,
		     "%s: Too many arguments for format string (%d supplied, %d expected)",
		     who, supplied, expected);
}
