#include "ast.h"

#include <string.h>

struct node *ast_new(struct arena *a, enum node_kind kind, struct span sp)
{
	struct node *n = arena_zalloc(a, sizeof(*n));
	n->kind = kind;
	n->span = sp;
	return n;
}

struct node *ast_append(struct node *a, struct node *b)
{
	if (!a)
		return b;
	struct node *t = a;
	while (t->next)
		t = t->next;
	t->next = b;
	return a;
}

unsigned ast_str_size(const struct node *e)
{
	if (e->kind == N_STR)
		return (unsigned)e->u.str.len + 1;
	if (e->kind == N_IDENT && e->u.ident.kind == ID_BUILTIN && !strcmp(e->u.ident.name, "comm"))
		return 16;
	return 0;
}

int ast_count(const struct node *list)
{
	int n = 0;
	for (; list; list = list->next)
		n++;
	return n;
}

const char *op_str(int op)
{
	switch (op) {
	case OP_EQ: return "==";
	case OP_NE: return "!=";
	case OP_LE: return "<=";
	case OP_GE: return ">=";
	case OP_LAND: return "&&";
	case OP_LOR: return "||";
	case OP_SHL: return "<<";
	case OP_SHR: return ">>";
	case OP_NEG: return "-";
	case OP_PLUS: return "+";
	case OP_INC: return "++";
	case OP_DEC: return "--";
	case OP_DEREF: return "*";
	case OP_INDEX: return "[]";
	case OP_ADD: return "+";
	case OP_SUB: return "-";
	case OP_MUL: return "*";
	case OP_DIV: return "/";
	case OP_MOD: return "%";
	case OP_BAND: return "&";
	case OP_BOR: return "|";
	case OP_BXOR: return "^";
	case OP_LT: return "<";
	case OP_GT: return ">";
	case OP_NOT: return "!";
	case OP_BNOT: return "~";
	case OP_ASSIGN: return "=";
	default: return "?";
	}
}

static void visit_list(struct node *n, ast_visit_fn fn, void *arg)
{
	for (; n; n = n->next)
		fn(n, arg);
}

void ast_visit_children(struct node *n, ast_visit_fn fn, void *arg)
{
	switch (n->kind) {
	case N_PROBE:
		visit_list(n->u.probe.attach, fn, arg);
		if (n->u.probe.pred)
			fn(n->u.probe.pred, arg);
		fn(n->u.probe.body, arg);
		break;
	case N_EXPR_STMT: fn(n->u.expr_stmt.expr, arg); break;
	case N_ASSIGN:
		fn(n->u.assign.target, arg);
		fn(n->u.assign.value, arg);
		break;
	case N_IF:
		fn(n->u.if_.cond, arg);
		fn(n->u.if_.then, arg);
		if (n->u.if_.els)
			fn(n->u.if_.els, arg);
		break;
	case N_UNROLL:
		fn(n->u.unroll.count, arg);
		fn(n->u.unroll.body, arg);
		break;
	case N_FOR:
		fn(n->u.for_.var, arg);
		fn(n->u.for_.lo, arg);
		fn(n->u.for_.hi, arg);
		fn(n->u.for_.body, arg);
		break;
	case N_WHILE:
		fn(n->u.while_.cond, arg);
		fn(n->u.while_.body, arg);
		break;
	case N_RETURN:
		if (n->u.ret.value)
			fn(n->u.ret.value, arg);
		break;
	case N_BLOCK: visit_list(n->u.block.stmts, fn, arg); break;
	case N_MAP: visit_list(n->u.map.keys, fn, arg); break;
	case N_FIELD: fn(n->u.field.base, arg); break;
	case N_BINOP:
		fn(n->u.binop.lhs, arg);
		fn(n->u.binop.rhs, arg);
		break;
	case N_UNOP: fn(n->u.unop.operand, arg); break;
	case N_TERNARY:
		fn(n->u.ternary.cond, arg);
		fn(n->u.ternary.then, arg);
		fn(n->u.ternary.els, arg);
		break;
	case N_CAST: fn(n->u.cast.operand, arg); break;
	case N_CALL: visit_list(n->u.call.args, fn, arg); break;
	case N_INCDEC: fn(n->u.incdec.target, arg); break;
	case N_TUPLE: visit_list(n->u.tuple.elems, fn, arg); break;
	case N_SIZEOF:
		if (n->u.size_of.expr)
			fn(n->u.size_of.expr, arg);
		break;
	default: /* leaves */
		break;
	}
}
