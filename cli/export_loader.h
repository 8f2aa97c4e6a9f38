/* --export's server and pusher live in a module (libgpux-export.so,
 * export_net.h, linked with libmicrohttpd and libcurl) that gpux opens
 * only when a run exports, so gpux starts on machines without those
 * libraries. */
#ifndef GPUX_EXPORT_LOADER_H
#define GPUX_EXPORT_LOADER_H

#include "diag.h"
#include "export_net.h"

/* Opens the module once (later calls return the same table). NULL, with
 * a diagnostic naming the module, or the library it needs, that could
 * not be loaded. $GPUX_EXPORT_MODULE overrides the search: next to the
 * gpux binary, then ../lib/gpux/ from it. */
const struct export_net *export_module_open(struct diags *diags);

#endif
