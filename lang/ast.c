#include "ast.h"

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
