/* Where each map of a program that mixes kernel probes (uprobe,
 * uretprobe, tracepoint) or gdev:/cuda: probes with BEGIN/END/interval
 * lives: with those probes if they use it (in the kernel, or in the
 * traced program), else in the controller's userspace VM. BEGIN/END/
 * interval may print, clear and zero the others' maps (the controller
 * does that), and read kernel maps (copied into the VM before each run),
 * but not write them: that is refused, for now, with the map's
 * location. */
#ifndef GPUX_MAP_PLACE_H
#define GPUX_MAP_PLACE_H

#include <stdbool.h>

#include "ast.h"
#include "diag.h"
#include "llvm_host.h"

/* Whether a probe runs in the VM (BEGIN, END, interval). */
bool map_place_vm_probe(const struct node *probe);
/* in_kernel[i] for each obj->maps[i]: a probe other than BEGIN/END/
 * interval uses it. where says where such maps live, for the message
 * ("in the kernel"). With vm_reads (per map), BEGIN/END/interval may
 * also read such maps (the caller copies them into the VM first), and
 * vm_reads[i] says which they read; writes stay refused. 0, or -1 with
 * diagnostics. */
int map_place(struct program *prog, const struct host_obj *obj, bool *in_kernel,
	      bool *vm_reads, const char *where, struct diags *diags);

#endif
