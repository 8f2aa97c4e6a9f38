/* The interactive prompt. Each entry is a whole program (probes) or
 * statements checked inside the current probe context; diagnostics go to
 * stderr in the usual format with "repl" as the file name and lines
 * counted from the entry's first line; results go to out. Nothing but
 * the context survives an entry: every entry is its own program. */
#include "catalog.h"
#include "repl.h"

#include <ctype.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "ast_dump.h"
#include "repl_priv.h"
#include "frontend.h"
#include "kernel_types.h"
#include "listing.h"
#include "parse.h"
#include "sema.h"
#include "uprobe_args.h"

#define PROMPT_MORE "  ...> "
#define DEFAULT_CONTEXT "gdev:kernel_entry"
#define HISTORY_FILE ".gpux_history"
#define HISTORY_MAX 1000
#define ENTRY_MAX (16u << 20)

/* ---- reading lines ---- */

volatile sig_atomic_t repl_interrupted;
#define interrupted repl_interrupted

/* Ctrl-C abandons the line (and an unfinished entry), as in a shell.
 * It runs while readline waits in read(), so touching its state is safe
 * in practice; readline's own handler would kill the process. */
static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
	if (write(STDOUT_FILENO, "\n", 1) < 0)
		return;
	rl_on_new_line();
	rl_replace_line("", 0);
	rl_set_prompt(PROMPT);
	rl_redisplay();
}

static bool blank(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return !*s;
}

static void remember(const char *line)
{
	HIST_ENTRY *h = history_length
				? history_get(history_base + history_length - 1)
				: NULL;
	if (!blank(line) && (!h || strcmp(h->line, line)))
		add_history(line);
}

/* One line without its newline (malloc'd), or NULL at end of input.
 * Plain mode prints no prompt, so piped sessions give clean output. */
static char *read_line(struct repl *r, const char *prompt, size_t *len)
{
	if (r->rl) {
		char *s = readline(prompt);
		if (s) {
			*len = strlen(s);
			remember(s);
		}
		r->eof = !s;
		return s;
	}
	char *s = NULL;
	size_t cap = 0;
	ssize_t n = getline(&s, &cap, r->in);
	if (n < 0) {
		free(s);
		r->eof = true;
		return NULL;
	}
	if (n > 0 && s[n - 1] == '\n')
		s[--n] = '\0';
	*len = (size_t)n;
	return s;
}

/* ---- telling a program from statements ---- */

static bool probe_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '*' ||
	       c == '?' || c == '[' || c == ']';
}

/* Decided up front from the first word, rather than by trying one parse
 * and then the other, so the diagnostics are those of what the user
 * meant and "incomplete" has one meaning. It is a program when the word
 * is a provider followed by ':' ("gdev:access", "interval:s:1"), BEGIN
 * or END, or any word followed by '{' or ',' (never the start of a
 * statement, so "kernel_entry {" gets the program's probe error).
 * Statements start otherwise: @, $, a keyword, a call, an expression. */
bool repl_looks_like_program(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	const char *w = s;
	while (probe_word_char(*s))
		s++;
	size_t n = (size_t)(s - w);
	if (n == 0)
		return false;
	if (*s == ':')
		return true;
	char word[32]; /* a bare probe (BEGIN, END) */
	if (n < sizeof(word)) {
		memcpy(word, w, n);
		word[n] = 0;
		const struct provider *p = catalog_provider(word);
		if (p && p->syntax == SYN_BARE)
			return true;
	}
	while (isspace((unsigned char)*s))
		s++;
	return *s == '{' || *s == ',';
}

/* ---- checking ---- */

/* The probe statements are checked in: the context's attach points
 * around them, spanning the statements (it resolved once already, in
 * :probe, so no diagnostic should point at it). */
static struct node *context_probe(struct repl *r, struct program *prog,
				  struct node *stmts)
{
	struct node *last = stmts;
	while (last->next)
		last = last->next;
	struct span sp = span_join(stmts->span, last->span);
	struct node *p = ast_new(&prog->arena, N_PROBE, sp);
	const char *s = r->ctx;
	while (*s) {
		size_t n = strcspn(s, ",");
		struct node *a = ast_new(&prog->arena, N_ATTACH, sp);
		a->u.attach.text = arena_strndup(&prog->arena, s, n);
		p->u.probe.attach = ast_append(p->u.probe.attach, a);
		s += n + (s[n] == ',');
	}
	p->u.probe.body = ast_new(&prog->arena, N_BLOCK, sp);
	p->u.probe.body->u.block.stmts = stmts;
	return p;
}

/* "uint64 lane-varying"; uniformity only means something on the device. */
static void put_value_type(FILE *out, const struct node *n, bool device)
{
	char buf[64];
	fputs(type_str(n->type, buf, sizeof(buf)), out);
	if (device)
		fputs(n->unif == UNIF_VARYING ? " lane-varying" : " warp-uniform", out);
}

/* Maps with a known value type, as -d types lists them; returns how
 * many (a map only read, as in "print(@)", has no type to show). */
static int put_maps(FILE *out, const struct program *prog)
{
	int lines = 0;
	for (const struct map_info *m = prog->maps; m; m = m->next)
		if (m->value.kind != TY_NONE) {
			ast_dump_map(out, m);
			lines++;
		}
	return lines;
}

static bool var_seen_before(const struct node *stmts, const struct node *s)
{
	for (const struct node *t = stmts; t != s; t = t->next)
		if (t->kind == N_ASSIGN && t->u.assign.target->kind == N_VAR &&
		    !strcmp(t->u.assign.target->u.var.name,
			    s->u.assign.target->u.var.name))
			return true;
	return false;
}

/* What an accepted entry defined: its maps, and the $variables its
 * top-level statements assign; "ok" when there is neither. */
static void summary(struct repl *r, const struct program *prog,
		    const struct node *stmts)
{
	int lines = 0;
	for (const struct node *s = stmts; s; s = s->next) {
		if (s->kind != N_ASSIGN || s->u.assign.target->kind != N_VAR ||
		    var_seen_before(stmts, s))
			continue;
		fprintf(r->out, "$%s :: ", s->u.assign.target->u.var.name);
		put_value_type(r->out, s->u.assign.target,
			       place_is_device(r->place));
		fputc('\n', r->out);
		lines++;
	}
	lines += put_maps(r->out, prog);
	if (!lines)
		fputs("ok\n", r->out);
}

enum verdict { DONE, MORE };

/* An entry of gdev: probes checked with no program running: kept for
 * :run, which attaches it before the program's first launch. */
static bool queue_device(struct repl *r, const struct program *prog, const char *text,
			 size_t len)
{
	for (const struct node *p = prog->probes; p; p = p->next)
		if (p->kind != N_PROBE || !place_is_device(p->u.probe.place))
			return false;
	return repl_strs_add(&r->queued, text, len);
}

bool repl_strs_add(struct repl_strs *l, const char *s, size_t len)
{
	char **v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v)
		return false;
	l->v = v;
	if (!(v[l->n] = strndup(s, len)))
		return false;
	l->n++;
	return true;
}

void repl_strs_free(struct repl_strs *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* Parse and check one entry; MORE when it is unfinished and more lines
 * may finish it (never when final: end of input or an empty line). */
static enum verdict check_entry(struct repl *r, const char *text, size_t len,
				bool final)
{
	if (memchr(text, '\0', len)) {
		fputs(SRC_NAME ": ERROR: the input contains a NUL byte\n", stderr);
		return DONE;
	}
	struct program *prog = program_new(SRC_NAME, text, len);
	if (!prog)
		return DONE;
	/* the kernel's types and a uprobe's DWARF args, as gpux -e reads them */
	prog->kernel_types = &kernel_types_btf;
	prog->dwarf_args = uprobe_dwarf_args;
	prog->object_size = uprobe_object_size;
	prog->dwarf_record = uprobe_dwarf_record;
	struct diags d;
	diags_init(&d, &prog->arena);
	bool whole = repl_looks_like_program(prog->src.text), incomplete = false;
	struct node *stmts = NULL;
	int rc = whole ? parse_program_ex(prog, &d, &incomplete)
		       : parse_statements(prog, &d, &stmts, &incomplete);
	if (rc && incomplete && !final) {
		program_free(prog);
		return MORE;
	}
	if (rc == 0 && stmts)
		prog->probes = context_probe(r, prog, stmts);
	if (rc == 0 && prog->probes)
		rc = sema_run(prog, &d);
	diags_print(&d, &prog->src, stderr);
	for (const struct map_info *m = prog->maps; rc == 0 && m; m = m->next)
		repl_remember_map(r, m->name);
	if (rc == 0 && whole && r->live && live_running(r->live)) {
		live_attach(r->live, text, len);
	} else if (rc == 0 && prog->probes) {
		summary(r, prog, stmts);
		/* the program has ended: kept for the next one, as before :run */
		if (whole && queue_device(r, prog, text, len) && r->live)
			fputs("gpux: the program has exited: the probe attaches at the next :run\n",
			      stderr);
	}
	program_free(prog);
	return DONE;
}

/* Append "\n" and line to the entry; false (entry dropped) if too long. */
static bool append_line(char **text, size_t *len, const char *line,
			size_t n)
{
	char *t = *len + n + 2 <= ENTRY_MAX ? realloc(*text, *len + n + 2) : NULL;
	if (!t) {
		fputs(SRC_NAME ": ERROR: the entry is too long\n", stderr);
		return false;
	}
	t[(*len)++] = '\n';
	memcpy(t + *len, line, n);
	*len += n;
	t[*len] = '\0';
	*text = t;
	return true;
}

/* Check an entry starting with line (taken over), reading continuation
 * lines while it is unfinished. Returns a line read but not used: the
 * first line after a Ctrl-C, which abandons the entry and starts the
 * next one. */
static char *run_entry(struct repl *r, char *text, size_t len, size_t *next_len)
{
	char *next = NULL;
	while (check_entry(r, text, len, false) == MORE) {
		size_t n = 0;
		interrupted = 0;
		r->pending = text;
		char *line = read_line(r, PROMPT_MORE, &n);
		r->pending = NULL;
		if (interrupted) {
			next = line;
			*next_len = n;
			break;
		}
		if (!line || blank(line)) {
			free(line);
			check_entry(r, text, len, true);
			break;
		}
		bool ok = append_line(&text, &len, line, n);
		free(line);
		if (!ok)
			break;
	}
	free(text);
	return next;
}

/* ---- commands ---- */

static void cmd_help(struct repl *r, const char *arg);

/* Set the context to PROBE after checking "PROBE {}" as a program. */
static void cmd_probe(struct repl *r, const char *arg)
{
	if (!*arg) {
		fprintf(r->out, "%s (%s)\n", r->ctx, place_name(r->place));
		return;
	}
	char *text = malloc(strlen(arg) + 4);
	if (!text)
		return;
	sprintf(text, "%s {}", arg);
	struct program *prog = program_new(SRC_NAME, text, strlen(text));
	free(text);
	if (!prog)
		return;
	struct diags d;
	diags_init(&d, &prog->arena);
	int rc = frontend_check(prog, &d, FE_STOP_SEMA);
	struct node *p = prog->probes;
	if (rc == 0 && (p->next || p->u.probe.pred)) {
		diag_error_nospan(&d, "':probe' takes the attach points of one probe, "
				  "without a predicate");
		rc = -1;
	}
	diags_print(&d, &prog->src, stderr);
	if (rc == 0) {
		size_t n = 0;
		for (struct node *a = p->u.probe.attach; a; a = a->next)
			n += strlen(a->u.attach.text) + 1;
		char *ctx = malloc(n);
		if (ctx) {
			*ctx = '\0';
			for (struct node *a = p->u.probe.attach; a; a = a->next)
				strcat(strcat(ctx, a == p->u.probe.attach ? "" : ","),
				       a->u.attach.text);
			free(r->ctx);
			r->ctx = ctx;
			r->place = p->u.probe.place;
			fprintf(r->out, "%s (%s)\n", r->ctx, place_name(r->place));
		}
	}
	program_free(prog);
}

static void cmd_type(struct repl *r, const char *arg)
{
	struct program *prog = program_new(SRC_NAME, arg, strlen(arg));
	if (!prog)
		return;
	prog->kernel_types = &kernel_types_btf;
	struct diags d;
	diags_init(&d, &prog->arena);
	struct node *stmts = NULL;
	bool incomplete;
	int rc = parse_statements(prog, &d, &stmts, &incomplete);
	if (rc == 0 && (!stmts || stmts->next || stmts->kind != N_EXPR_STMT)) {
		diag_error_nospan(&d, "':type' takes one expression, as in ':type lane'");
		rc = -1;
	}
	struct node *e = rc == 0 ? stmts->u.expr_stmt.expr : NULL;
	if (e) {
		prog->probes = context_probe(r, prog, stmts);
		rc = sema_run(prog, &d);
	}
	diags_print(&d, &prog->src, stderr);
	if (rc == 0) {
		put_value_type(r->out, e, place_is_device(r->place));
		fputc('\n', r->out);
	}
	program_free(prog);
}

static void cmd_list(struct repl *r, const char *arg)
{
	bool verbose = !strncmp(arg, "-v", 2) &&
		       (!arg[2] || isspace((unsigned char)arg[2]));
	if (verbose)
		for (arg += 2; isspace((unsigned char)*arg); arg++)
			;
	if (listing_print(r->out, *arg ? arg : NULL, verbose, false) == 0 && *arg)
		fprintf(stderr, "gpux: ERROR: no probes match '%s'\n", arg);
}

static void cmd_quit(struct repl *r, const char *arg)
{
	(void)arg;
	r->quit = true;
}

static const struct repl_command commands[] = {
	{ "help", "h", "", "this text", cmd_help },
	{ "probe", "p", "[PROBE]", "show or set the probe statements are checked in",
	  cmd_probe },
	{ "type", "t", "EXPR", "type of EXPR in that probe; on the device, "
	  "warp-uniform or lane-varying", cmd_type },
	{ "list", "l", "[-v] [GLOB]", "list probes, as gpux -l [-v]", cmd_list },
	{ "complete", "", "TEXT", "the completions of TEXT, as Tab would offer them",
	  repl_cmd_complete },
	{ "quit", "q", "", "leave (Ctrl-D too); a program still running is ended",
	  cmd_quit },
	REPL_LIVE_COMMANDS
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

const struct repl_command *repl_commands(size_t *n)
{
	*n = NCOMMANDS;
	return commands;
}

static void cmd_help(struct repl *r, const char *arg)
{
	(void)arg;
	if (r->live)
		fputs("A program runs under gpux. Enter a gdev: probe to attach it:\n"
		      "  gdev:kernel_exit { @[kernel] = count(); }\n"
		      "kernels launched from then on run with it. @name prints a map as it\n"
		      "is now; maps live for the session.\n", r->out);
	else
		fprintf(r->out,
			"Enter a probe to check it:  gdev:access /store/ { @b[kernel] = sum(size); }\n"
			"or statements, checked in the current probe (now %s):  @w[warp] = count();\n"
			"Each entry is checked on its own: maps and $variables are not\n"
			"remembered from one entry to the next; only the probe is.\n"
			"Start a program (:run CMD, or gpux --repl -c CMD) to attach probes live.\n",
			r->ctx);
	fputs("Unclosed input continues on the next line; an empty line ends it.\n"
	      "Commands:\n", r->out);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		char head[48];
		snprintf(head, sizeof(head), ":%s %s", commands[i].name, commands[i].args);
		fprintf(r->out, "  %-28s %s\n", head, commands[i].help);
	}
}

static void run_command(struct repl *r, const char *line)
{
	const char *name = line + 1, *end = name;
	while (*end && !isspace((unsigned char)*end))
		end++;
	size_t n = (size_t)(end - name);
	char *arg = strdup(end + strspn(end, " \t\r\n\v\f"));
	if (!arg)
		return;
	/* Trailing blanks are no part of an argument. */
	for (size_t k = strlen(arg); k && isspace((unsigned char)arg[k - 1]); k--)
		arg[k - 1] = '\0';
	for (size_t i = 0; i < NCOMMANDS; i++) {
		const struct repl_command *c = &commands[i];
		if ((strlen(c->name) == n && !strncmp(c->name, name, n)) ||
		    (*c->alias && strlen(c->alias) == n && !strncmp(c->alias, name, n))) {
			c->fn(r, arg);
			free(arg);
			return;
		}
	}
	fprintf(stderr, "gpux: ERROR: unknown command ':%.*s' (:help lists them)\n",
		(int)n, name);
	free(arg);
}

/* "help" or "quit" alone, as other prompts take them: the command,
 * said once how it is written here. */
static bool bare_command(struct repl *r, const char *p)
{
	size_t n = strcspn(p, " \t\r\n\v\f");
	if (p[n + strspn(p + n, " \t\r\n\v\f")] ||
	    !((n == 4 && !strncmp(p, "help", 4)) || (n == 4 && !strncmp(p, "quit", 4))))
		return false;
	fprintf(stderr, "gpux: commands start with ':' here (:%.*s)\n", (int)n, p);
	char cmd[8];
	snprintf(cmd, sizeof(cmd), ":%.*s", (int)n, p);
	run_command(r, cmd);
	return true;
}

/* ---- the loop ---- */

/* Line editing, Ctrl-C handling and history, loaded from $HOME (none
 * without HOME; a missing or unreadable file starts it empty). */
static void readline_open(struct repl *r)
{
	rl_readline_name = "gpux";
	rl_catch_signals = 0;
	struct sigaction sa = { .sa_handler = on_sigint, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	stifle_history(HISTORY_MAX);
	/* Tab completes commands, probes and names (repl_complete.c), and
	 * never falls back to file names, which mean nothing here. */
	repl_complete_bind(r);
	rl_attempted_completion_function = repl_rl_complete;
	rl_completion_entry_function = repl_rl_no_match;
	rl_completer_word_break_characters = REPL_WORD_BREAKS;
	const char *home = getenv("HOME");
	if (!home || !*home)
		return;
	r->history = malloc(strlen(home) + sizeof(HISTORY_FILE) + 1);
	if (r->history) {
		sprintf(r->history, "%s/%s", home, HISTORY_FILE);
		read_history(r->history);
	}
}

/* Failing to save history is not worth an error at exit. */
static void readline_close(struct repl *r)
{
	if (r->history)
		write_history(r->history);
	free(r->history);
	clear_history();
	repl_complete_bind(NULL);
}

int repl_run(FILE *in, FILE *out, bool use_readline, const struct options *o)
{
	struct repl r = { .in = in, .out = out, .rl = use_readline,
			  .ctx = strdup(DEFAULT_CONTEXT), .place = PLACE_DEVICE, .o = o };
	if (!r.ctx)
		return 1;
	if ((o->command || o->cmd_argv || o->pid) && !(r.live = live_start(o, out, NULL, 0))) {
		free(r.ctx);
		return 1;
	}
	if (r.rl) {
		readline_open(&r);
		fprintf(out, "gpux %s: probes and statements, :help for commands, Ctrl-D to leave\n",
			GPUX_VERSION);
	} else if (r.live) {
		repl_live_signals();
	}
	size_t len = 0;
	char *line = NULL;
	while (!r.quit) {
		fflush(out);
		interrupted = 0;
		if (!line && !r.eof)
			line = read_line(&r, PROMPT, &len);
		if (!line) {
			if (r.rl)
				fputc('\n', stdout);
			break;
		}
		const char *p = line + strspn(line, " \t\r\n\v\f");
		if (r.live)
			live_poll(r.live);
		if (r.live && repl_live_map_line(&r, p)) {
			free(line);
			line = NULL;
		} else if (*p == ':' || !*p || bare_command(&r, p)) {
			if (*p == ':')
				run_command(&r, p);
			free(line);
			line = NULL;
		} else {
			line = run_entry(&r, line, len, &len);
		}
	}
	free(line);
	if (r.rl)
		readline_close(&r);
	live_end(r.live);
	repl_strs_free(&r.queued);
	repl_strs_free(&r.maps);
	free(r.ctx);
	fflush(out);
	return 0;
}
