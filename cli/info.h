/* `gpux --info`: what this gpux and this machine can trace. */
#ifndef GPUX_INFO_H
#define GPUX_INFO_H

#include <stdio.h>

/* Prints the report to out: 0, or 1 if it could not be written. */
int info_print(FILE *out);

#endif
