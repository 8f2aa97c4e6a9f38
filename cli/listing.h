/* gpux -l [GLOB] and gpux -lv [GLOB]: the probes one may attach to, as
 * bpftrace -l lists them. */
#ifndef GPUX_LISTING_H
#define GPUX_LISTING_H

#include <stdbool.h>
#include <stdio.h>

/* Print each probe whose "provider:event" matches glob (fnmatch; NULL or
 * "" lists all; a provider alias such as "t:" is expanded first). Probes
 * written with arguments print as templates ("uprobe:TARGET:SYMBOL"),
 * except that a glob starting with "tracepoint:" lists the tracepoints
 * tracefs has. verbose adds where each probe runs, its filter, fields,
 * builtins, return decisions and actions. Returns how many probes were
 * printed; the caller reports 0 as "no probes match". */
int listing_print(FILE *out, const char *glob, bool verbose);

#endif
