#include "sema.h"

#include "cdefs.h"
#include <stdio.h>
#include <string.h>

int sema_run(struct program *prog, struct diags *diags)
{
	int before = diags->errors;
	if (cdefs_build(prog, diags) || diags->errors != before)
		return -1;
	sema_probes(prog, diags);
	/* Types run on the probes that resolved, so a bad attach point
	 * does not hide a type error elsewhere. */
	sema_types(prog, diags);
	if (diags->errors == before)
		sema_uniform(prog, diags);
	return diags->errors == before ? 0 : -1;
}

const struct field *probe_field(const struct node *probe, const char *name)
{
	const struct field *found = NULL;
	/* Tracepoint fields are not here: they are reached as args.NAME. */
	for (const struct node *a = probe->u.probe.attach; a; a = a->next) {
		const struct attach *at = &a->u.attach;
		for (int i = 0; i < at->nevents; i++) {
			const struct field *f = event_field(at->events[i], name);
			if (!f)
				return NULL;
			found = f;
		}
	}
	return found;
}

const char *event_str(const struct event *e, char *buf, size_t len)
{
	if (e->name)
		snprintf(buf, len, "%s:%s", e->prov->name, e->name);
	else
		snprintf(buf, len, "%s", e->prov->name);
	return buf;
}

bool const_int(const struct node *n, int64_t *out)
{
	int64_t a, b;
	switch (n->kind) {
	case N_INT:
		*out = (int64_t)n->u.num.value;
		return true;
	case N_UNOP:
		if (!const_int(n->u.unop.operand, &a))
			return false;
		switch (n->u.unop.op) {
		case OP_NEG: *out = (int64_t)(0 - (uint64_t)a); return true;
		case OP_PLUS: *out = a; return true;
		case OP_BNOT: *out = ~a; return true;
		case OP_NOT: *out = !a; return true;
		}
		return false;
	case N_BINOP:
		if (!const_int(n->u.binop.lhs, &a) ||
		    !const_int(n->u.binop.rhs, &b))
			return false;
		switch (n->u.binop.op) {
		case OP_ADD: *out = (int64_t)((uint64_t)a + (uint64_t)b); return true;
		case OP_SUB: *out = (int64_t)((uint64_t)a - (uint64_t)b); return true;
		case OP_MUL: *out = (int64_t)((uint64_t)a * (uint64_t)b); return true;
		case OP_SHL: *out = b >= 0 && b < 64 ? (int64_t)((uint64_t)a << b) : 0; return true;
		case OP_SHR: *out = b >= 0 && b < 64 ? (int64_t)((uint64_t)a >> b) : 0; return true;
		case OP_DIV: if (!b || (a == INT64_MIN && b == -1)) return false; *out = a / b; return true;
		case OP_MOD: if (!b || (a == INT64_MIN && b == -1)) return false; *out = a % b; return true;
		}
		return false;
	default:
		return false;
	}
}
