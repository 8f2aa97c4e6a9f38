#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

void options_usage(FILE *out)
{
	fputs(
"USAGE:\n"
"    gpux [options] -e 'program' [args...]\n"
"    gpux [options] FILE.gpx [MORE.gpx...] [args...]\n"
"                              (files given together compose: one program)\n"
"    gpux --sim WORKLOAD [POLICY.gpx...]\n"
"                              run driver policies in the UVM simulator, side\n"
"                              by side with the default (a+b.gpx: composed)\n"
"    gpux -l [GLOB]            list probes (-lv: with fields and builtins)\n"
"    gpux                      interactive prompt (on a terminal)\n"
"\n"
"OPTIONS:\n"
"    -e PROGRAM     program text (file name in messages: stdin)\n"
"    -l [GLOB]      list probes matching GLOB, e.g. 'gdev:*'; a binary's\n"
"                   functions: 'uprobe:/bin/app:*'; with -p PID, the process's\n"
"    -v             verbose: with -l, show fields, types and uniformity;\n"
"                   running, report each CUDA module patched and its times\n"
"    -d STAGE       print a compiler stage and stop: ast, types, ir,\n"
"                   bpf, verifier, ptx (several with commas: -d ast,ptx)\n"
"    --dry-run      compile and check the program, then stop\n"
"    --unsafe       allow system(), which runs shell commands\n"
"    --emit DIR     write the compiled objects and PTX into DIR\n"
"    --no-warnings  do not print the program's warnings (bpftrace's option)\n"
"    -k             warn where a map update or delete fails (bpftrace's -k)\n"
"    -kk            ... and where a memory read fails\n"
"    --usdt-file-activation\n"
"                   accepted for bpftrace's scripts: the kernel counts a USDT\n"
"                   probe's semaphore in each process it attaches to (without\n"
"                   -p, every process that maps the file)\n"
"    --btf          accepted for bpftrace's scripts: the kernel's types (BTF)\n"
"                   are read wherever the kernel has them\n"
"    -I DIR         where #include looks too (the C preprocessor's -I)\n"
"    --include FILE #include FILE before the script\n"
"    --no-cache     neither use nor fill the cache of instrumented modules\n"
"                   (GPUX_CACHE_DIR, else ~/.cache/gpux; GPUX_CACHE_MAX_MB)\n"
"    -c CMD         run CMD (a shell command line) and trace it\n"
"    -p PID         trace the process PID (it must exist)\n"
"    -f FORMAT      output format: text (default), json, or perfetto (also\n"
"                   chrome): a timeline of the run's kernels, copies, syncs,\n"
"                   allocations, printf lines and maps in -o FILE, Chrome\n"
"                   trace-event JSON for ui.perfetto.dev and chrome://tracing\n"
"                   (docs/TIMELINE.md); the output stays text on stdout\n"
"    -o FILE        write program output to FILE (-f perfetto: the timeline)\n"
"    -q             quiet: no informational messages\n"
"    -B MODE        output buffering: line (the default on a terminal), full\n"
"                   or none\n"
"    --repl         start the interactive prompt even without a terminal;\n"
"                   with -c CMD, -- CMD ARGS or -p PID, probes entered attach\n"
"                   to that program live (docs/REPL.md)\n"
"    --sim WORKLOAD seq, stride, random, hotcold, layers, mix (NAME:key=value,...)\n"
"                   or trace:FILE, chunk_trace:FILE (docs/SIMULATOR.md)\n"
"    --export SPEC  serve or push the maps as metrics while the program runs\n"
"                   (docs/SERVICE.md): prometheus:[ADDR:]PORT serves /metrics\n"
"                   (PORT 0: a free one, said on stderr); otlp:URL posts OTLP/HTTP\n"
"                   JSON (http://host:4318/v1/metrics) every interval and at the\n"
"                   end. Both may be given\n"
"    --export-interval TIME\n"
"                   between OTLP pushes: 10s (default), 500ms, 1m\n"
"    --export-max-series N\n"
"                   keys of a map exported as series of their own (default\n"
"                   1000); the rest fold into one key=\"__overflow__\"\n"
"    -h, --help     show this help\n"
"    -V, --version  show the version\n"
"    --info         what this gpux and this machine can trace: the kernel's\n"
"                   BPF helpers, maps and probe types, the GPU and its driver\n"
"    -- CMD ARGS    run CMD with ARGS and trace it\n"
"\n"
"EXAMPLES:\n"
"    gpux -l 'gdev:*'\n"
"    gpux --dry-run -e 'gdev:kernel_exit { @[kernel] = count(); }'\n"
"    gpux -e 'gdev:access /store/ { @bytes[kernel] = sum(size); }' -c ./app\n",
	      out);
}

static int usage_error(FILE *err, const char *fmt, const char *arg)
{
	fputs("gpux: ERROR: ", err);
	fprintf(err, fmt, arg);
	fputs("\nUSAGE: gpux [options] FILE | gpux [options] -e 'PROGRAM'\n"
	      "Try 'gpux --help' for more information.\n", err);
	return -1;
}

static int parse_dump(struct options *o, const char *arg, FILE *err)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", arg);
	static const struct { const char *name; unsigned bit; } stages[] = {
		{ "ast", DUMP_AST }, { "types", DUMP_TYPES }, { "ir", DUMP_IR },
		{ "bpf", DUMP_BPF }, { "verifier", DUMP_VERIFIER },
		{ "ptx", DUMP_PTX },
	};
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < sizeof(stages) / sizeof(stages[0]); i++)
			if (!strcmp(t, stages[i].name))
				break;
		if (i == sizeof(stages) / sizeof(stages[0]))
			return usage_error(err, "unknown stage '%s' for -d "
					   "(stages: ast, types, ir, bpf, verifier, ptx)", t);
		o->dump |= stages[i].bit;
	}
	if (!o->dump)
		return usage_error(err, "-d needs a stage (ast, types, ir, bpf, verifier, ptx)%s", "");
	return 0;
}

static int parse_pid(struct options *o, const char *arg, FILE *err)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	/* bpftrace's messages */
	if (!*arg || *end || (errno && errno != ERANGE))
		return usage_error(err, "pid '%s' is not a valid decimal number", arg);
	if (errno || v <= 0 || v > 4194304)
		return usage_error(err, "pid '%s' out of valid pid range [1,4194304]", arg);
	if (kill((pid_t)v, 0) && errno == ESRCH) {
		fprintf(err, "gpux: ERROR: pid %s does not exist\n", arg);
		return -1;
	}
	o->pid = v;
	return 0;
}

enum { OPT_DRY_RUN = 256, OPT_REPL, OPT_EMIT, OPT_SIM, OPT_UNSAFE, OPT_NO_CACHE,
       OPT_EXPORT, OPT_EXPORT_INTERVAL, OPT_EXPORT_MAX_SERIES, OPT_NO_WARNINGS, OPT_INCLUDE,
       OPT_USDT_FILE_ACTIVATION, OPT_BTF, OPT_INFO };

/* -I DIR, --include FILE: kept for the C preprocessor, which a shell
 * runs (a quote cannot be in one) */
static int add_cpp_path(char **v, int *n, const char *what, char *arg, FILE *err)
{
	if (strchr(arg, '\''))
		return usage_error(err, "%s cannot hold a single quote", what);
	if (*n == 16)
		return usage_error(err, "%s is given more than 16 times", what);
	v[(*n)++] = arg;
	return 0;
}

/* --export SPEC, its kind checked here so that a mistake is a usage error. */
static int parse_export(struct options *o, const char *arg, FILE *err)
{
	struct export_spec s, t;
	char why[512];
	if (export_spec_parse(arg, &s, why, sizeof(why)))
		return usage_error(err, "%s", why);
	for (int i = 0; i < o->nexports; i++)
		if (!export_spec_parse(o->exports[i], &t, why, sizeof(why)) && t.kind == s.kind)
			return usage_error(err, "--export %s given twice", s.kind == EXPORT_OTLP
					   ? "otlp" : "prometheus");
	o->exports[o->nexports++] = arg;
	return 0;
}

/* N, Nms, Ns or Nm: milliseconds, or -1. */
static long parse_ms(const char *arg)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	long unit = !strcmp(end, "ms") ? 1 : !*end || !strcmp(end, "s") ? 1000
		  : !strcmp(end, "m") ? 60000 : 0;
	if (end == arg || errno || !unit || v <= 0 || v > 86400000L / unit)
		return -1;
	return v * unit;
}

static int parse_export_opt(struct options *o, int c, const char *arg, FILE *err)
{
	if (c == OPT_EXPORT)
		return parse_export(o, arg, err);
	if (c == OPT_EXPORT_INTERVAL) {
		if ((o->export_interval_ms = parse_ms(arg)) < 0)
			return usage_error(err, "invalid --export-interval '%s' (10s, 500ms, 1m)", arg);
		return 0;
	}
	char *end;
	errno = 0;
	o->export_max_series = strtol(arg, &end, 10);
	if (!*arg || *end || errno || o->export_max_series < 1 || o->export_max_series > 10000000)
		return usage_error(err, "invalid --export-max-series '%s' (1 to 10000000)", arg);
	return 0;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n > t && !strcmp(s + n - t, tail);
}

int options_parse(struct options *o, int argc, char **argv, FILE *err)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "repl", no_argument, NULL, OPT_REPL },
		{ "emit", required_argument, NULL, OPT_EMIT },
		{ "sim", required_argument, NULL, OPT_SIM },
		{ "unsafe", no_argument, NULL, OPT_UNSAFE },
		{ "no-cache", no_argument, NULL, OPT_NO_CACHE },
		{ "no-warnings", no_argument, NULL, OPT_NO_WARNINGS },
		{ "usdt-file-activation", no_argument, NULL, OPT_USDT_FILE_ACTIVATION },
		{ "btf", no_argument, NULL, OPT_BTF },
		{ "info", no_argument, NULL, OPT_INFO },
		{ "include", required_argument, NULL, OPT_INCLUDE },
		{ "export", required_argument, NULL, OPT_EXPORT },
		{ "export-interval", required_argument, NULL, OPT_EXPORT_INTERVAL },
		{ "export-max-series", required_argument, NULL, OPT_EXPORT_MAX_SERIES },
		{ NULL, 0, NULL, 0 },
	};
	memset(o, 0, sizeof(*o));
	/* Everything after the first "--" is the command to trace. */
	int end = argc;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			end = i;
			o->cmd_argv = argv + i + 1;
			o->cmd_argc = argc - i - 1;
			break;
		}
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(end, argv, ":e:ld:c:p:f:o:qvhVB:I:k", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (o->program)
				return usage_error(err, "-e given twice%s", "");
			o->program = optarg;
			break;
		case 'l': o->list = true; break;
		case 'k': o->helper_check = o->helper_check < 2 ? o->helper_check + 1 : 2; break;
		case 'v': o->verbose = true; break;
		case 'd':
			if (parse_dump(o, optarg, err))
				return -1;
			break;
		case 'c': o->command = optarg; break;
		case 'p':
			if (parse_pid(o, optarg, err))
				return -1;
			break;
		case 'f':
			if (!strcmp(optarg, "text"))
				o->format = FMT_TEXT;
			else if (!strcmp(optarg, "json"))
				o->format = FMT_JSON;
			else if (!strcmp(optarg, "perfetto") || !strcmp(optarg, "chrome"))
				o->format = FMT_PERFETTO;
			else
				return usage_error(err, "unknown output format '%s' (text, json, "
						   "perfetto)", optarg);
			break;
		case 'o': o->output = optarg; break;
		case 'q': o->quiet = true; break;
		case 'B':
			if (!strcmp(optarg, "line"))
				o->buffering = BUF_LINE;
			else if (!strcmp(optarg, "full"))
				o->buffering = BUF_FULL;
			else if (!strcmp(optarg, "none"))
				o->buffering = BUF_NONE;
			else
				return usage_error(err, "-B must be either 'line', 'full', or 'none', not '%s'", optarg);
			break;
		case 'h': o->help = true; break;
		case 'V': o->version = true; break;
		case OPT_DRY_RUN: o->dry_run = true; break;
		case OPT_UNSAFE: o->unsafe = true; break;
		case OPT_NO_CACHE: o->no_cache = true; break;
		case OPT_NO_WARNINGS: o->no_warnings = true; break;
		case OPT_USDT_FILE_ACTIVATION: break; /* what attaching does anyway */
		case OPT_BTF: break; /* the kernel's types are read wherever it has them */
		case OPT_INFO: o->info = true; break;
		case 'I':
			if (add_cpp_path(o->include_dirs, &o->ninclude_dirs, "-I", optarg, err))
				return -1;
			break;
		case OPT_INCLUDE:
			if (add_cpp_path(o->include_files, &o->ninclude_files, "--include", optarg, err))
				return -1;
			break;
		case OPT_REPL: o->repl = true; break;
		case OPT_EMIT: o->emit_dir = optarg; break;
		case OPT_SIM: o->sim = optarg; break;
		case OPT_EXPORT:
		case OPT_EXPORT_INTERVAL:
		case OPT_EXPORT_MAX_SERIES:
			if (parse_export_opt(o, c, optarg, err))
				return -1;
			break;
		case ':': {
			char opt[3] = { '-', (char)optopt, 0 };
			return usage_error(err, "option %s needs an argument", opt);
		}
		default: {
			if (optopt) {
				char opt[3] = { '-', (char)optopt, 0 };
				return usage_error(err, "unknown option %s", opt);
			}
			return usage_error(err, "unknown option %s", argv[optind - 1]);
		}
		}
	}
	char **pos = argv + optind;
	int npos = end - optind;
	if (o->help || o->version)
		return 0;
	if (!o->nexports && (o->export_interval_ms || o->export_max_series))
		return usage_error(err, "--export-interval and --export-max-series go with --export%s", "");
	if (o->nexports && (o->list || o->sim || o->repl))
		return usage_error(err, "--export exports the maps of a program run, not of -l, "
				   "--sim or --repl%s", "");
	if (o->format == FMT_PERFETTO && (o->list || o->sim || o->repl))
		return usage_error(err, "-f perfetto writes a timeline of a program run, not of -l, "
				   "--sim or --repl%s", "");
	if (o->list) {
		if (o->program)
			return usage_error(err, "-l cannot be combined with -e%s", "");
		if (npos > 1)
			return usage_error(err, "-l takes one glob, got '%s' too", pos[1]);
		o->list_glob = npos ? pos[0] : NULL;
		return 0;
	}
	if (o->sim) {
		if (o->command || o->cmd_argv || o->pid || o->dump || o->dry_run || o->emit_dir)
			return usage_error(err, "--sim runs policies in the simulator; it takes no "
					   "command, process, -d, --dry-run or --emit%s", "");
		/* every positional is a policy row (its own program) */
		o->more_files = pos;
		o->nmore_files = npos;
		return 0;
	}
	if (!o->program && npos) {
		o->file = pos[0];
		pos++;
		npos--;
		/* policies given together (gpux lfu.gpx quota.gpx): the .gpx
		 * files right after the first are part of the program */
		o->more_files = pos;
		while (npos && ends_with(pos[0], ".gpx")) {
			o->nmore_files++;
			pos++;
			npos--;
		}
	}
	o->args = pos;
	o->nargs = npos;
	if (o->command && o->cmd_argv)
		return usage_error(err, "give the command either with -c or after --, not both%s", "");
	if (o->pid && (o->command || o->cmd_argv))
		return usage_error(err, "-p traces a running process; it cannot be combined with a command%s", "");
	if (o->cmd_argv && o->cmd_argc == 0)
		return usage_error(err, "'--' must be followed by a command%s", "");
	if (o->repl && (o->program || o->file || o->dump || o->dry_run || o->emit_dir))
		return usage_error(err, "--repl takes a command to explore (-c CMD, -- CMD ARGS or "
				   "-p PID), not a program, -d, --dry-run or --emit%s", "");
	if (o->format == FMT_PERFETTO && !o->dump && !o->dry_run && !o->emit_dir) {
		if (!o->command && !o->cmd_argv && !o->pid)
			return usage_error(err, "-f perfetto traces a CUDA program: give it with -c "
					   "CMD, -- CMD ARGS or -p PID%s", "");
		if (!o->output)
			return usage_error(err, "-f perfetto writes the timeline to a file: name it "
					   "with -o FILE%s", "");
		/* the timeline is the program: no probes of the user's needed */
		if (!o->program && !o->file)
			o->program = "";
	}
	/* the prompt's command: probes are entered at the prompt */
	bool wants_program = (!o->repl && (o->command || o->cmd_argv || o->pid)) || o->dump ||
			     o->dry_run || o->emit_dir;
	if (!o->program && !o->file && wants_program)
		return usage_error(err, "no program given: use -e 'PROGRAM' or a .gpx file%s", "");
	return 0;
}
