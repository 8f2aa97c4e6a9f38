/* gpux -l [GLOB] and gpux -lv [GLOB]: the probes one may attach to, as
 * bpftrace -l lists them. */
#ifndef GPUX_LISTING_H
#define GPUX_LISTING_H

#include <stdbool.h>
#include <stdio.h>

/* Print each probe whose "provider:event" matches glob (fnmatch; NULL or
 * "" lists all; a provider alias such as "t:" is expanded first). Probes
 * written with arguments print as templates ("uprobe:TARGET:SYMBOL"),
 * except where the provider's unit lists what it can attach to
 * (tracepoints and kernel functions, from tracefs). verbose adds where
 * each probe runs, its filter, fields, builtins, return decisions and
 * actions. Returns how many probes were
 * printed; the caller reports 0 as "no probes match". quiet: no word on
 * a provider whose probes cannot be listed here. */
int listing_print(FILE *out, const char *glob, bool verbose, bool quiet);

struct diags;
#define LISTING_NOT_MINE (-2)
/* The functions of a binary (listing_uprobes.c), with verbose each
 * uprobe's parameters from DWARF as bpftrace prints them: glob "uprobe:TARGET:SYM"
 * or "uretprobe:TARGET:SYM" with a literal TARGET lists TARGET's
 * functions matching SYM (TARGET resolved as an attach point's is); with
 * pid > 0, the functions of the process's executable matching glob's
 * last part ("uprobe:FUNC"; NULL: all). How many were printed; LISTING_NOT_MINE when
 * glob is for listing_print; -1 with the reason in err. */
int listing_uprobes(FILE *out, const char *glob, long pid, bool verbose, char *err,
		    size_t errlen);
/* The USDT probes of a binary (listing_usdt.c): glob "usdt:TARGET",
 * "usdt:TARGET:PROBE" or "usdt:TARGET:PROVIDER:PROBE" (globs but in
 * TARGET), TARGET resolved as an attach point's; with pid > 0 and a
 * TARGET without '/' ("usdt:*"), every file the process maps. Returns as
 * listing_uprobes does. */
int listing_usdt(FILE *out, const char *glob, long pid, char *err, size_t errlen);

#endif
