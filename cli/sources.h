/* Reading a program's .gpx files: several given together are one text,
 * each file's lines remembered so diagnostics name it. */
#ifndef GPUX_SOURCES_H
#define GPUX_SOURCES_H

#include <stddef.h>

#include "source.h"

/* The files one after the other in *text (malloc'd), each starting on
 * a line of its own; files[i].first_line says where. A later file's
 * `#!` line becomes a comment of the same width. "-" reads stdin. 0, or
 * -1 after printing why. */
int sources_read(const char *const *paths, int n, char **text, size_t *len,
		 struct source_file *files);

#endif
