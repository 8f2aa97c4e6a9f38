/* A function's parameters from the DWARF of the file that defines it, as
 * bpftrace reads a uprobe's args: names, C types, and where each one
 * is. libdw is loaded when first needed (dlopen), so gpux runs where it
 * is missing, without DWARF arguments. */
#ifndef GPUX_HOST_DWARF_H
#define GPUX_HOST_DWARF_H

#include <stdbool.h>
#include <stddef.h>

struct host_dparam {
	char *name;
	char *ctype;   /* as bpftrace prints it: "long int", "const char*" */
	unsigned size; /* bytes */
	bool is_signed;
	/* the integer argument register it arrives in (x86-64 System V:
	 * the integer and pointer parameters in order), or -1 where it is
	 * not in one (a float, a struct passed by value, and those after) */
	int reg;
	/* a pointer to a struct or union that defs defines: its record
	 * ("struct rec") and how many pointers deep, else NULL and 0 */
	char *record;
	int stars;
};

/* C definitions of the records the parameters point to (and those they
 * hold by value), each with its size from DWARF to check the layout
 * against: "struct a { ... };" text and "struct a" -> bytes. */
struct host_drecords {
	char *defs;
	int n;
	char **name;
	unsigned *size;
};

/* The parameters of the function func defined in path, in order.
 * 0, or -ENOENT (the file has no DWARF for func), -ENOSYS (no libdw
 * here), -errno; err says why. *out is malloc'd (host_dparams_free). */
int host_dwarf_params(const char *path, const char *func, struct host_dparam **out, int *n,
		      struct host_drecords *recs, char *err, size_t errlen);
/* The C definition of record rec ("struct foo", "union u") from the
 * DWARF of path, with the records it holds by value before it. 0, or
 * -ENOENT (no such record there), -ENOSYS (no libdw), -errno; err says
 * why. recs->defs is malloc'd (host_drecords_free). */
int host_dwarf_record(const char *path, const char *rec, struct host_drecords *recs, char *err,
		      size_t errlen);
/* Whether DWARF can be read here (libdw loads). */
bool host_dwarf_available(void);
void host_dparams_free(struct host_dparam *p, int n);
void host_drecords_free(struct host_drecords *r);

#endif
