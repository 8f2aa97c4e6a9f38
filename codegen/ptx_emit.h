/* Internals of the PTX JIT shared by its translation units: the state of
 * one function being emitted and the per-class translators.
 *
 * Registers of the emitted function:
 *   %r0..%r10  the eBPF registers (.b64)
 *   %ctx       the context pointer as passed in (r1 is overwritten)
 *   %t0..%t1   64-bit scratch, %w0..%w3 32-bit scratch, %p a predicate
 * Scratch never lives across eBPF instructions. */
#ifndef GPUX_PTX_EMIT_H
#define GPUX_PTX_EMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "device_abi.h"
#include "diag.h"

struct ptx_fn {
	const struct dev_prog *prog;
	FILE *out;
	struct diags *diags;
	bool *is_target;  /* per instruction: some jump lands here */
	bool r1_known;    /* r1 holds a known constant (builtin ids) */
	int64_t r1_value;
	bool needs_leave; /* lane_filter branches to $Lgpux_leave */
};

/* Each returns 0, or -1 after a diagnostic at instruction i. */
int ptx_emit_alu(struct ptx_fn *f, int i);
int ptx_emit_mem(struct ptx_fn *f, int i);
int ptx_emit_jmp(struct ptx_fn *f, int i);
int ptx_emit_call(struct ptx_fn *f, int i);

/* The n-th helper of the library (NULL past the end), for prototypes. */
const char *ptx_helper_nth(int n, int *nargs);

/* A diagnostic at instruction i's source span. */
int ptx_fail(struct ptx_fn *f, int i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Print one line of the body, indented by a tab. */
void ptx_line(struct ptx_fn *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
