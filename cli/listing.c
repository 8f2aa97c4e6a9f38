#include "listing.h"

#include <errno.h>
#include <fnmatch.h>
#include <string.h>

#include "arena.h"
#include "catalog.h"
#include "provider.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define INDENT "    "
#define WRAP_COL 80

static const struct {
	enum place place;
	const char *desc;
} place_descs[] = {
	{ PLACE_DEVICE, "device (warp-collective)" },
	{ PLACE_DRIVER, "driver" },
	{ PLACE_HOST, "host" },
};

static const struct {
	const char *what;
	const char *example;
} filter_descs[] = {
	[FILTER_NONE] = { NULL, NULL },
	[FILTER_KERNEL] = { "kernel name glob", "*gemm*" },
	[FILTER_FUNC] = { "device function name glob", "*reduce*" },
	[FILTER_COUNT] = { "every N events", "1000" },
};

static const char *const unif_names[] = {
	[UNIF_UNIFORM] = "[uniform]",
	[UNIF_VARYING] = "[lane-varying]",
};

static const char *place_desc(enum place p)
{
	for (size_t i = 0; i < ARRAY_LEN(place_descs); i++)
		if (place_descs[i].place == p)
			return place_descs[i].desc;
	return place_name(p);
}

/* A named event, or its provider's usage line (lang/provider.h). */
static void probe_name(const struct event *e, char *buf, size_t len)
{
	const char *usage = e->prov->unit->usage;
	if (e->name || !usage)
		snprintf(buf, len, "%s:%s", e->prov->name, e->name ? e->name : "");
	else
		snprintf(buf, len, "%s%s", e->prov->name, usage);
}

/* Words after "    label: ", wrapped under the first word. */
struct wrap {
	FILE *out;
	size_t indent, col;
	bool any;
};

static void wrap_start(struct wrap *w, FILE *out, const char *label)
{
	w->out = out;
	w->col = (size_t)fprintf(out, INDENT "%s:", label);
	w->indent = w->col + 1;
	w->any = false;
}

static void wrap_word(struct wrap *w, const char *word)
{
	size_t len = strlen(word);
	if (w->any && w->col + 1 + len > WRAP_COL) {
		fprintf(w->out, "\n%*s", (int)w->indent, "");
		w->col = w->indent;
	} else {
		fputc(' ', w->out);
		w->col++;
	}
	w->col += (size_t)fprintf(w->out, "%s", word);
	w->any = true;
}

static void wrap_end(struct wrap *w)
{
	if (!w->any)
		fputs(" none", w->out);
	fputc('\n', w->out);
}

static void print_fields(FILE *out, const struct field *fields, bool device)
{
	char tb[64];
	int tw = 0, nw = 0, uw = 0;

	for (const struct field *f = fields; f && f->name; f++) {
		int l = (int)strlen(type_str(f->type, tb, sizeof(tb)));
		tw = l > tw ? l : tw;
		l = (int)strlen(f->name);
		nw = l > nw ? l : nw;
		l = (int)strlen(unif_names[f->unif]);
		uw = l > uw ? l : uw;
	}
	for (const struct field *f = fields; f && f->name; f++) {
		fprintf(out, INDENT "%-*s  %-*s", tw,
			type_str(f->type, tb, sizeof(tb)), nw, f->name);
		if (device)
			fprintf(out, "  %-*s", uw, unif_names[f->unif]);
		fprintf(out, "  %s\n", f->doc ? f->doc : "");
	}
}

/* Builtins available at this place and to this runner (a kernel
 * helper's only in the kernel, the traced program's only there); on the
 * device, split by uniformity since that decides where a value may be
 * branched on. */
static void print_builtins(FILE *out, enum place place, enum runner rn)
{
	size_t n;
	const struct builtin *b = catalog_builtins(&n);
	bool device = place_is_device(place);
	struct wrap w;
	int last = device ? UNIF_VARYING : UNIF_UNIFORM;

	for (int u = UNIF_UNIFORM; u <= last; u++) {
		wrap_start(&w, out, !device ? "builtins"
				    : u == UNIF_UNIFORM ? "builtins [uniform]"
				    : "builtins [lane-varying]");
		for (size_t i = 0; i < n; i++)
			if ((b[i].places & place) && (!device || (int)b[i].unif == u) &&
			    (!b[i].kernel_only || rn == RUNNER_KERNEL) &&
			    (!b[i].target_only || rn == RUNNER_TARGET))
				wrap_word(&w, b[i].name);
		wrap_end(&w);
	}
}

/* What memory actions say and what a cuda: probe beside them can ask. */
static void print_memory(FILE *out, const struct event *e)
{
	struct wrap w;
	size_t n;
	const struct action *a = catalog_actions(&n);
	for (size_t i = 0; i < n; i++)
		if (e->actions & ACTION_BIT(a[i].id))
			fprintf(out, INDENT "%s\n", a[i].doc);
	const struct hint_info *h = catalog_hints(&n);
	wrap_start(&w, out, "hints");
	for (size_t i = 0; i < n; i++)
		wrap_word(&w, h[i].name);
	wrap_end(&w);
	fprintf(out, INDENT "functions: alloc_base(ptr) alloc_size(ptr): the allocation "
		"holding ptr (0: none); gpu_free(): free bytes of the GPU\n");
	fprintf(out, INDENT "maps: what gdev: probes write reads as of the last kernel "
		"completion point (at most 10 ms old) or synchronize\n");
}

static void print_policy(FILE *out, const struct event *e)
{
	struct wrap w;
	size_t n;
	char buf[160], tb[64];

	if (e->decisions) {
		wrap_start(&w, out, "return");
		for (enum decision d = 0; d < DECISION_COUNT; d++)
			if (e->decisions & DECISION_BIT(d))
				wrap_word(&w, decision_name(d));
		wrap_end(&w);
	}
	if (!e->decisions && !e->actions)
		return;
	const struct action *a = catalog_actions(&n);
	wrap_start(&w, out, "actions");
	for (size_t i = 0; i < n; i++) {
		if (!(e->actions & ACTION_BIT(a[i].id)))
			continue;
		size_t len = (size_t)snprintf(buf, sizeof(buf), "%s(",
					      a[i].name);
		for (int k = 0; k < a[i].nargs && len < sizeof(buf); k++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
						"%s%s", k ? ", " : "",
						type_str(a[i].args[k], tb,
							 sizeof(tb)));
		if (len < sizeof(buf))
			snprintf(buf + len, sizeof(buf) - len, ")");
		wrap_word(&w, buf);
	}
	wrap_end(&w);
	if (e->actions & ACTION_BIT(ACT_PREFETCH))
		print_memory(out, e);
}

static void print_verbose(FILE *out, const struct event *e,
			  const struct field *fields, const char *doc,
			  const char *name)
{
	if (doc)
		fprintf(out, INDENT "%s\n", doc);
	fprintf(out, INDENT "place: %s\n", place_desc(e->place));
	if (e->paths & DEV_PATH_SASS)
		fprintf(out, INDENT "kernels: with PTX (rewritten) and without (SASS patched;\n"
			INDENT "         an access there is a machine instruction)\n");
	else if (e->paths & DEV_PATH_PTX)
		fprintf(out, INDENT "kernels: with PTX only (not in SASS-patched kernels)\n");
	if (e->filter != FILTER_NONE)
		fprintf(out, INDENT "filter: %s (%s:%s)\n",
			filter_descs[e->filter].what, name,
			filter_descs[e->filter].example);
	print_fields(out, fields, place_is_device(e->place));
	print_builtins(out, e->place, e->prov->runner);
	print_policy(out, e);
}

/* What e's unit can attach to now that matches glob (and also, where
 * not NULL); how many, or -errno. */
static int list_unit(FILE *out, struct arena *a, const char *glob, const char *also,
		     bool verbose, const struct event *e)
{
	struct listed_probe *lp;
	size_t n;
	int err = e->prov->unit->list(a, e->prov, glob, verbose, &lp, &n);
	if (err)
		return err;
	int shown = 0;
	for (size_t i = 0; i < n; i++) {
		if (also && fnmatch(also, lp[i].name, 0))
			continue;
		shown++;
		fprintf(out, "%s\n", lp[i].name);
		if (verbose)
			print_verbose(out, e, lp[i].own ? lp[i].fields : e->fields,
				      lp[i].own ? lp[i].doc : e->doc, lp[i].name);
	}
	return shown;
}

int listing_print(FILE *out, const char *glob, bool verbose, bool quiet)
{
	struct arena a;
	size_t n;
	int count = 0;

	arena_init(&a);
	if (!glob || !*glob)
		glob = "*";

	/* "t:sched:*" means "tracepoint:sched:*". */
	const char *colon = strchr(glob, ':');
	const struct provider *listed = NULL; /* its unit lists what it can attach to */
	if (colon) {
		char *prov = arena_strndup(&a, glob, (size_t)(colon - glob));
		const struct provider *p = catalog_provider(prov);
		if (p && strcmp(p->name, prov))
			glob = arena_printf(&a, "%s%s", p->name, colon);
		listed = p && p->unit->list && colon[1] ? p : NULL;
	}

	const struct event *const *es = catalog_events(&n);
	/* a pattern without a provider ("*sched_switch*") is matched against
	 * every probe its unit can name, as bpftrace lists them: each
	 * provider whose probes need no target file, listed once */
	const struct provider *bare_done[64];
	size_t nbare = 0;
	for (size_t i = 0; !colon && strcmp(glob, "*") && i < n; i++) {
		const struct provider *p = es[i]->prov;
		bool seen = false;
		for (size_t k = 0; k < nbare; k++)
			seen = seen || bare_done[k] == p;
		if (seen || !p->unit->list || p->syntax == SYN_UPROBE || p->syntax == SYN_USDT ||
		    nbare == sizeof(bare_done) / sizeof(bare_done[0]))
			continue;
		bare_done[nbare++] = p;
		int r = list_unit(out, &a, arena_printf(&a, "%s:*", p->name), glob, verbose, es[i]);
		if (r > 0)
			count += r;
	}
	for (size_t i = 0; i < n; i++) {
		const struct event *e = es[i];
		const struct provider *p = e->prov;
		char name[128];

		if (p == listed) {
			int r = list_unit(out, &a, glob, NULL, verbose, e);
			if (r >= 0) {
				count += r;
				continue;
			}
			if (!quiet)
				fprintf(stderr, "gpux: cannot list %s probes: %s\n", p->name,
					r == -ENODEV ? "tracefs is not mounted" : strerror(-r));
		}
		probe_name(e, name, sizeof(name));
		if (fnmatch(glob, name, 0))
			continue;
		fprintf(out, "%s\n", name);
		count++;
		if (verbose)
			print_verbose(out, e, e->fields, e->doc, name);
	}
	arena_free(&a);
	return count;
}
