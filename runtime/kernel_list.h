/* Kernel and function names: a small PTX scanner for .entry/.func
 * definitions, and a growable list of names the fatbin code shares. */
#ifndef GPUX_KERNEL_LIST_H
#define GPUX_KERNEL_LIST_H

#include <stddef.h>

enum gpux_sym_kind { GPUX_SYM_ENTRY = 1, GPUX_SYM_FUNC = 2 };

struct gpux_names {
	char **name;
	int *kind;                    /* enum gpux_sym_kind, or 0 */
	size_t n, cap;
};

void gpux_names_free(struct gpux_names *l);
int gpux_names_add(struct gpux_names *l, const char *s, size_t len, int kind);
int gpux_names_has(const struct gpux_names *l, const char *s);

/* Appends the names of the kernels (.entry) and device functions (.func)
 * defined in PTX (declarations ending in ';' are skipped) to OUT, once
 * each. Skips comments and strings and looks at top level only.
 * Returns GPUX_FB_OK or GPUX_FB_ENOMEM. */
int gpux_ptx_names(const char *ptx, struct gpux_names *out);

#endif
