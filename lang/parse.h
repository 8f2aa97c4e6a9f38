/* Entry points of the parser: text in, AST and diagnostics out. */
#ifndef GPUX_PARSE_H
#define GPUX_PARSE_H

#include <stdbool.h>

#include "ast.h"
#include "diag.h"

/* Deepest expression nesting accepted; deeper input is refused with a
 * message instead of risking the stack of later recursive passes. */
#define PARSE_MAX_DEPTH 256
/* Macros expanding macros, at most this deep. */
#define PARSE_MAX_MACRO_DEPTH 16
/* Expansions in one program, at most: macros naming others several
 * times would otherwise grow exponentially. */
#define PARSE_MAX_MACRO_EXPANSIONS 4096

/* State shared by the flex scanner and the bison parser. */
struct parse_ctx {
	struct program *prog;
	struct diags *diags;
	bool stmt_mode;         /* parse a statement list (the REPL) */
	bool start_sent;        /* the mode token went out already */
	int lex_errors;         /* a lexical error silences the parse error */
	int brace_depth;
	bool incomplete;        /* input ended inside a construct */
	bool seen_token;        /* anything but blanks and comments yet */
	struct span last_tok;   /* the last token: end of input points after it */
	struct span open_brace; /* the '{' that opened the current probe body */
	struct span comment;    /* where the open comment began */
	struct node *stmts;     /* result in stmt_mode */
	/* C definitions before the probes */
	struct span cdef_start; /* where the open definition began */
	int cdef_depth;
	bool after_cdef;        /* a ';' now ends the definition */
	bool type_next;         /* "(name *": the name is a type */
	/* macros being expanded: the buffers to go back to */
	struct { const struct macro *macro; void *outer; } mstack[PARSE_MAX_MACRO_DEPTH];
	int mdepth;
	int mexpansions;
	struct span mspan;      /* where the outermost one was named */
};

/* Leave the macro bodies the scanner may still be reading (a parse
 * that stopped early). */
void lex_unwind(void *scanner);

/* Parse src->text into prog->probes. Returns 0 on success, -1 if
 * diagnostics were recorded. */
int parse_program(struct program *prog, struct diags *diags);

/* parse_program, also telling whether the input ended early (the REPL
 * then reads another line instead of reporting the error). */
int parse_program_ex(struct program *prog, struct diags *diags,
		     bool *incomplete);

/* Parse a statement list (REPL input); *out receives the statements.
 * *incomplete is set when the input ended early, so more lines may fix it. */
int parse_statements(struct program *prog, struct diags *diags,
		     struct node **out, bool *incomplete);

#endif
