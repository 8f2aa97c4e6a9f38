/* Tab completion at the prompt, and :complete, which prints what Tab
 * would offer so scripts and tests can see it. What may come at the
 * cursor is read from the text before the word (after the lines of an
 * unfinished entry) by a light scan rather than the parser: text being
 * typed seldom parses. The names come from where the rest of gpux reads
 * them: the command table, the probe catalog, sema's functions and the
 * live session's maps. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include <readline/readline.h>

#include "repl_priv.h"
#include "sema.h"

#define BLANKS " \t\r\n\v\f"
#define MAX_ATTACH 16
#define MAX_EVENTS 64
#define MAX_REMEMBERED 256

/* One completion: the word typed so far and where candidates go. */
struct comp {
	struct repl *r;
	const char *word;
	struct repl_cands *c;
};

/* ---- candidates ---- */

/* Whether a followed by b starts with word, without joining them. */
static bool has_prefix(const char *a, const char *b, const char *word)
{
	size_t la = strlen(a), lw = strlen(word);
	if (lw <= la)
		return !strncmp(a, word, lw);
	return !strncmp(a, word, la) && !strncmp(b, word + la, lw - la);
}

/* Adds a followed by b when it fits the word; a failed allocation is
 * kept in c and ends the completion with an error. */
static void add(struct comp *k, const char *a, const char *b)
{
	struct repl_cands *c = k->c;
	if (c->failed || !has_prefix(a, b, k->word))
		return;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 32;
		char **v = realloc(c->v, cap * sizeof(*v));
		if (!v) {
			c->failed = true;
			return;
		}
		c->v = v;
		c->cap = cap;
	}
	size_t la = strlen(a), lb = strlen(b);
	char *s = malloc(la + lb + 1);
	if (!s) {
		c->failed = true;
		return;
	}
	memcpy(s, a, la);
	memcpy(s + la, b, lb + 1);
	c->v[c->n++] = s;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted, each once (an action and a function may share a name). */
static void sort_unique(struct repl_cands *c)
{
	if (!c->n)
		return;
	qsort(c->v, c->n, sizeof(*c->v), by_str);
	size_t j = 1;
	for (size_t i = 1; i < c->n; i++) {
		if (!strcmp(c->v[i], c->v[j - 1]))
			free(c->v[i]);
		else
			c->v[j++] = c->v[i];
	}
	c->n = j;
}

void repl_cands_free(struct repl_cands *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i]);
	free(c->v);
	*c = (struct repl_cands){ 0 };
}

/* ---- names ---- */

static void commands(struct comp *k)
{
	size_t n;
	const struct repl_command *cs = repl_commands(&n);
	for (size_t i = 0; i < n; i++)
		add(k, ":", cs[i].name);
}

/* "provider:" (BEGIN and END bare) until the word has a ':', then
 * that provider's "provider:event" names. */
static void probe_names(struct comp *k)
{
	size_t n;
	const char *colon = strchr(k->word, ':');
	if (!colon) {
		const struct provider *const *ps = catalog_providers(&n);
		for (size_t i = 0; i < n; i++)
			add(k, ps[i]->name, ps[i]->syntax == SYN_BARE ? "" : ":");
		return;
	}
	char prov[64];
	size_t pl = (size_t)(colon - k->word);
	/* a third part filters on the program's names, unknown here */
	if (pl + 2 > sizeof(prov) || strchr(colon + 1, ':'))
		return;
	memcpy(prov, k->word, pl);
	prov[pl] = '\0';
	const struct provider *p = catalog_provider(prov);
	if (!p || p->syntax != SYN_EVENT)
		return;
	memcpy(prov + pl, ":", 2); /* as typed: an alias stays one */
	const struct event *const *es = catalog_events(&n);
	for (size_t i = 0; i < n; i++)
		if (es[i]->name && es[i]->prov == p)
			add(k, prov, es[i]->name);
}

/* Every sigil+name in text ("@x", "$v"): the names an entry uses before
 * the word. The anonymous map is "@"; $1 and $# are no variables. */
static void text_names(struct comp *k, const char *text, char sigil)
{
	for (const char *s = strchr(text, sigil); s; s = strchr(s + 1, sigil)) {
		size_t n = strspn(s + 1, "abcdefghijklmnopqrstuvwxyz"
					 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
		char name[128];
		if (n + 2 > sizeof(name) || (sigil == '$' && (!n || (s[1] >= '0' && s[1] <= '9'))))
			continue;
		memcpy(name, s, n + 1);
		name[n + 1] = '\0';
		add(k, name, "");
	}
}

static void add_map(const char *name, void *arg)
{
	add(arg, "@", name);
}

/* The session's maps, those of entries checked before, and those the
 * entry names before the word. */
static void maps(struct comp *k, const char *text)
{
	live_map_names(k->r->live, add_map, k);
	for (size_t i = 0; i < k->r->maps.n; i++)
		add(k, "@", k->r->maps.v[i]);
	text_names(k, text, '@');
}

/* ---- inside a probe ---- */

/* What a probe's attach points resolve to, as far as the catalog says. */
struct pctx {
	const struct event *ev[MAX_EVENTS];
	size_t nev;
	unsigned place;
	bool tracepoint;
};

static void resolve(struct pctx *p, const char *s, size_t len)
{
	char buf[128];
	if (len >= sizeof(buf))
		return;
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *ev = strchr(buf, ':');
	if (ev) {
		*ev++ = '\0';
		ev[strcspn(ev, ":")] = '\0';
	}
	const struct provider *pr = catalog_provider(buf);
	if (!pr)
		return;
	p->place |= pr->place;
	p->tracepoint |= pr->syntax == SYN_TRACEPOINT;
	size_t n;
	const struct event *const *es = catalog_events(&n);
	for (size_t i = 0; i < n && p->nev < MAX_EVENTS; i++)
		if (es[i]->prov == pr &&
		    (pr->syntax != SYN_EVENT ||
		     (ev && es[i]->name && !fnmatch(ev, es[i]->name, 0))))
			p->ev[p->nev++] = es[i];
}

/* A field or action must be there in every event, as sema asks. */
static bool all_have_field(const struct pctx *p, const char *name,
			   const struct field **f)
{
	for (size_t i = 0; i < p->nev; i++)
		if (!(*f = event_field(p->ev[i], name)))
			return false;
	return p->nev > 0;
}

static bool all_bits(const struct pctx *p, bool decisions, unsigned bit)
{
	for (size_t i = 0; i < p->nev; i++)
		if (!((decisions ? p->ev[i]->decisions : p->ev[i]->actions) & bit))
			return false;
	return p->nev > 0;
}

/* base.x, .y, .z when base is a dim3 (threadIdx, a launch's grid). */
static void dim3_members(struct comp *k, const struct pctx *p)
{
	const char *dot = strrchr(k->word, '.');
	char base[64];
	size_t n = (size_t)(dot - k->word);
	if (n + 2 > sizeof(base))
		return;
	memcpy(base, k->word, n);
	base[n] = '\0';
	const struct builtin *b = catalog_builtin(base);
	const struct field *f = NULL;
	if ((b && (b->places & p->place) && b->type.kind == TY_DIM3) ||
	    (all_have_field(p, base, &f) && f->type.kind == TY_DIM3)) {
		memcpy(base + n, ".", 2);
		add(k, base, "x");
		add(k, base, "y");
		add(k, base, "z");
	}
}

/* An expression in the probe of the attach points att: text is the
 * entry before the word. */
static void expr(struct comp *k, const char *text, const char *const *att,
		 const size_t *attlen, size_t natt)
{
	struct pctx p = { .nev = 0 };
	for (size_t i = 0; i < natt; i++)
		resolve(&p, att[i], attlen[i]);
	if (!p.place)
		p.place = PLACE_ANY;
	if (k->word[0] == '@') {
		maps(k, text);
		return;
	}
	if (k->word[0] == '$') {
		text_names(k, text, '$');
		return;
	}
	if (strchr(k->word, '.')) {
		dim3_members(k, &p);
		return;
	}
	size_t n;
	const struct builtin *bs = catalog_builtins(&n);
	for (size_t i = 0; i < n; i++)
		if (bs[i].places & p.place)
			add(k, bs[i].name, "");
	unsigned places;
	const char *name;
	for (size_t i = 0; (name = sema_function(i, &places)); i++)
		if (places & p.place)
			add(k, name, "");
	const struct field *f;
	for (f = p.nev ? p.ev[0]->fields : NULL; f && f->name; f++) {
		const struct field *g;
		if (all_have_field(&p, f->name, &g))
			add(k, f->name, "");
	}
	const struct action *as = catalog_actions(&n);
	bool hints = false;
	for (size_t i = 0; i < n; i++)
		if (all_bits(&p, false, ACTION_BIT(as[i].id))) {
			add(k, as[i].name, "");
			hints |= as[i].hint_arg >= 0;
		}
	const struct hint_info *hs = catalog_hints(&n);
	for (size_t i = 0; hints && i < n; i++)
		add(k, hs[i].name, "");
	const struct decision_info *ds = catalog_decisions(&n);
	for (size_t i = 0; i < n; i++)
		if (all_bits(&p, true, DECISION_BIT(ds[i].value)))
			add(k, ds[i].name, "");
	if (p.tracepoint)
		add(k, "args", "");
}

/* Statements, checked in the prompt's probe (:probe). */
static void statements(struct comp *k, const char *text)
{
	const char *att[MAX_ATTACH];
	size_t len[MAX_ATTACH], n = 0;
	for (const char *s = k->r->ctx; *s && n < MAX_ATTACH; n++) {
		att[n] = s;
		len[n] = strcspn(s, ",");
		s += len[n] + (s[len[n]] == ',');
	}
	expr(k, text, att, len, n);
}

/* Where the end of a program's text is: in a probe's attach points (the
 * current ones in att), or in an expression (a predicate or body). */
struct scan {
	bool in_expr, in_comment;
	const char *att[MAX_ATTACH];
	size_t attlen[MAX_ATTACH], natt;
};

static void scan_program(const char *s, struct scan *sc)
{
	const char *word = NULL;
	int depth = 0;
	sc->in_expr = sc->in_comment = false;
	sc->natt = 0;
	for (; *s; s++) {
		const char *at = s;
		char c = *s;
		if (c == '/' && (s[1] == '/' || s[1] == '*')) {
			const char *e = s[1] == '/' ? strchr(s, '\n') : strstr(s + 2, "*/");
			if (!e) {
				sc->in_comment = true; /* nothing fits there */
				return;
			}
			s = s[1] == '/' ? e : e + 1;
			c = ' ';
		}
		if (sc->in_expr) {
			if (c == '"')
				while (s[1] && *++s != '"')
					s += *s == '\\' && s[1];
			else if (c == '{')
				depth++;
			else if (c == '}' && depth > 0 && --depth == 0)
				sc->in_expr = false, sc->natt = 0; /* the next probe */
			continue;
		}
		/* '/' is a path's in "uprobe:/lib/libc.so.6:malloc", else it
		 * opens a predicate */
		bool path = c == '/' && word &&
			    (s[-1] == ':' || memmem(word, (size_t)(s - word), ":/", 2));
		bool ends = !path && strchr(BLANKS ",{/", c) != NULL;
		if (ends && word && sc->natt < MAX_ATTACH) {
			sc->att[sc->natt] = word;
			sc->attlen[sc->natt++] = (size_t)(at - word);
		}
		if (ends)
			word = NULL;
		else if (!word)
			word = s;
		/* a predicate is an expression too; its '{' opens the body */
		if (c == '{' || (c == '/' && !path))
			sc->in_expr = true, depth = c == '{';
	}
}

/* ---- where the word is ---- */

static void complete_at(struct comp *k, const char *prefix);

/* An entry's text before the word (after the lines it already has). */
static void entry(struct comp *k, const char *prefix)
{
	const char *pend = k->r->pending;
	size_t lp = pend ? strlen(pend) + 1 : 0, n = strlen(prefix);
	char *text = malloc(lp + n + 1);
	if (!text) {
		k->c->failed = true;
		return;
	}
	if (pend) {
		memcpy(text, pend, lp - 1);
		text[lp - 1] = '\n';
	}
	memcpy(text + lp, prefix, n + 1);
	if (repl_looks_like_program(text)) {
		struct scan sc;
		scan_program(text, &sc);
		if (sc.in_expr && !sc.in_comment)
			expr(k, text, sc.att, sc.attlen, sc.natt);
		else if (!sc.in_comment)
			probe_names(k);
	} else {
		statements(k, text);
	}
	free(text);
}

/* After ":NAME ": what that command takes. */
static void command_args(struct comp *k, const char *cmd)
{
	size_t n = strcspn(cmd, BLANKS), nc;
	const char *rest = cmd + n + strspn(cmd + n, BLANKS);
	const struct repl_command *cs = repl_commands(&nc), *c = NULL;
	const char *m;
	for (size_t i = 0; i < nc && !c; i++)
		if ((strlen(cs[i].name) == n && !strncmp(cs[i].name, cmd, n)) ||
		    (*cs[i].alias && strlen(cs[i].alias) == n && !strncmp(cs[i].alias, cmd, n)))
			c = &cs[i];
	if (!c || rest == cmd + n)
		return;
	if (!strcmp(c->name, "complete"))
		complete_at(k, rest);
	else if (!strcmp(c->name, "probe") || !strcmp(c->name, "list"))
		probe_names(k);
	else if (!strcmp(c->name, "type"))
		statements(k, rest);
	else if ((m = strstr(c->args, "@MAP")) && m - c->args <= 1 && !*rest)
		maps(k, ""); /* :print, :clear, :watch, :heatmap, as their help says */
}

static void complete_at(struct comp *k, const char *prefix)
{
	const char *p = prefix + strspn(prefix, BLANKS);
	if (k->r->pending) {
		entry(k, prefix);
	} else if (!*p) {
		/* a line's start: a command, a probe, or a statement */
		if (!k->word[0] || k->word[0] == ':')
			commands(k);
		if (k->word[0] != ':') {
			probe_names(k);
			statements(k, "");
		}
	} else if (*p == ':') {
		command_args(k, p + 1);
	} else {
		entry(k, prefix);
	}
}

size_t repl_word_start(const char *line, size_t end)
{
	while (end > 0 && !strchr(REPL_WORD_BREAKS, line[end - 1]))
		end--;
	return end;
}

int repl_complete(struct repl *r, const char *line, size_t start, size_t end,
		  struct repl_cands *c)
{
	*c = (struct repl_cands){ 0 };
	char *prefix = strndup(line, start), *word = strndup(line + start, end - start);
	if (prefix && word) {
		struct comp k = { .r = r, .word = word, .c = c };
		complete_at(&k, prefix);
	}
	free(prefix);
	free(word);
	if (!prefix || !word || c->failed) {
		repl_cands_free(c);
		return -1;
	}
	sort_unique(c);
	return 0;
}

void repl_remember_map(struct repl *r, const char *name)
{
	for (size_t i = 0; i < r->maps.n; i++)
		if (!strcmp(r->maps.v[i], name))
			return;
	/* out of memory, completion offers a little less */
	if (r->maps.n < MAX_REMEMBERED)
		repl_strs_add(&r->maps, name, strlen(name));
}

void repl_cmd_complete(struct repl *r, const char *arg)
{
	size_t end = strlen(arg);
	struct repl_cands c;
	if (repl_complete(r, arg, repl_word_start(arg, end), end, &c)) {
		fputs("gpux: ERROR: out of memory\n", stderr);
		return;
	}
	for (size_t i = 0; i < c.n; i++)
		fprintf(r->out, "%s\n", c.v[i]);
	repl_cands_free(&c);
}

/* ---- readline ---- */

/* readline's callbacks take no argument of ours. */
static struct repl *rl_repl;
static struct repl_cands rl_cands;
static size_t rl_next;

static char *next_match(const char *text, int state)
{
	(void)text;
	if (!state)
		rl_next = 0;
	return rl_next < rl_cands.n ? strdup(rl_cands.v[rl_next++]) : NULL;
}

char *repl_rl_no_match(const char *text, int state)
{
	(void)text;
	(void)state;
	return NULL;
}

char **repl_rl_complete(const char *text, int start, int end)
{
	rl_attempted_completion_over = 1; /* no file names when nothing fits */
	if (!rl_repl || start < 0 || end < start ||
	    repl_complete(rl_repl, rl_line_buffer, (size_t)start, (size_t)end, &rl_cands))
		return NULL;
	/* "gdev:" and "threadIdx." go on; a space would end them */
	const char *only = rl_cands.n == 1 ? rl_cands.v[0] : NULL;
	const struct builtin *b = only ? catalog_builtin(only) : NULL;
	if (only && *only && strchr(":.", only[strlen(only) - 1]))
		rl_completion_append_character = '\0';
	else if (b && b->type.kind == TY_DIM3) /* threadIdx: its .x, .y, .z follow */
		rl_completion_append_character = '.';
	char **m = rl_completion_matches(text, next_match);
	repl_cands_free(&rl_cands);
	return m;
}

void repl_complete_bind(struct repl *r)
{
	rl_repl = r;
}
