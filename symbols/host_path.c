/* Uprobe targets and symbol globs (host_path.h). */
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host_path.h"

static int put(char *buf, size_t len, const char *s)
{
	return snprintf(buf, len, "%s", s) < (int)len ? 0 : -1;
}

/* T.so, T.so.N...: the file name of library T ("libc", "libcuda"),
 * with "lib" in front when T lacks it ("c"). */
static bool lib_name_ok(const char *base, const char *t)
{
	if (strncmp(t, "lib", 3)) {
		if (strncmp(base, "lib", 3))
			return false;
		base += 3;
	}
	size_t n = strlen(t);
	if (strncmp(base, t, n))
		return false;
	const char *r = base + n;
	return !strncmp(r, ".so", 3) && (r[3] == '\0' || r[3] == '.');
}

static int from_path_env(const char *t, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	char dir[PATH_MAX];
	while (*path) {
		size_t n = strcspn(path, ":");
		if (n && n < sizeof(dir)) {
			snprintf(dir, sizeof(dir), "%.*s/%s", (int)n, path, t);
			if (access(dir, X_OK) == 0)
				return put(buf, len, dir);
		}
		path += n + (path[n] == ':');
	}
	return -1;
}

static int from_maps(const char *t, int pid, char *buf, size_t len)
{
	char name[64], line[PATH_MAX + 256];
	snprintf(name, sizeof(name), "/proc/%d/maps", pid);
	FILE *f = fopen(name, "re");
	if (!f)
		return -1;
	int rc = -1;
	while (rc && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		if (!p)
			continue;
		p[strcspn(p, "\n")] = '\0';
		const char *base = strrchr(p, '/') + 1;
		if (lib_name_ok(base, t))
			rc = put(buf, len, p);
	}
	fclose(f);
	return rc;
}

/* "\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6" */
static int from_ldconfig(const char *t, char *buf, size_t len)
{
	FILE *f = popen("/sbin/ldconfig -p 2>/dev/null", "re");
	if (!f)
		return -1;
	char line[PATH_MAX + 256];
	int rc = -1;
	while (fgets(line, sizeof(line), f)) {
		char *arrow = strstr(line, " => ");
		const char *base = line + strspn(line, " \t");
		if (rc == 0 || !arrow || !lib_name_ok(base, t))
			continue;
#if defined(__x86_64__)
		if (!strstr(line, "x86-64"))
			continue;
#endif
		char *p = arrow + 4;
		p[strcspn(p, "\n")] = '\0';
		rc = put(buf, len, p);
	}
	pclose(f);
	return rc;
}

static int from_dirs(const char *t, char *buf, size_t len)
{
	static const char *const dirs[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
					    "/lib64", "/usr/lib64", "/lib", "/usr/lib",
					    "/usr/local/lib" };
	static const char *const ext[] = { ".so", ".so.1", ".so.2", ".so.6" };
	char path[PATH_MAX];
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++)
		for (size_t e = 0; e < sizeof(ext) / sizeof(ext[0]); e++) {
			snprintf(path, sizeof(path), "%s/%s%s%s", dirs[d],
				 strncmp(t, "lib", 3) ? "lib" : "", t, ext[e]);
			if (access(path, R_OK) == 0)
				return put(buf, len, path);
		}
	return -1;
}

int host_resolve_target(const char *t, int pid, char *buf, size_t len)
{
	if (!*t)
		return -1;
	/* an absolute path missing here may be in pid's mount namespace,
	 * which its /proc/PID/root shows (a container's program) */
	if (t[0] == '/' && pid > 0 && access(t, F_OK)) {
		char in_ns[PATH_MAX];
		snprintf(in_ns, sizeof(in_ns), "/proc/%d/root%s", pid, t);
		if (access(in_ns, F_OK) == 0)
			return put(buf, len, in_ns);
	}
	if (strchr(t, '/'))
		return put(buf, len, t);
	if (from_path_env(t, buf, len) == 0)
		return 0;
	if (pid > 0 && from_maps(t, pid, buf, len) == 0)
		return 0;
	if (from_ldconfig(t, buf, len) == 0)
		return 0;
	return from_dirs(t, buf, len);
}

/* ---- symbol globs ---- */

static int add_name(struct host_syms *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return 0;
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 16;
		char **v = realloc(s->name, (size_t)cap * sizeof(*v));
		if (!v)
			return -1;
		s->name = v;
		s->cap = cap;
	}
	if (!(s->name[s->n] = strdup(name)))
		return -1;
	s->n++;
	return 0;
}

/* The symbol versions of dynsym section scn (SHT_GNU_versym), or NULL. */
static Elf_Data *versions_of(Elf *e, Elf_Scn *scn)
{
	size_t at = elf_ndxscn(scn);
	for (Elf_Scn *v = NULL; (v = elf_nextscn(e, v));) {
		GElf_Shdr sh;
		if (gelf_getshdr(v, &sh) && sh.sh_type == SHT_GNU_versym && sh.sh_link == at)
			return elf_getdata(v, NULL);
	}
	return NULL;
}

/* Calls fn on each defined symbol of e of type type (STT_NOTYPE: any)
 * with a name (symtab, then dynsym) until it returns nonzero, which it
 * returns. With defaults set, a dynamic symbol of a version other than
 * its name's default (memcpy@GLIBC_2.2.5 beside memcpy@@GLIBC_2.14) is
 * left out: a name means what a program linked now calls. */
static int each_sym_in(Elf *e, int type, bool defaults,
		       int (*fn)(void *arg, const GElf_Sym *sym, const char *name), void *arg)
{
	int rc = 0;
	for (Elf_Scn *scn = NULL; rc == 0 && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		Elf_Data *vd = defaults && sh.sh_type == SHT_DYNSYM ? versions_of(e, scn) : NULL;
		size_t n = d ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; rc == 0 && i < n; i++) {
			GElf_Sym sym;
			GElf_Versym ver;
			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			/* an ifunc (memcpy) is a function to attach to, as libbpf has it */
			int st = GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC ? STT_FUNC
									   : GELF_ST_TYPE(sym.st_info);
			if ((type != STT_NOTYPE && st != type) || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_value ||
			    (vd && gelf_getversym(vd, (int)i, &ver) && (ver & 0x8000)))
				continue;
			const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name && *name)
				rc = fn(arg, &sym, name);
		}
	}
	return rc;
}

static int each_sym(Elf *e, int type,
		    int (*fn)(void *arg, const GElf_Sym *sym, const char *name), void *arg)
{
	return each_sym_in(e, type, false, fn, arg);
}

/* Functions by name: their default versions only. */
static int each_func(Elf *e, int (*fn)(void *arg, const GElf_Sym *sym, const char *name),
		     void *arg)
{
	return each_sym_in(e, STT_FUNC, true, fn, arg);
}

struct glob_walk {
	const char *glob;
	struct host_syms *out;
};

static int glob_one(void *arg, const GElf_Sym *sym, const char *name)
{
	(void)sym;
	struct glob_walk *g = arg;
	return fnmatch(g->glob, name, 0) ? 0 : add_name(g->out, name);
}

int host_glob_symbols(const char *path, const char *glob, struct host_syms *out)
{
	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	struct glob_walk g = { glob, out };
	int rc = e ? each_func(e, glob_one, &g) : -1;
	if (e)
		elf_end(e);
	close(fd);
	if (rc)
		host_syms_free(out);
	return rc;
}

void host_syms_free(struct host_syms *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->name[i]);
	free(s->name);
	memset(s, 0, sizeof(*s));
}

/* ---- offsets and addresses ---- */

struct fsym {
	GElf_Sym sym;
	const char *name;
	bool found;
};

struct fsym_want {
	const char *func;
	uint64_t addr;
	struct fsym *f;
};

static int fsym_one(void *arg, const GElf_Sym *s, const char *name)
{
	struct fsym_want *w = arg;
	/* as bpftrace: a symbol of size 0 holds its own address */
	bool hit = w->func ? !strcmp(name, w->func)
			   : w->addr == s->st_value ||
			     (w->addr > s->st_value && w->addr - s->st_value < s->st_size);
	if (hit)
		*w->f = (struct fsym){ *s, name, true };
	return hit;
}

/* The first defined function named func (its default version), or
 * (func NULL) containing address addr, in symtab then dynsym. */
static void find_fsym(Elf *e, const char *func, uint64_t addr, struct fsym *f)
{
	struct fsym_want w = { func, addr, f };
	/* an address may be in an older version's function too */
	each_sym_in(e, STT_FUNC, func != NULL, fsym_one, &w);
}

/* The file offset of virtual address addr: through the section holding
 * it, as libbpf turns a symbol into an offset. */
static bool file_offset(Elf *e, uint64_t addr, uint64_t *off)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || addr < sh.sh_addr ||
		    addr - sh.sh_addr >= sh.sh_size)
			continue;
		*off = addr - sh.sh_addr + sh.sh_offset;
		return true;
	}
	return false;
}

int host_usym_resolve(const char *path, const char *func, uint64_t off, bool ret,
		      struct host_usym *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	int fd = elf_version(EV_CURRENT) == EV_NONE ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	if (!e) {
		snprintf(err, errlen, "cannot read the symbols of %s", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct fsym f = { 0 };
	find_fsym(e, func, off, &f);
	int rc = -1;
	uint64_t at = 0, into = 0;
	if (!f.found) {
		if (func)
			snprintf(err, errlen, "%s has no function %s", path, func);
		else
			snprintf(err, errlen, "Could not resolve address: %s:0x%llx (no function "
				 "holds it)", path, (unsigned long long)off);
	} else {
		at = func ? f.sym.st_value + off : off;
		into = at - f.sym.st_value;
		if (func && off >= f.sym.st_size)
			snprintf(err, errlen, "Offset outside the function bounds ('%s' size is %llu)",
				 func, (unsigned long long)f.sym.st_size);
		else if (ret && into)
			snprintf(err, errlen, "a uretprobe attaches at a function's start, and "
				 "0x%llx is %s+%llu", (unsigned long long)at, f.name,
				 (unsigned long long)into);
		else if (!file_offset(e, at, &out->file_off))
			snprintf(err, errlen, "address 0x%llx is in no code section of %s",
				 (unsigned long long)at, path);
		else
			rc = 0;
	}
	if (rc == 0)
		snprintf(out->name, sizeof(out->name), "%s", f.name);
	elf_end(e);
	close(fd);
	return rc;
}

/* ---- data symbols and symbol tables ---- */

static Elf *open_elf(const char *path, int *fd)
{
	*fd = elf_version(EV_CURRENT) == EV_NONE ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = *fd < 0 ? NULL : elf_begin(*fd, ELF_C_READ, NULL);
	if (!e && *fd >= 0)
		close(*fd);
	return e;
}

struct obj_want {
	const char *name;
	uint64_t addr, size;
};

static int obj_one(void *arg, const GElf_Sym *s, const char *name)
{
	struct obj_want *w = arg;
	if (strcmp(name, w->name))
		return 0;
	w->addr = s->st_value;
	w->size = s->st_size;
	return 1;
}

int host_object_addr(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	int fd;
	Elf *e = open_elf(path, &fd);
	if (!e)
		return -1;
	struct obj_want w = { name, 0, 0 };
	int found = each_sym(e, STT_OBJECT, obj_one, &w);
	elf_end(e);
	close(fd);
	*addr = w.addr;
	if (size)
		*size = w.size;
	return found ? 0 : -1;
}

static int tab_add(void *arg, const GElf_Sym *s, const char *name)
{
	struct host_symtab *t = arg;
	if (t->n == t->cap) {
		int cap = t->cap ? 2 * t->cap : 256;
		struct host_symbol *v = realloc(t->sym, (size_t)cap * sizeof(*v));
		if (!v)
			return -1;
		t->sym = v;
		t->cap = cap;
	}
	char *copy = strdup(name);
	if (!copy)
		return -1;
	t->sym[t->n++] = (struct host_symbol){ s->st_value, s->st_size, copy };
	return 0;
}

/* The PT_LOAD segments, to turn a file offset into an address. */
static int add_loads(Elf *e, struct host_symtab *t)
{
	size_t n;
	if (elf_getphdrnum(e, &n))
		return -1;
	for (size_t i = 0; i < n && t->nload < HOST_SYMTAB_LOADS; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD)
			t->load[t->nload++] = (struct host_load){ ph.p_vaddr, ph.p_offset,
								 ph.p_filesz };
	}
	return 0;
}

/* The separate debug file of e, by build id, as installed under
 * /usr/lib/debug/.build-id (a stripped library's local symbols). */
static int debug_file(Elf *e, char *buf, size_t len)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_descsz < 2)
				continue;
			const unsigned char *id = (const unsigned char *)d->d_buf + desc_off;
			int k = snprintf(buf, len, "/usr/lib/debug/.build-id/%02x/", id[0]);
			for (size_t i = 1; i < nh.n_descsz && k > 0 && (size_t)k < len; i++)
				k += snprintf(buf + k, len - (size_t)k, "%02x", id[i]);
			if (k > 0 && (size_t)k < len)
				snprintf(buf + k, len - (size_t)k, ".debug");
			return access(buf, R_OK);
		}
	}
	return -1;
}

static int symtab_cmp(const void *a, const void *b)
{
	const struct host_symbol *x = a, *y = b;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

int host_symtab_load(const char *path, struct host_symtab *t)
{
	memset(t, 0, sizeof(*t));
	int fd;
	Elf *e = open_elf(path, &fd);
	if (!e)
		return -1;
	int rc = add_loads(e, t) || each_sym(e, STT_NOTYPE, tab_add, t) ? -1 : 0;
	char dbg[PATH_MAX];
	if (rc == 0 && debug_file(e, dbg, sizeof(dbg)) == 0) {
		int dfd;
		Elf *de = open_elf(dbg, &dfd);
		if (de) {
			rc = each_sym(de, STT_NOTYPE, tab_add, t) ? -1 : 0;
			elf_end(de);
			close(dfd);
		}
	}
	elf_end(e);
	close(fd);
	if (rc) {
		host_symtab_free(t);
		return -1;
	}
	/* of several names at one address, which one a lookup finds is
	 * unspecified, as in bcc's tables */
	qsort(t->sym, (size_t)t->n, sizeof(*t->sym), symtab_cmp);
	return 0;
}

void host_symtab_free(struct host_symtab *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->sym[i].name);
	free(t->sym);
	memset(t, 0, sizeof(*t));
}
