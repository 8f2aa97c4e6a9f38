/* The running kernel's types from its BTF: struct program's
 * kernel_types, for gpux's front end (cli/kernel_types.c). */
#ifndef GPUX_KERNEL_TYPES_H
#define GPUX_KERNEL_TYPES_H

#include "ast.h"

extern const struct kernel_types kernel_types_btf;

#endif
