#include "parse.h"

#include "parser.h"
#include "lexer.h"

static int run_parser(struct program *prog, struct diags *diags,
		      struct parse_ctx *ctx)
{
	yyscan_t scanner;
	if (yylex_init_extra(ctx, &scanner))
		return -1;
	/* yy_scan_bytes copies the text; the program keeps its own copy. */
	YY_BUFFER_STATE buf =
		yy_scan_bytes(prog->src.text, (int)prog->src.len, scanner);
	int errors_before = diags->errors;
	int rc = yyparse(scanner, ctx);
	lex_unwind(scanner);
	yy_delete_buffer(buf, scanner);
	yylex_destroy(scanner);
	if (rc != 0 && diags->errors == errors_before)
		diag_error_nospan(diags, "failed to parse the program");
	return rc == 0 && diags->errors == errors_before ? 0 : -1;
}

int parse_program(struct program *prog, struct diags *diags)
{
	bool incomplete;
	return parse_program_ex(prog, diags, &incomplete);
}

int parse_program_ex(struct program *prog, struct diags *diags,
		     bool *incomplete)
{
	struct parse_ctx ctx = { .prog = prog, .diags = diags };
	int rc = run_parser(prog, diags, &ctx);
	*incomplete = ctx.incomplete;
	return rc;
}

int parse_statements(struct program *prog, struct diags *diags,
		     struct node **out, bool *incomplete)
{
	struct parse_ctx ctx = { .prog = prog, .diags = diags,
				 .stmt_mode = true };
	int rc = run_parser(prog, diags, &ctx);
	*out = ctx.stmts;
	*incomplete = ctx.incomplete;
	return rc;
}
