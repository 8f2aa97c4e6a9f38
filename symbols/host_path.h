/* Where a uprobe goes: the file a target names and the functions a
 * symbol glob matches. Needs only libelf, so a build without libbpf
 * still compiles uprobes (host_syms.c sizes probe strings with these). */
#ifndef GPUX_HOST_PATH_H
#define GPUX_HOST_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where uprobe target t is (bpftrace's resolution): a path with '/' as
 * it is (an absolute one missing here: in pid's mount namespace when
 * pid > 0 and it is there); else an executable of that name in $PATH; else the library
 * T.so* (libT.so* when T does not start with "lib") mapped by pid (when
 * pid > 0), else from the ldconfig cache, else from the standard library
 * directories. 0, or -1. */
int host_resolve_target(const char *t, int pid, char *buf, size_t len);

/* The defined functions of the ELF file path whose names match glob
 * (symtab and dynsym, each name once, in file order). 0, or -1. */
struct host_syms {
	char **name;
	int n, cap;
};
int host_glob_symbols(const char *path, const char *glob, struct host_syms *out);
void host_syms_free(struct host_syms *s);

/* Where uprobe:T:FUNC+OFFSET (func, off) or uprobe:T:ADDRESS (func NULL,
 * the address in off) attaches in the ELF file path, as bpftrace checks
 * it: the offset must lie inside the function, the address in some
 * function, and a uretprobe (ret) only takes a function's first byte.
 * 0 with the function's name (cut to fit) and the file offset to attach
 * at; else -1 with the reason in err. */
struct host_usym {
	char name[256];
	uint64_t file_off;
};
int host_usym_resolve(const char *path, const char *func, uint64_t off, bool ret,
		      struct host_usym *out, char *err, size_t errlen);

/* The address (st_value) and size of data object name in the ELF file
 * path, as bpftrace's uaddr() finds it (size may be NULL). 0, or -1. */
int host_object_addr(const char *path, const char *name, uint64_t *addr, uint64_t *size);

/* The symbols of an ELF file (symtab, dynsym, and its separate debug
 * file's, found by build id), sorted by address, and its loadable
 * segments: what symbolizing an address of a process mapping it needs. */
struct host_symbol {
	uint64_t addr, size;
	char *name;
};
#define HOST_SYMTAB_LOADS 16
struct host_load {
	uint64_t vaddr, offset, filesz;
};
struct host_symtab {
	struct host_symbol *sym;
	int n, cap;
	struct host_load load[HOST_SYMTAB_LOADS];
	int nload;
};
int host_symtab_load(const char *path, struct host_symtab *t);
void host_symtab_free(struct host_symtab *t);

#endif
