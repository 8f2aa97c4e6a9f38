#include "ast_dump.h"

#include <ctype.h>
#include <inttypes.h>

static void dump_list(FILE *out, const struct node *n, int indent,
		      bool types, bool device);

static void put_span(FILE *out, struct span sp)
{
	if (sp.first_line == sp.last_line)
		fprintf(out, " <%d:%d-%d>", sp.first_line, sp.first_column,
			sp.last_column);
	else
		fprintf(out, " <%d:%d-%d:%d>", sp.first_line, sp.first_column,
			sp.last_line, sp.last_column);
}

static void put_string(FILE *out, const char *s, size_t len)
{
	fputc('"', out);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		default:
			if (isprint(c))
				fputc(c, out);
			else
				fprintf(out, "\\x%02x", c);
		}
	}
	fputc('"', out);
}

static bool is_expr(enum node_kind k)
{
	return k >= N_INT;
}

/* The head line of a node, without the newline. */
static void put_head(FILE *out, const struct node *n)
{
	switch (n->kind) {
	case N_PROBE: fputs("probe", out); break;
	case N_ATTACH: fprintf(out, "attach %s", n->u.attach.text); break;
	case N_EXPR_STMT: fputs("expr", out); break;
	case N_ASSIGN:
		fprintf(out, "%s%s", n->u.assign.op == OP_ASSIGN ? "" : op_str(n->u.assign.op), "=");
		break;
	case N_IF: fputs("if", out); break;
	case N_UNROLL: fputs("unroll", out); break;
	case N_FOR: fputs("for", out); break;
	case N_WHILE: fputs("while", out); break;
	case N_RETURN: fputs("return", out); break;
	case N_BLOCK: fputs("block", out); break;
	case N_INT: fprintf(out, "int %" PRIu64, n->u.num.value); break;
	case N_STR:
		fputs("string ", out);
		put_string(out, n->u.str.s, n->u.str.len);
		break;
	case N_VAR: fprintf(out, "variable $%s", n->u.var.name); break;
	case N_POSITIONAL:
		if (n->u.positional.index)
			fprintf(out, "positional $%d", n->u.positional.index);
		else
			fputs("positional $#", out);
		break;
	case N_MAP: fprintf(out, "map @%s", n->u.map.name); break;
	case N_IDENT: {
		static const char *const kinds[] = {
			[ID_UNRESOLVED] = "identifier", [ID_FIELD] = "field",
			[ID_BUILTIN] = "builtin", [ID_DECISION] = "decision",
			[ID_HINT] = "hint",
		};
		fprintf(out, "%s %s", kinds[n->u.ident.kind], n->u.ident.name);
		break;
	}
	case N_FIELD: fprintf(out, "%s%s", n->u.field.arrow ? "->" : ".", n->u.field.name); break;
	case N_BINOP: fprintf(out, "binop %s", op_str(n->u.binop.op)); break;
	case N_UNOP: fprintf(out, "unop %s", op_str(n->u.unop.op)); break;
	case N_TERNARY: fputs("?:", out); break;
	case N_CAST:
		fprintf(out, "cast (%s%s%.*s)", n->u.cast.name, n->u.cast.stars ? " " : "",
			n->u.cast.stars > 8 ? 8 : n->u.cast.stars, "********");
		break;
	case N_SIZEOF:
		fprintf(out, "sizeof%s%s", n->u.size_of.tname ? " " : "",
			n->u.size_of.tname ? n->u.size_of.tname : "");
		break;
	case N_CALL: fprintf(out, "call %s", n->u.call.name); break;
	case N_TUPLE: fputs("tuple", out); break;
	case N_INCDEC:
		fprintf(out, "%s%s", n->u.incdec.prefix ? "pre" : "post",
			n->u.incdec.op == OP_INC ? "++" : "--");
		break;
	}
}

static void put_type(FILE *out, const struct node *n, bool device)
{
	char buf[64];
	fprintf(out, " :: %s", type_str(n->type, buf, sizeof(buf)));
	if (device)
		fputs(n->unif == UNIF_VARYING ? " varying" : " uniform", out);
}

void ast_dump_node(FILE *out, const struct node *n, int indent, bool types,
		   bool device)
{
	if (!n)
		return;
	fprintf(out, "%*s", indent, "");
	put_head(out, n);
	if (n->kind == N_PROBE && types)
		fprintf(out, " (%s)", place_name(n->u.probe.place));
	if (types && is_expr(n->kind))
		put_type(out, n, device);
	put_span(out, n->span);
	fputc('\n', out);

	int in = indent + 1;
	switch (n->kind) {
	case N_PROBE:
		device = types && place_is_device(n->u.probe.place);
		dump_list(out, n->u.probe.attach, in, types, device);
		if (n->u.probe.pred) {
			fprintf(out, "%*spredicate\n", in, "");
			ast_dump_node(out, n->u.probe.pred, in + 1, types, device);
		}
		ast_dump_node(out, n->u.probe.body, in, types, device);
		break;
	case N_ATTACH:
		break;
	case N_EXPR_STMT:
		ast_dump_node(out, n->u.expr_stmt.expr, in, types, device);
		break;
	case N_ASSIGN:
		ast_dump_node(out, n->u.assign.target, in, types, device);
		ast_dump_node(out, n->u.assign.value, in, types, device);
		break;
	case N_IF:
		ast_dump_node(out, n->u.if_.cond, in, types, device);
		ast_dump_node(out, n->u.if_.then, in, types, device);
		if (n->u.if_.els) {
			fprintf(out, "%*selse\n", in, "");
			ast_dump_node(out, n->u.if_.els, in + 1, types, device);
		}
		break;
	case N_UNROLL:
		ast_dump_node(out, n->u.unroll.count, in, types, device);
		ast_dump_node(out, n->u.unroll.body, in, types, device);
		break;
	case N_FOR:
		ast_dump_node(out, n->u.for_.var, in, types, device);
		ast_dump_node(out, n->u.for_.lo, in, types, device);
		ast_dump_node(out, n->u.for_.hi, in, types, device);
		ast_dump_node(out, n->u.for_.body, in, types, device);
		break;
	case N_WHILE:
		ast_dump_node(out, n->u.while_.cond, in, types, device);
		ast_dump_node(out, n->u.while_.body, in, types, device);
		break;
	case N_RETURN:
		ast_dump_node(out, n->u.ret.value, in, types, device);
		break;
	case N_BLOCK:
		dump_list(out, n->u.block.stmts, in, types, device);
		break;
	case N_MAP:
		dump_list(out, n->u.map.keys, in, types, device);
		break;
	case N_FIELD:
		ast_dump_node(out, n->u.field.base, in, types, device);
		break;
	case N_BINOP:
		ast_dump_node(out, n->u.binop.lhs, in, types, device);
		ast_dump_node(out, n->u.binop.rhs, in, types, device);
		break;
	case N_UNOP:
		ast_dump_node(out, n->u.unop.operand, in, types, device);
		break;
	case N_TERNARY:
		ast_dump_node(out, n->u.ternary.cond, in, types, device);
		ast_dump_node(out, n->u.ternary.then, in, types, device);
		ast_dump_node(out, n->u.ternary.els, in, types, device);
		break;
	case N_CAST:
		ast_dump_node(out, n->u.cast.operand, in, types, device);
		break;
	case N_CALL:
		dump_list(out, n->u.call.args, in, types, device);
		break;
	case N_TUPLE:
		dump_list(out, n->u.tuple.elems, in, types, device);
		break;
	case N_SIZEOF:
		if (n->u.size_of.expr)
			ast_dump_node(out, n->u.size_of.expr, in, types, device);
		break;
	case N_INCDEC:
		ast_dump_node(out, n->u.incdec.target, in, types, device);
		break;
	default:
		break;
	}
}

static void dump_list(FILE *out, const struct node *n, int indent,
		      bool types, bool device)
{
	for (; n; n = n->next)
		ast_dump_node(out, n, indent, types, device);
}

void ast_dump_map(FILE *out, const struct map_info *m)
{
	char buf[64];
	fprintf(out, "@%s", m->name);
	for (int i = 0; i < m->nkeys; i++)
		fprintf(out, "%s%s", i ? ", " : "[",
			type_str(m->keys[i], buf, sizeof(buf)));
	fprintf(out, "%s :: %s", m->nkeys > 0 ? "]" : "",
		type_str(m->value, buf, sizeof(buf)));
	const char *sep = " (";
	for (unsigned bit = PLACE_DEVICE; bit <= PLACE_HOST; bit <<= 1)
		if (m->places & bit) {
			fprintf(out, "%s%s", sep, place_name((enum place)bit));
			sep = ", ";
		}
	fputs(*sep == ',' ? ")\n" : "\n", out);
}

static void dump_maps(FILE *out, const struct program *prog)
{
	fputs("Maps\n", out);
	for (const struct map_info *m = prog->maps; m; m = m->next) {
		fputc(' ', out);
		ast_dump_map(out, m);
	}
}

void ast_dump(FILE *out, const struct program *prog, bool types)
{
	fputs("Program\n", out);
	dump_list(out, prog->probes, 1, types, false);
	if (types && prog->maps)
		dump_maps(out, prog);
}
