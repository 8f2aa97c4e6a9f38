/* Semantic analysis: a short pipeline of passes over the AST.
 *
 *   probes   resolve attach points against the probe catalog
 *   types    names, variables, maps, calls, types, where actions may run
 *   uniform  warp-uniformity of device expressions, lane-varying branches
 *
 * Each pass records diagnostics; later passes skip what earlier ones could
 * not resolve, so one mistake yields one message. */
#ifndef GPUX_SEMA_H
#define GPUX_SEMA_H

#include "ast.h"
#include "diag.h"

int sema_run(struct program *prog, struct diags *diags);

int sema_probes(struct program *prog, struct diags *diags);
int sema_types(struct program *prog, struct diags *diags);
int sema_uniform(struct program *prog, struct diags *diags);

/* Helpers shared by the passes. */

/* The event set of a probe: the field must exist in every one. */
const struct field *probe_field(const struct node *probe, const char *name);
/* "gdev:kernel_exit" for messages. */
const char *event_str(const struct event *e, char *buf, size_t len);
/* Constant value of an integer expression; false if not constant. */
bool const_int(const struct node *n, int64_t *out);

/* The language's own functions (count, printf, ...; the policy actions
 * are the catalog's), for completion: the i-th one's name and the
 * PLACE_* bits where it runs, or NULL past the last. */
const char *sema_function(size_t i, unsigned *places);
/* Where register name ("ip", "di") is in x86-64's struct pt_regs, or -1. */
int sema_reg_offset(const char *name);
/* An IPv4 or IPv6 address's bytes into out (NULL: only checked): 4,
 * 16, or 0 where s is neither (pton()). */
unsigned sema_pton(const char *s, unsigned char out[16]);
/* The number of a signal named "SIGUSR1" or "USR1", or -1. */
int sema_signal_number(const char *name);
/* One printf conversion as printf() reads it, from just after its '%'
 * in s (len bytes): its flags and width, whether it has the '#' flag or
 * a precision, and its conversion character. len is how many bytes it
 * takes (0: malformed, conv unset). */
struct printf_spec {
	size_t len;
	size_t flags_width; /* the leading bytes of flags and width */
	bool alt, precision;
	char conv;
};
struct printf_spec sema_printf_spec(const char *s, size_t len);

#endif
