/* `gpux -d ast` and `-d types`: the tree, one node a line, indented. */
#ifndef GPUX_AST_DUMP_H
#define GPUX_AST_DUMP_H

#include <stdbool.h>
#include <stdio.h>

#include "ast.h"

/* With types, each expression shows its type and, in device probes, its
 * warp-uniformity; the map table follows the tree. */
void ast_dump(FILE *out, const struct program *prog, bool types);
void ast_dump_node(FILE *out, const struct node *n, int indent, bool types,
		   bool device);

/* One map as "@name[key types] :: value (places)" and a newline. */
void ast_dump_map(FILE *out, const struct map_info *m);

#endif
