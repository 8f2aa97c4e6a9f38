/* USDT probes of an ELF file, as SystemTap's sys/sdt.h records them in
 * .note.stapsdt: one note per site, with where it is, its semaphore and
 * how to read each argument. Needs only libelf (as host_path.h), so a
 * build without libbpf still compiles usdt probes and -l lists them. */
#ifndef GPUX_HOST_USDT_H
#define GPUX_HOST_USDT_H

#include <fnmatch.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* sys/sdt.h's limit, and libbpf's */
#define HOST_USDT_MAX_ARGS 12

enum host_usdt_loc {
	HOST_USDT_CONST, /* "4@$5": the value */
	HOST_USDT_REG,   /* "-4@%edi": a register's low bytes */
	HOST_USDT_MEM,   /* "8@-16(%rbp)": user memory at a register plus disp */
};

struct host_usdt_arg {
	enum host_usdt_loc loc;
	unsigned size;   /* bytes: 1, 2, 4 or 8 */
	bool is_signed;  /* extended to 64 bits by sign, else by zeros */
	unsigned reg;    /* the register's offset in struct pt_regs */
	int64_t val;     /* the constant, or the displacement */
};

struct host_usdt_site {
	char *path;        /* the file it is in */
	char *provider, *name;
	uint64_t file_off; /* where the uprobe goes, in the file */
	uint64_t sema_off; /* the semaphore's file offset; 0: none */
	int nargs;         /* -1: an argument spec gpux cannot read */
	char *bad_spec;    /* ... that spec */
	struct host_usdt_arg args[HOST_USDT_MAX_ARGS];
};

struct host_usdt_sites {
	struct host_usdt_site *v;
	int n, cap;
};

/* Appends every site of path to out (zeroed before the first call), in
 * note order (none is no error). 0, or -1 with the reason in err. */
int host_usdt_read(const char *path, struct host_usdt_sites *out, char *err, size_t errlen);
/* Appends the sites of every ELF file process pid maps, each once, as
 * "/proc/PID/root/FILE" (bpftrace's names for them). 0, or -1 with the
 * reason in err. */
int host_usdt_read_pid(int pid, struct host_usdt_sites *out, char *err, size_t errlen);
void host_usdt_free(struct host_usdt_sites *s);

/* One argument spec of x86-64's sys/sdt.h ("-4@%edi", "8@-16(%rbp)",
 * "4@$5"). 0, or -1 for a form gpux cannot read (symbols, an index
 * register, another architecture's). */
int host_usdt_parse_arg(const char *spec, struct host_usdt_arg *out);

/* Whether site s matches the globs of usdt:T:PROV:NAME (inline: -l
 * uses it without the module's symbols). */
static inline bool host_usdt_match(const struct host_usdt_site *s, const char *prov,
				   const char *name)
{
	return !fnmatch(prov, s->provider, 0) && !fnmatch(name, s->name, 0);
}

#endif
