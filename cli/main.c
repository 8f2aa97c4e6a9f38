/* gpux: parse the command line, then list, check, dump or prompt. */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ast_dump.h"
#include "catalog.h"
#include "compile.h"
#include "frontend.h"
#include "gpux_commit.h"
#include "info.h"
#include "kernel_types.h"
#include "listing.h"
#include "options.h"
#include "progress.h"
#include "repl.h"
#include "run.h"
#include "sim_cmd.h"
#include "sources.h"
#include "timeline_probes.h"
#include "uprobe_args.h"

/* One listing: glob's provider is a name (or glob has no provider).
 * How many probes it printed, or -1 with the reason printed (quiet:
 * not, for one of a provider glob's providers). */
static int list_one(const struct options *o, const char *glob, FILE *out, bool quiet)
{
	char err[PATH_MAX + 128] = "";
	int n = listing_usdt(out, glob, o->pid, err, sizeof(err));
	if (n == LISTING_NOT_MINE)
		n = listing_uprobes(out, glob, o->pid, o->verbose, err, sizeof(err));
	if (n == -1 && *err && !quiet)
		fprintf(stderr, "gpux: ERROR: %s\n", err);
	if (n == LISTING_NOT_MINE)
		n = listing_print(out, glob, o->verbose, quiet);
	return n;
}

static int do_list(const struct options *o, FILE *out)
{
	const char *glob = o->list_glob;
	/* what may stand in an attach point (a typed struct name aside) */
	for (const char *c = glob; c && *c && strncmp(glob, "struct ", 7); c++)
		if (!isalnum((unsigned char)*c) && !strchr("_.*?-+[]!^~$/:\"", *c)) {
			fprintf(stderr, "gpux: ERROR: invalid character '%c' in the search "
				"pattern '%s'\n", *c, glob);
			return 1;
		}
	const char *colon = glob ? strchr(glob, ':') : NULL;
	int n;
	if (colon && strcspn(glob, "*?[") < (size_t)(colon - glob)) {
		/* a provider glob ("*:./bin:*", "*ware:*"): each provider it
		 * matches, listed as if named */
		size_t np;
		const struct provider *const *ps = catalog_providers(&np);
		char pat[64];
		snprintf(pat, sizeof(pat), "%.*s", (int)(colon - glob), glob);
		n = 0;
		for (size_t i = 0; i < np; i++) {
			if (fnmatch(pat, ps[i]->name, 0))
				continue;
			char *one = NULL;
			if (asprintf(&one, "%s%s", ps[i]->name, colon) < 0)
				return 1;
			int k = list_one(o, one, out, true);
			free(one);
			if (k > 0)
				n += k;
		}
	} else {
		n = list_one(o, glob, out, false);
		if (n == -1)
			return 1;
	}
	if (n == 0 && glob) {
		fprintf(stderr, "gpux: ERROR: no probes match '%s'\n", glob);
		return 1;
	}
	return n < 0 ? 1 : 0;
}

static void report_target(const struct options *o)
{
	if (o->quiet)
		return;
	if (o->command)
		fprintf(stderr, "gpux: would trace command: %s\n", o->command);
	else if (o->cmd_argv) {
		fputs("gpux: would trace command:", stderr);
		for (int i = 0; i < o->cmd_argc; i++)
			fprintf(stderr, " %s", o->cmd_argv[i]);
		fputc('\n', stderr);
	} else if (o->pid)
		fprintf(stderr, "gpux: would trace process %ld\n", o->pid);
}

static int read_files(const struct options *o, char **text, size_t *len,
		      struct source_file *files)
{
	const char *paths[1 + (o->nmore_files > 0 ? o->nmore_files : 0)];
	paths[0] = o->file;
	for (int i = 0; i < o->nmore_files; i++)
		paths[i + 1] = o->more_files[i];
	return sources_read(paths, o->nmore_files + 1, text, len, files);
}

static int do_program(const struct options *o, FILE *out)
{
	const char *name = "stdin";
	char *text = NULL;
	size_t len;
	struct source_file files[1 + (o->nmore_files > 0 ? o->nmore_files : 0)];
	if (o->program) {
		len = strlen(o->program);
	} else {
		if (read_files(o, &text, &len, files)) {
			free(text);
			return 1;
		}
		name = files[0].name;
	}
	struct program *prog = program_new(name, o->program ? o->program : text, len);
	free(text);
	if (!prog) {
		fputs("gpux: ERROR: out of memory\n", stderr);
		return 1;
	}
	if (o->nmore_files) {
		struct source_file *f = arena_alloc(&prog->arena, sizeof(files));
		memcpy(f, files, sizeof(files));
		prog->src.files = f;
		prog->src.nfiles = o->nmore_files + 1;
	}
	program_set_args(prog, o->args, o->nargs);
	prog->unsafe = o->unsafe;
	prog->dwarf_args = uprobe_dwarf_args;
	prog->object_size = uprobe_object_size;
	prog->dwarf_record = uprobe_dwarf_record;
	prog->kernel_types = &kernel_types_btf;
	prog->target_pid = (int)o->pid;
	prog->include_dirs = (char **)o->include_dirs;
	prog->ninclude_dirs = o->ninclude_dirs;
	prog->include_files = (char **)o->include_files;
	prog->ninclude_files = o->ninclude_files;
	/* Code generation runs for a dry run too: it proves the program
	 * compiles all the way, not only that it checks. */
	bool codegen = o->dry_run || o->emit_dir || (o->dump & ~(DUMP_AST | DUMP_TYPES));
	bool timeline = o->format == FMT_PERFETTO && !codegen && !o->dump;
	if (timeline && timeline_probes_add(prog)) {
		program_free(prog);
		return 1;
	}
	struct diags diags;
	diags_init(&diags, &prog->arena);
	enum fe_stop stop = o->dump == DUMP_AST ? FE_STOP_PARSE : FE_STOP_SEMA;
	progress_set("checking the program");
	int rc = frontend_check(prog, &diags, stop);
	if (rc == 0 && timeline)
		timeline_probes_mark(prog);
	if (rc == 0 && (o->dump & DUMP_AST))
		ast_dump(out, prog, false);
	if (rc == 0 && (o->dump & DUMP_TYPES))
		ast_dump(out, prog, true);
	if (rc == 0 && codegen)
		rc = compile_program(prog, o, out, &diags);
	progress_stop();
	if (rc == 0 && !codegen && !o->dump) {
		diags_print(&diags, &prog->src, stderr); /* warnings first */
		diags_init(&diags, &prog->arena);
		rc = run_program(prog, o, out, &diags);
		progress_stop();
		diags_print(&diags, &prog->src, stderr);
		program_free(prog);
		return rc;
	}
	diags_print(&diags, &prog->src, stderr);
	program_free(prog);
	if (rc)
		return 1;
	report_target(o);
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	if (options_parse(&o, argc, argv, stderr))
		return 1;
	diags_show_warnings(!o.no_warnings);
	if (o.help) {
		options_usage(stdout);
		return 0;
	}
	if (o.version) {
		if (*GPUX_COMMIT)
			printf("gpux v%s (%s)\n", GPUX_VERSION, GPUX_COMMIT);
		else
			printf("gpux v%s\n", GPUX_VERSION);
		return 0;
	}
	if (o.info)
		return info_print(stdout);
	FILE *out = stdout;
	/* close-on-exec: a traced command must not hold our output open; a
	 * timeline's file is the run's to write (run_timeline.c) */
	if (o.output && o.format != FMT_PERFETTO && !(out = fopen(o.output, "we"))) {
		fprintf(stderr, "gpux: ERROR: cannot open %s: %s\n", o.output, strerror(errno));
		return 1;
	}
	/* -B: before anything is written there */
	if (o.buffering != BUF_DEFAULT)
		setvbuf(out, NULL, o.buffering == BUF_LINE ? _IOLBF : o.buffering == BUF_FULL ? _IOFBF
											: _IONBF,
			0);
	int rc;
	if (o.list)
		rc = do_list(&o, out);
	else if (o.sim)
		rc = sim_command(&o, out);
	else if (o.program || o.file)
		rc = do_program(&o, out);
	else if (o.repl || isatty(STDIN_FILENO))
		rc = repl_run(stdin, out, isatty(STDIN_FILENO), &o);
	else {
		fputs("gpux: ERROR: no program given: use -e 'PROGRAM' or a .gpx file\n"
		      "Try 'gpux --help' for more information.\n", stderr);
		rc = 1;
	}
	if (out != stdout && fclose(out)) {
		fprintf(stderr, "gpux: ERROR: writing %s: %s\n", o.output, strerror(errno));
		rc = 1;
	}
	return rc;
}
