/* Command-line options of gpux, parsed into one struct. */
#ifndef GPUX_OPTIONS_H
#define GPUX_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

/* FMT_PERFETTO: a timeline of the run in -o FILE (docs/TIMELINE.md), the
 * output as FMT_TEXT on stdout. */
enum out_format { FMT_TEXT, FMT_JSON, FMT_PERFETTO };

enum dump_stage {
	DUMP_AST = 1 << 0,
	DUMP_TYPES = 1 << 1,
	DUMP_IR = 1 << 2,       /* LLVM IR of the host probes */
	DUMP_BPF = 1 << 3,      /* eBPF with source lines, host and device */
	DUMP_VERIFIER = 1 << 4, /* the SIMT verifier's log */
	DUMP_PTX = 1 << 5,      /* the JIT's PTX module */
};

/* -B: how the program's output is buffered (stdio's default when unset) */
enum buffering { BUF_DEFAULT, BUF_LINE, BUF_FULL, BUF_NONE };

struct options {
	const char *program;   /* -e text */
	const char *file;      /* script path ("-" = stdin) */
	/* more .gpx files given after it, composed with it into one program */
	char **more_files;
	int nmore_files;
	char **args;           /* script arguments ($1...) */
	int nargs;
	bool list;             /* -l */
	const char *list_glob;
	bool verbose;          /* -v */
	unsigned dump;         /* -d stages */
	bool dry_run;
	bool unsafe;           /* --unsafe: system() may run commands */
	bool no_cache;         /* --no-cache: the runtime's module cache is off */
	bool no_warnings;      /* --no-warnings: the program's warnings are not printed */
	enum buffering buffering; /* -B */
	/* -I DIR and --include FILE, in order (argv's strings) */
	char *include_dirs[16], *include_files[16];
	int ninclude_dirs, ninclude_files;
	const char *emit_dir;  /* --emit: write objects and PTX here */
	const char *command;   /* -c */
	char **cmd_argv;       /* after -- */
	int cmd_argc;
	long pid;              /* -p, 0 if none */
	long cpid;             /* set when running: -c's pid, or -1 without one */
	enum out_format format;
	const char *output;    /* -o */
	bool quiet;
	int helper_check;      /* -k 1, -kk 2: failed helpers warned of */
	const char *sim;       /* --sim WORKLOAD: run the driver policies in the simulator */
	/* --export SPEC: metrics of the maps (export.h), one prometheus: and
	 * one otlp: at most; OTLP's interval and the series cap per map (0:
	 * the defaults) */
	const char *exports[2];
	int nexports;
	long export_interval_ms;
	long export_max_series;
	bool help, version, repl;
	bool info; /* --info */
};

/* Parse argv. On a usage error print it to err and return -1. */
int options_parse(struct options *o, int argc, char **argv, FILE *err);
void options_usage(FILE *out);

#endif
