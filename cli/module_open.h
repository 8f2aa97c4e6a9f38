/* Finding and opening the modules gpux loads on demand
 * (libgpux-host.so, libgpux-export.so), so that gpux itself needs none
 * of the libraries they link; and finding the device runtime
 * (libgpux-rt.so) that it preloads into traced programs. */
#ifndef GPUX_MODULE_OPEN_H
#define GPUX_MODULE_OPEN_H

#include <stddef.h>

/* dlopen's module name (RTLD_NOW | RTLD_LOCAL) from $env when that is
 * set, else from the gpux binary's folder, then ../lib/gpux/ from it
 * (where the install rules put it). A file that is there but does not
 * load ends the search, so the reason told is its own (a library it
 * needs is missing), not that a later place has no such file. The
 * handle, or NULL with the reason into why and the paths tried into
 * tried (", " between them). */
void *module_open(const char *name, const char *env, char *why, size_t wlen, char *tried,
		  size_t tlen);
/* The path of name in the first of those places that has it: 0; or -1
 * with the first place's path (for the message). */
int module_path(const char *name, char *path, size_t len);

#endif
