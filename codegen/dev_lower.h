/* Device probes (gdev:) from the checked AST to eBPF bytecode, one
 * program per probe, then through the SIMT verifier and the PTX JIT:
 *
 *   struct dev_module mod;
 *   if (dev_compile(prog, &mod, diags) == 0)          lower + verify
 *           dev_write_ptx(out, &mod, "sm_80", lib, len, PTX_LINK_SAME_MODULE, diags);
 *
 * Everything the module points to lives in prog->arena. */
#ifndef GPUX_DEV_LOWER_H
#define GPUX_DEV_LOWER_H

#include <stdio.h>

#include "ast.h"
#include "device_abi.h"
#include "diag.h"
#include "ptx_jit.h"
#include "simt_verifier.h"

/* What one 8-byte key word or printf argument holds. */
enum dev_val_kind {
	DEV_VAL_INT,    /* a number (is_signed says how to print it) */
	DEV_VAL_KERNEL, /* a kernel id: the host turns it into the name */
};

struct dev_val {
	enum dev_val_kind kind;
	bool is_signed;
};

/* The host's view of one device map, parallel to dev_module.maps. */
struct dev_map_meta {
	const struct map_info *info; /* the front end's map */
	int nkeys;                   /* 0: a single value (@m) */
	struct dev_val *keys;        /* nkeys entries, 8 bytes each */
	enum agg_kind agg;           /* AGG_NONE for a plain value */
	bool cross_layer;            /* host or driver probes use it too */
	/* Filled by dev_compile (dev_facts.c). */
	bool read_on_device;    /* the device reads or overwrites it (lookup,
				 * update, delete): its tables cannot be sharded */
	bool written_on_device; /* the device changes it at all */
	bool additive;          /* a plain map only ever added to (@m += v,
				 * @m++): per-process values merge by adding */
};

/* One printf call: the record's arguments are 8 bytes each, in order
 * (a call without arguments sends one unused zero word). */
struct dev_printf {
	int id;          /* the format id passed to the helper */
	int probe;       /* dev_module.probes index */
	const char *fmt; /* escapes decoded, as the host prints it */
	size_t fmt_len;
	int nargs;
	struct dev_val *args;
	uint32_t arg_size; /* bytes per lane: 8 * nargs, or 8 if none */
	struct span span;
};

/* Where the runtime attaches a probe. */
struct dev_attach {
	const char *text;   /* "gdev:kernel_entry:*gemm*" */
	const char **events; /* "kernel_entry", ... (globs expanded) */
	int nevents;
	const char *filter; /* glob on the kernel (or device function) name; NULL: all */
	enum filter_kind filter_kind;
};

struct dev_probe {
	struct dev_prog prog;  /* name: the attach text, maps: the module's */
	const char *func_name; /* "gpux_probe_<index>" */
	int index;             /* the probe's index in the program */
	const struct node *node;
	struct dev_attach *attach;
	int nattach;
	/* GPUX_SITE_* (abi/probe_site.h) its predicate requires of an
	 * access instruction: the runtime splices it at those alone */
	unsigned access_only;
	bool anytime; /* dev_runs_anytime */
	/* An access probe that only counts (GPUX_SITE_COUNT): its counted
	 * form, count() as sum(addr) without the predicate, named
	 * func_name + GPUX_COUNTED_SUFFIX; ninsns 0 when there is none. */
	struct dev_prog counted;
	const char *counted_name;
};

struct dev_module {
	struct dev_probe *probes;
	int nprobes;
	/* One map table shared by every probe (the JIT requires it). */
	struct dev_map *maps;
	struct dev_map_meta *map_meta;
	int nmaps;
	struct dev_printf *fmts;
	int nfmts;
	/* Filled by dev_compile (dev_facts.c): a probe reads nsecs, so the
	 * device clock must be matched to the host's. */
	bool reads_clock;
};

/* Lower every device probe of a checked program. 0, or -1 with located
 * diagnostics (constructs the device cannot run yet are refused). */
int dev_lower(struct program *prog, struct dev_module *mod, struct diags *diags);

/* dev_lower, then simt_verify on each program. */
int dev_compile(struct program *prog, struct dev_module *mod, struct diags *diags);

/* `-d verifier`: run the verifier on each program, logging to log. */
int dev_verify_log(const struct dev_module *mod, struct diags *diags, FILE *log);

/* `-d bpf`: every program's maps and instructions, each source line
 * printed once before the first instruction it produced. */
void dev_dump_bpf(FILE *out, const struct program *prog,
		  const struct dev_module *mod);

/* One PTX module: header, map descriptors, each probe's .func and, for
 * PTX_LINK_SAME_MODULE, the helper library lib (nvcc's PTX, may be
 * NULL). 0, or -1 with diags. */
int dev_write_ptx(FILE *out, const struct dev_module *mod, const char *target,
		  const char *lib, size_t lib_len, enum ptx_link link,
		  struct diags *diags);

/* `--emit DIR`: DIR/device.ptx (sm_80, the library included),
 * DIR/device.link.ptx (the same probes, PTX_LINK_LIBRARY_CUBIN) and
 * DIR/device.bpf (the dump). 0, or -1 with a diagnostic. */
int dev_emit_dir(const char *dir, const struct program *prog,
		 const struct dev_module *mod, const char *lib, size_t lib_len,
		 struct diags *diags);

/* Fills the facts of dev_map_meta and dev_module.reads_clock
 * (dev_facts.c); dev_compile calls it. */
void dev_map_facts(struct program *prog, struct dev_module *mod);
/* Whether device probe p is an access probe that only counts, keyed by
 * nothing or the kernel, its predicate settled per instruction: it gets
 * a counted form (struct dev_probe.counted). */
bool dev_only_counts(const struct node *p);
/* Whether device probe p does the same whenever in a thread's life it
 * runs: its statements only aggregate into maps, and its predicate, keys
 * and values are lifelong (no clock, memory, map or variable read, no
 * printf). Its kernel_exit sites may then be served at the thread's
 * start (GPUX_SITE_ANYTIME). */
bool dev_runs_anytime(const struct node *p);

#endif
