/* Module variables and a module's second copy.
 *
 * A live session launches kernels from a second, instrumented copy of a
 * module while the program keeps using the first one's variables (its
 * cudaMemcpyToSymbol, its graphs, its launches that stay untouched). A
 * copy with variables of its own would not see them. ptx_vars_remap
 * makes the copy use the first's: every reference to a module-scope
 * .global or .const variable becomes an address loaded from the table
 * PTX_VARS_TABLE, whose slot i the runtime fills with the original
 * module's address of the i-th variable ptx_vars_list names. The copy's
 * own declarations shrink to one byte (debug sections may name them).
 * The variables being in global memory in the copy, its constant-space
 * instructions move to global space: ld.const becomes ld.global.nc
 * (the data is read-only while a kernel runs), cvta and isspacep of
 * .const become those of .global.
 *
 * Text between the rewriter's probe markers (ptx_rewrite.h) is gpux's
 * and left alone, so a module can be remapped after its rewrite: the
 * sites the rewriter chose are those of the original module. */
#ifndef GPUX_PTX_VARS_H
#define GPUX_PTX_VARS_H

#include <stddef.h>

#define PTX_VARS_TABLE "gpux_mvars"

struct ptx_var_list {
	char **name; /* in declaration order: slot i of PTX_VARS_TABLE */
	size_t n, cap;
};

/* The module-scope .global and .const variables of s, but for those
 * between the probe markers (gpux's, whatever the program's names). 0,
 * or -1 with err when the module has variables a copy cannot share:
 * .extern ones (relocatable code), texture or surface references,
 * variables declared inside a function. */
int ptx_vars_list(const char *s, size_t len, struct ptx_var_list *out, char *err,
		  size_t errlen);
void ptx_var_list_free(struct ptx_var_list *v);

/* s with its variables remapped into *out (malloc'd, NUL-terminated,
 * *outlen bytes): 0; 1 when s has nothing to remap (*out NULL); -1 with
 * err when it cannot be (as above, or a use of a variable other than as
 * an address operand or a moved address). */
int ptx_vars_remap(const char *s, size_t len, char **out, size_t *outlen, char *err,
		   size_t errlen);

#endif
