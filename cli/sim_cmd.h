/* gpux --sim WORKLOAD [POLICY...]: each policy (a .gpx file, or files
 * joined by '+', composed; ':ARG' after a file gives its $1, $2...) is
 * compiled for the driver and its programs run against the UVM and
 * scheduling models (sim/) on the workload, one row per policy beside
 * the default. docs/SIMULATOR.md. */
#ifndef GPUX_SIM_CMD_H
#define GPUX_SIM_CMD_H

#include <stdio.h>

#include "options.h"

/* The exit status: 0, or 1 after printing why. */
int sim_command(const struct options *o, FILE *out);

#endif
