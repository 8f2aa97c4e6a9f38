/* A uprobe's args from the DWARF of its target: struct program's
 * dwarf_args, for gpux's front end (cli/uprobe_args.c). */
#ifndef GPUX_UPROBE_ARGS_H
#define GPUX_UPROBE_ARGS_H

#include <stddef.h>

#include "ast.h"

int uprobe_dwarf_args(struct arena *a, const char *target, int target_pid, const char *func,
		      struct dwarf_args *out, const char **why);
/* struct program's dwarf_record. */
const char *uprobe_dwarf_record(struct arena *a, const char *target, int target_pid,
				const char *rec);
/* struct program's object_size. */
int uprobe_object_size(const char *target, int target_pid, const char *sym, uint64_t *size);

#endif
