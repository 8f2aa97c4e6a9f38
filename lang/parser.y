/* gpux grammar: bpftrace's language with C precedence. Lists are built
 * left-recursively with a tail pointer so long programs cost no stack. */
%code requires {
#include <stdint.h>
#include "ast.h"
#include "parse.h"
typedef void *yyscan_t;
struct nlist { struct node *head, *tail; };
}

%code provides {
int yylex(YYSTYPE *yylval, YYLTYPE *yylloc, yyscan_t scanner);
}

%code {
#include <string.h>

static void yyerror(YYLTYPE *loc, yyscan_t scanner, struct parse_ctx *ctx,
		    const char *msg);
static struct node *mk(struct parse_ctx *ctx, enum node_kind kind,
		       struct span sp);
static struct node *mk_expr(struct parse_ctx *ctx, enum node_kind kind,
			    struct span sp, struct node *a, struct node *b,
			    struct node *c);
static struct nlist list1(struct node *n);
static struct nlist list_add(struct nlist l, struct node *n);
#define CHECK_DEPTH(n) do { if (!(n)) YYABORT; } while (0)
}

%define api.pure full
%define parse.error custom
%define parse.lac full
%define api.location.type {struct span}
%locations
%initial-action { @$ = (struct span){ 1, 1, 1, 1 }; }
%lex-param {yyscan_t scanner}
%parse-param {yyscan_t scanner} {struct parse_ctx *ctx}

%union {
	struct node *node;
	struct nlist list;
	char *str;
	struct { const char *s; size_t len; } strv;
	uint64_t num;
	int op;
}

%token END 0 "end of file"
%token LEXERR "invalid token"
%token START_PROGRAM START_STMTS
%token <str> ATTACH "attach point"
%token <str> IDENT "identifier"
%token <str> VAR "variable"
%token <str> MAP "map"
%token <str> CASTTYPE "integer type"
%token <strv> STRING "string"
%token <num> INT "integer"
%token <num> POSITIONAL "positional parameter"
%token POSCOUNT "$#"
%token PRED_BEGIN "predicate"
%token PRED_END "end of predicate"
%token IF "if" ELSE "else" UNROLL "unroll" FOR "for" WHILE "while"
%token RETURN "return"
%token STRUCT "struct" UNION "union" SIZEOF "sizeof"
%token <str> TYPENAME "type name"
%token EQ "==" NE "!=" LE "<=" GE ">=" LAND "&&" LOR "||"
%token SHL "<<" SHR ">>" INC "++" DEC "--" DOTDOT ".." ARROW "->"
%token <op> COMPOUND "compound assignment"

%type <node> probe pred block simple compound if_stmt expr unary
%type <node> postfix primary map lvalue
%type <list> probes attach_list stmts stmt_seq args arg_list
%type <str> ctype
%type <num> stars

%right '?' ':'
%left LOR
%left LAND
%left '|'
%left '^'
%left '&'
%left EQ NE
%left '<' '>' LE GE
%left SHL SHR
%left '+' '-'
%left '*' '/' '%'
%precedence MAP_ALONE
%precedence '['

%%

start
	: START_PROGRAM probes	{ ctx->prog->probes = $2.head; }
	| START_STMTS stmts	{ ctx->stmts = $2.head; }
	;

probes
	: probe			{ $$ = list1($1); }
	| probes probe		{ $$ = list_add($1, $2); }
	;

probe
	: attach_list pred block {
		$$ = mk(ctx, N_PROBE, @$);
		$$->u.probe.attach = $1.head;
		$$->u.probe.pred = $2;
		$$->u.probe.body = $3;
	}
	;

attach_list
	: ATTACH {
		struct node *n = mk(ctx, N_ATTACH, @1);
		n->u.attach.text = $1;
		$$ = list1(n);
	}
	| attach_list ',' ATTACH {
		struct node *n = mk(ctx, N_ATTACH, @3);
		n->u.attach.text = $3;
		$$ = list_add($1, n);
	}
	;

pred
	: %empty			{ $$ = NULL; }
	| PRED_BEGIN expr PRED_END	{ $$ = $2; }
	;

block
	: '{' stmts '}' {
		$$ = mk(ctx, N_BLOCK, @$);
		$$->u.block.stmts = $2.head;
	}
	;

stmts
	: stmt_seq		{ $$ = $1; }
	| stmt_seq simple	{ $$ = list_add($1, $2); }
	;

stmt_seq
	: %empty			{ $$ = (struct nlist){ NULL, NULL }; }
	| stmt_seq simple ';'		{ $$ = list_add($1, $2); }
	| stmt_seq compound		{ $$ = list_add($1, $2); }
	| stmt_seq ';'			{ $$ = $1; }
	;

simple
	: expr {
		$$ = mk(ctx, N_EXPR_STMT, @$);
		$$->u.expr_stmt.expr = $1;
	}
	| lvalue '=' expr {
		$$ = mk(ctx, N_ASSIGN, @$);
		$$->u.assign.op = OP_ASSIGN;
		$$->u.assign.op_span = @2;
		$$->u.assign.target = $1;
		$$->u.assign.value = $3;
	}
	| lvalue COMPOUND expr {
		$$ = mk(ctx, N_ASSIGN, @$);
		$$->u.assign.op = $2;
		$$->u.assign.op_span = @2;
		$$->u.assign.target = $1;
		$$->u.assign.value = $3;
	}
	| RETURN {
		$$ = mk(ctx, N_RETURN, @$);
	}
	| RETURN expr {
		$$ = mk(ctx, N_RETURN, @$);
		$$->u.ret.value = $2;
	}
	;

lvalue
	: VAR {
		$$ = mk(ctx, N_VAR, @1);
		$$->u.var.name = $1;
	}
	| map	{ $$ = $1; }
	;

compound
	: if_stmt	{ $$ = $1; }
	| UNROLL '(' expr ')' block {
		$$ = mk(ctx, N_UNROLL, @$);
		$$->u.unroll.count = $3;
		$$->u.unroll.body = $5;
	}
	| FOR '(' VAR ':' expr DOTDOT expr ')' block {
		$$ = mk(ctx, N_FOR, @$);
		struct node *v = mk(ctx, N_VAR, @3);
		v->u.var.name = $3;
		$$->u.for_.var = v;
		$$->u.for_.lo = $5;
		$$->u.for_.hi = $7;
		$$->u.for_.body = $9;
	}
	| WHILE '(' expr ')' block {
		$$ = mk(ctx, N_WHILE, @$);
		$$->u.while_.cond = $3;
		$$->u.while_.body = $5;
	}
	;

if_stmt
	: IF '(' expr ')' block {
		$$ = mk(ctx, N_IF, @$);
		$$->u.if_.cond = $3;
		$$->u.if_.then = $5;
	}
	| IF '(' expr ')' block ELSE block {
		$$ = mk(ctx, N_IF, @$);
		$$->u.if_.cond = $3;
		$$->u.if_.then = $5;
		$$->u.if_.els = $7;
	}
	| IF '(' expr ')' block ELSE if_stmt {
		$$ = mk(ctx, N_IF, @$);
		$$->u.if_.cond = $3;
		$$->u.if_.then = $5;
		$$->u.if_.els = $7;
	}
	;

expr
	: unary			{ $$ = $1; }
	| expr '?' expr ':' expr {
		$$ = mk_expr(ctx, N_TERNARY, @$, $1, $3, $5);
		CHECK_DEPTH($$);
	}
	| expr LOR expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_LOR; }
	| expr LAND expr	{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_LAND; }
	| expr '|' expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_BOR; }
	| expr '^' expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_BXOR; }
	| expr '&' expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_BAND; }
	| expr EQ expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_EQ; }
	| expr NE expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_NE; }
	| expr '<' expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_LT; }
	| expr '>' expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_GT; }
	| expr LE expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_LE; }
	| expr GE expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_GE; }
	| expr SHL expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_SHL; }
	| expr SHR expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_SHR; }
	| expr '+' expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_ADD; }
	| expr '-' expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_SUB; }
	| expr '*' expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_MUL; }
	| expr '/' expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_DIV; }
	| expr '%' expr		{ $$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL); CHECK_DEPTH($$); $$->u.binop.op = OP_MOD; }
	;

unary
	: postfix		{ $$ = $1; }
	| '!' unary		{ $$ = mk_expr(ctx, N_UNOP, @$, $2, NULL, NULL); CHECK_DEPTH($$); $$->u.unop.op = OP_NOT; }
	| '~' unary		{ $$ = mk_expr(ctx, N_UNOP, @$, $2, NULL, NULL); CHECK_DEPTH($$); $$->u.unop.op = OP_BNOT; }
	| '-' unary		{ $$ = mk_expr(ctx, N_UNOP, @$, $2, NULL, NULL); CHECK_DEPTH($$); $$->u.unop.op = OP_NEG; }
	| '+' unary		{ $$ = mk_expr(ctx, N_UNOP, @$, $2, NULL, NULL); CHECK_DEPTH($$); $$->u.unop.op = OP_PLUS; }
	| INC unary {
		$$ = mk_expr(ctx, N_INCDEC, @$, $2, NULL, NULL);
		CHECK_DEPTH($$);
		$$->u.incdec.op = OP_INC;
		$$->u.incdec.prefix = true;
	}
	| DEC unary {
		$$ = mk_expr(ctx, N_INCDEC, @$, $2, NULL, NULL);
		CHECK_DEPTH($$);
		$$->u.incdec.op = OP_DEC;
		$$->u.incdec.prefix = true;
	}
	| '*' unary		{ $$ = mk_expr(ctx, N_UNOP, @$, $2, NULL, NULL); CHECK_DEPTH($$); $$->u.unop.op = OP_DEREF; }
	| '(' CASTTYPE ')' unary {
		$$ = mk_expr(ctx, N_CAST, @$, $4, NULL, NULL);
		CHECK_DEPTH($$);
		$$->u.cast.name = $2;
		type_from_cast_name($2, &$$->u.cast.to);
	}
	| '(' ctype stars ')' unary {
		/* to a pointer: resolved against the C definitions */
		$$ = mk_expr(ctx, N_CAST, @$, $5, NULL, NULL);
		CHECK_DEPTH($$);
		$$->u.cast.name = $2;
		$$->u.cast.stars = (int)$3;
		$$->u.cast.type_span = span_join(@2, @3);
	}
	| SIZEOF '(' ctype stars ')' {
		$$ = mk(ctx, N_SIZEOF, @$);
		$$->u.size_of.tname = $3;
		$$->u.size_of.stars = (int)$4;
		$$->u.size_of.type_span = @3;
	}
	| SIZEOF '(' ctype ')' {
		$$ = mk(ctx, N_SIZEOF, @$);
		$$->u.size_of.tname = $3;
		$$->u.size_of.type_span = @3;
	}
	| SIZEOF '(' expr ')' {
		$$ = mk_expr(ctx, N_SIZEOF, @$, $3, NULL, NULL);
		CHECK_DEPTH($$);
		$$->u.size_of.expr = $3;
	}
	;

ctype
	: CASTTYPE		{ $$ = $1; }
	| TYPENAME		{ $$ = $1; }
	| STRUCT IDENT		{ $$ = arena_printf(&ctx->prog->arena, "struct %s", $2); }
	| UNION IDENT		{ $$ = arena_printf(&ctx->prog->arena, "union %s", $2); }
	;

stars
	: '*'			{ $$ = 1; }
	| stars '*'		{ $$ = $1 + 1; }
	;

postfix
	: primary		{ $$ = $1; }
	| postfix INC {
		$$ = mk_expr(ctx, N_INCDEC, @$, $1, NULL, NULL);
		CHECK_DEPTH($$);
		$$->u.incdec.op = OP_INC;
	}
	| postfix DEC {
		$$ = mk_expr(ctx, N_INCDEC, @$, $1, NULL, NULL);
		CHECK_DEPTH($$);
		$$->u.incdec.op = OP_DEC;
	}
	| postfix '.' IDENT {
		$$ = mk_expr(ctx, N_FIELD, @$, $1, NULL, NULL);
		CHECK_DEPTH($$);
		$$->u.field.name = $3;
	}
	| postfix '.' INT {
		/* $t.0: a tuple's element */
		$$ = mk_expr(ctx, N_FIELD, @$, $1, NULL, NULL);
		CHECK_DEPTH($$);
		$$->u.field.index = $3 > 1000000 ? 1000000 : (int)$3;
		$$->u.field.name = arena_printf(&ctx->prog->arena, "%d", $$->u.field.index);
	}
	| postfix '[' expr ']' {
		$$ = mk_expr(ctx, N_BINOP, @$, $1, $3, NULL);
		CHECK_DEPTH($$);
		$$->u.binop.op = OP_INDEX;
	}
	| postfix ARROW IDENT {
		/* bpftrace 0.17 writes args->NAME */
		$$ = mk_expr(ctx, N_FIELD, @$, $1, NULL, NULL);
		CHECK_DEPTH($$);
		$$->u.field.name = $3;
		$$->u.field.arrow = true;
	}
	;

primary
	: INT {
		$$ = mk(ctx, N_INT, @$);
		$$->u.num.value = $1;
	}
	| STRING {
		$$ = mk(ctx, N_STR, @$);
		$$->u.str.s = $1.s;
		$$->u.str.len = $1.len;
	}
	| VAR {
		$$ = mk(ctx, N_VAR, @$);
		$$->u.var.name = $1;
	}
	| POSITIONAL {
		$$ = mk(ctx, N_POSITIONAL, @$);
		$$->u.positional.index = (int)$1;
	}
	| POSCOUNT {
		$$ = mk(ctx, N_POSITIONAL, @$);
		$$->u.positional.index = 0;
	}
	| map			{ $$ = $1; }
	| IDENT {
		$$ = mk(ctx, N_IDENT, @$);
		$$->u.ident.name = $1;
	}
	| IDENT '(' args ')' {
		$$ = mk_expr(ctx, N_CALL, @$, $3.head, NULL, NULL);
		CHECK_DEPTH($$);
		$$->u.call.name = $1;
		$$->u.call.args = $3.head;
		$$->u.call.nargs = ast_count($3.head);
	}
	| '(' expr ')'		{ $$ = $2; }
	| '(' expr ',' arg_list ')' {
		struct nlist l = list1($2);
		l.tail->next = $4.head;
		l.tail = $4.tail;
		$$ = mk_expr(ctx, N_TUPLE, @$, l.head, NULL, NULL);
		CHECK_DEPTH($$);
		$$->u.tuple.elems = l.head;
		$$->u.tuple.n = ast_count(l.head);
	}
	;

map
	: MAP %prec MAP_ALONE {
		$$ = mk(ctx, N_MAP, @$);
		$$->u.map.name = $1;
	}
	| MAP '[' arg_list ']' {
		$$ = mk_expr(ctx, N_MAP, @$, $3.head, NULL, NULL);
		CHECK_DEPTH($$);
		$$->u.map.name = $1;
		$$->u.map.keys = $3.head;
		$$->u.map.nkeys = ast_count($3.head);
	}
	;

args
	: %empty		{ $$ = (struct nlist){ NULL, NULL }; }
	| arg_list		{ $$ = $1; }
	;

arg_list
	: expr			{ $$ = list1($1); }
	| arg_list ',' expr	{ $$ = list_add($1, $3); }
	;

%%

static struct node *mk(struct parse_ctx *ctx, enum node_kind kind,
		       struct span sp)
{
	return ast_new(&ctx->prog->arena, kind, sp);
}

/* Children are only used to measure depth; the caller links them. The
 * depth of a node list argument is the deepest of its members. */
static int depth_of(const struct node *n, bool list)
{
	int d = 0;
	for (; n; n = list ? n->next : NULL)
		if (n->depth > d)
			d = n->depth;
	return d;
}

static struct node *mk_expr(struct parse_ctx *ctx, enum node_kind kind,
			    struct span sp, struct node *a, struct node *b,
			    struct node *c)
{
	bool list = kind == N_CALL || kind == N_MAP || kind == N_TUPLE;
	int d = depth_of(a, list);
	if (depth_of(b, false) > d)
		d = depth_of(b, false);
	if (depth_of(c, false) > d)
		d = depth_of(c, false);
	if (d + 1 > PARSE_MAX_DEPTH) {
		diag_error(ctx->diags, sp,
			   "expression nested too deeply (more than %d levels)",
			   PARSE_MAX_DEPTH);
		ctx->lex_errors++;
		return NULL;
	}
	struct node *n = mk(ctx, kind, sp);
	n->depth = d + 1;
	switch (kind) {
	case N_BINOP:
		n->u.binop.lhs = a;
		n->u.binop.rhs = b;
		break;
	case N_TERNARY:
		n->u.ternary.cond = a;
		n->u.ternary.then = b;
		n->u.ternary.els = c;
		break;
	case N_UNOP:
		n->u.unop.operand = a;
		break;
	case N_INCDEC:
		n->u.incdec.target = a;
		break;
	case N_CAST:
		n->u.cast.operand = a;
		break;
	case N_FIELD:
		n->u.field.base = a;
		n->u.field.index = -1;
		break;
	case N_SIZEOF:
		n->u.size_of.expr = a;
		break;
	default:
		break;
	}
	return n;
}

static struct nlist list1(struct node *n)
{
	return (struct nlist){ n, n };
}

static struct nlist list_add(struct nlist l, struct node *n)
{
	if (!n)
		return l;
	if (!l.head)
		return list1(n);
	l.tail->next = n;
	l.tail = n;
	return l;
}

static void yyerror(YYLTYPE *loc, yyscan_t scanner, struct parse_ctx *ctx,
		    const char *msg)
{
	(void)scanner;
	if (ctx->lex_errors)
		return;
	if (!strcmp(msg, "memory exhausted"))
		diag_error(ctx->diags, *loc, "program nested too deeply");
	else
		diag_error(ctx->diags, *loc, "%s", msg);
}

/* Token names without bison's quotes, as bpftrace prints them. */
static const char *tok_name(yysymbol_kind_t k, char *buf, size_t len)
{
	const char *s = yysymbol_name(k);
	size_t n = strlen(s);
	if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
		snprintf(buf, len, "%.*s", (int)(n - 2), s + 1);
		return buf;
	}
	return s;
}

static int yyreport_syntax_error(const yypcontext_t *pctx, yyscan_t scanner,
				 struct parse_ctx *ctx)
{
	(void)scanner;
	yysymbol_kind_t tok = yypcontext_token(pctx);
	if (ctx->lex_errors || tok == YYSYMBOL_LEXERR)
		return 0;
	if (tok == YYSYMBOL_YYEOF)
		ctx->incomplete = true;
	enum { MAXEXP = 5 };
	yysymbol_kind_t exp[YYNTOKENS];
	int nexp = yypcontext_expected_tokens(pctx, exp, YYNTOKENS);
	if (tok == YYSYMBOL_YYEOF && !ctx->seen_token && !ctx->stmt_mode) {
		diag_error_nospan(ctx->diags, "the program has no probes");
		return 0;
	}
	/* A long list of alternatives usually hides the one fix: closing
	 * the construct at hand, or the ';' between two statements. */
	const char *want = NULL, *t = yysymbol_name(tok);
	if (nexp >= MAXEXP) {
		if (tok == YYSYMBOL_YYEOF)
			want = "'}'";
		if (tok == YYSYMBOL_YYEOF && ctx->brace_depth == 0)
			want = "end of predicate";
		else if (!strcmp(t, "';'") || !strcmp(t, "'}'") ||
			 !strcmp(t, "'{'"))
			want = "')'";
		else if (!strcmp(t, "')'"))
			want = "..";
		else if (tok == YYSYMBOL_VAR || tok == YYSYMBOL_MAP ||
			 tok == YYSYMBOL_IDENT || tok == YYSYMBOL_IF ||
			 tok == YYSYMBOL_RETURN || tok == YYSYMBOL_FOR ||
			 tok == YYSYMBOL_UNROLL || tok == YYSYMBOL_WHILE)
			want = "';'";
	}
	for (int i = 0; want && i < nexp; i++)
		if (!strcmp(yysymbol_name(exp[i]), want)) {
			exp[0] = exp[i];
			nexp = 1;
			break;
		}
	char msg[512], name[64];
	size_t off = (size_t)snprintf(msg, sizeof(msg), "syntax error");
	if (tok != YYSYMBOL_YYEMPTY)
		off += (size_t)snprintf(msg + off, sizeof(msg) - off,
					", unexpected %s",
					tok_name(tok, name, sizeof(name)));
	/* Long lists of alternatives help nobody, as in bpftrace. */
	if (nexp > 0 && nexp < MAXEXP)
		for (int i = 0; i < nexp && off < sizeof(msg); i++)
			off += (size_t)snprintf(msg + off, sizeof(msg) - off,
						"%s%s", i ? " or " : ", expecting ",
						tok_name(exp[i], name, sizeof(name)));
	struct diag *dg = diag_error(ctx->diags, *yypcontext_location(pctx),
				     "%s", msg);
	if (tok == YYSYMBOL_YYEOF && !ctx->stmt_mode && ctx->brace_depth > 0 &&
	    ctx->open_brace.first_line)
		diag_hint(dg, "the probe's block opened at line %d, column %d is not closed",
			  ctx->open_brace.first_line, ctx->open_brace.first_column);
	return 0;
}
