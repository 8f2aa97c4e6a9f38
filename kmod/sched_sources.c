// SPDX-License-Identifier: GPL-2.0
/* The nvidia module's own copy of the simulator's sources
 * (sim_sources.c's), with the time-slicing model. */
#include "sim_sources.c"

#include "timeslice.c"
