/* Printing stacks and symbols as bpftrace 0.17 does (ustack, kstack,
 * usym(), ksym()): frames come from the kernel's stack maps, names from
 * /proc/kallsyms and, for a process, from the ELF files /proc/PID/maps
 * maps (read fresh each time, as bpftrace does under ASLR: a process
 * gone by then prints bare addresses). The controller says where stack
 * frames and symbol tables come from; caches live until out_syms_end. */
#ifndef GPUX_OUT_SYMS_H
#define GPUX_OUT_SYMS_H

#include <stdint.h>
#include <stdio.h>

#include "host_path.h"
#include "types.h"

struct out_syms_src {
	/* stack id's frames in the map of limit frames; 0 or -1 */
	int (*stack)(void *arg, unsigned limit, uint32_t id, uint64_t *ips);
	void *arg;
	int (*symtab_load)(const char *path, struct host_symtab *t);
	void (*symtab_free)(struct host_symtab *t);
};

/* Where frames and symbol tables come from (copied); NULL members:
 * stacks print empty, user addresses bare. */
void out_syms_set(const struct out_syms_src *src);
/* Frees the caches (kallsyms, the files' symbol tables). */
void out_syms_end(void);

/* A stack value (type t) as text: "\n" then a line per frame, each
 * indented by indent spaces (bpftrace mode) or a tab (perf mode);
 * "" when the stack cannot be read. */
void out_stack(FILE *out, struct type t, uint64_t v, int indent);
/* ksym(addr), usym() (USYM_SIZE bytes at p): the symbol's name, else
 * the address as a C++ stream writes a pointer ("0" for null). */
void out_ksym(FILE *out, uint64_t addr);
void out_usym(FILE *out, const unsigned char *p);
/* A TY_STACK, TY_KSYM or TY_USYM value at p as text (malloc'd), stacks
 * indented by indent; NULL if memory ran out. */
char *out_sym_text(struct type t, const unsigned char *p, int indent);

/* Pure parts, for tests: one line of /proc/PID/maps into its range,
 * file offset and path (NULL for anonymous). 0, or -1. */
struct out_mapping {
	uint64_t start, end, offset;
	char path[4096];
};
int out_parse_maps_line(const char *line, struct out_mapping *m);
/* The symbol of t holding address a (an ELF address): its index, or -1. */
int out_symtab_find(const struct host_symtab *t, uint64_t a);

#endif
