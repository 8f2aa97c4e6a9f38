/* USDT notes and argument specs (host_usdt.h). */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host_usdt.h"

#define NT_STAPSDT 3

/* x86-64's general registers by every name an operand may give them
 * (64, 32, 16 and low 8 bits), with their offset in struct pt_regs. No
 * %rip: its operands name symbols ("sym(%rip)"), which gpux cannot read. */
static const struct {
	const char *names[4];
	unsigned off;
} regs[] = {
	{ { "rax", "eax", "ax", "al" }, 80 },   { { "rbx", "ebx", "bx", "bl" }, 40 },
	{ { "rcx", "ecx", "cx", "cl" }, 88 },   { { "rdx", "edx", "dx", "dl" }, 96 },
	{ { "rsi", "esi", "si", "sil" }, 104 }, { { "rdi", "edi", "di", "dil" }, 112 },
	{ { "rbp", "ebp", "bp", "bpl" }, 32 },  { { "rsp", "esp", "sp", "spl" }, 152 },
	{ { "r8", "r8d", "r8w", "r8b" }, 72 },  { { "r9", "r9d", "r9w", "r9b" }, 64 },
	{ { "r10", "r10d", "r10w", "r10b" }, 56 }, { { "r11", "r11d", "r11w", "r11b" }, 48 },
	{ { "r12", "r12d", "r12w", "r12b" }, 24 }, { { "r13", "r13d", "r13w", "r13b" }, 16 },
	{ { "r14", "r14d", "r14w", "r14b" }, 8 },  { { "r15", "r15d", "r15w", "r15b" }, 0 },
};

/* "%NAME" followed by end: the register's pt_regs offset. */
static int reg_of(const char *s, size_t len, unsigned *off)
{
	if (len < 2 || s[0] != '%')
		return -1;
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		for (int k = 0; k < 4; k++)
			if (strlen(regs[i].names[k]) == len - 1 &&
			    !strncmp(regs[i].names[k], s + 1, len - 1)) {
				*off = regs[i].off;
				return 0;
			}
	return -1;
}

static bool whole_i64(const char *s, size_t len, int64_t *out)
{
	char buf[32], *end;
	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	long long v = strtoll(buf, &end, 10);
	if (*end || errno || (buf[0] != '-' && (buf[0] < '0' || buf[0] > '9')))
		return false;
	*out = v;
	return true;
}

int host_usdt_parse_arg(const char *spec, struct host_usdt_arg *out)
{
	memset(out, 0, sizeof(*out));
	const char *at = strchr(spec, '@');
	int64_t size;
	if (!at || !whole_i64(spec, (size_t)(at - spec), &size))
		return -1;
	out->is_signed = size < 0;
	out->size = (unsigned)(size < 0 ? -size : size);
	if (out->size != 1 && out->size != 2 && out->size != 4 && out->size != 8)
		return -1;
	const char *op = at + 1;
	size_t len = strlen(op);
	if (op[0] == '$') {
		out->loc = HOST_USDT_CONST;
		return whole_i64(op + 1, len - 1, &out->val) ? 0 : -1;
	}
	if (op[0] == '%') {
		out->loc = HOST_USDT_REG;
		return reg_of(op, len, &out->reg);
	}
	/* [DISP](%REG): no symbol, no index register */
	const char *lp = strchr(op, '(');
	if (!lp || len < 2 || op[len - 1] != ')')
		return -1;
	out->loc = HOST_USDT_MEM;
	if (lp > op && !whole_i64(op, (size_t)(lp - op), &out->val))
		return -1;
	return reg_of(lp + 1, (size_t)(op + len - 1 - (lp + 1)), &out->reg);
}

/* The file offset of virtual address va, through the loadable segment
 * holding it (the kernel's uprobe and ref_ctr_offset take file offsets). */
static bool va_to_off(Elf *e, uint64_t va, uint64_t *off)
{
	size_t n;
	if (elf_getphdrnum(e, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || va < ph.p_vaddr ||
		    va - ph.p_vaddr >= ph.p_memsz)
			continue;
		*off = va - ph.p_vaddr + ph.p_offset;
		return true;
	}
	return false;
}

static Elf_Scn *section_named(Elf *e, const char *want, GElf_Shdr *sh)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		const char *name;
		if (gelf_getshdr(scn, sh) && (name = elf_strptr(e, shstrndx, sh->sh_name)) &&
		    !strcmp(name, want))
			return scn;
	}
	return NULL;
}

static struct host_usdt_site *new_site(struct host_usdt_sites *s)
{
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 16;
		struct host_usdt_site *v = realloc(s->v, (size_t)cap * sizeof(*v));
		if (!v)
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	struct host_usdt_site *site = &s->v[s->n++];
	memset(site, 0, sizeof(*site));
	return site;
}

/* The specs, blank-separated; the first that cannot be read is kept. */
static int parse_args(struct host_usdt_site *site, const char *specs)
{
	char spec[64];
	while (*specs) {
		specs += strspn(specs, " \t");
		size_t len = strcspn(specs, " \t");
		if (!len)
			break;
		if (site->nargs == HOST_USDT_MAX_ARGS || len >= sizeof(spec)) {
			site->bad_spec = strndup(specs, len);
			site->nargs = -1;
			return site->bad_spec ? 0 : -1;
		}
		memcpy(spec, specs, len);
		spec[len] = '\0';
		if (host_usdt_parse_arg(spec, &site->args[site->nargs])) {
			site->bad_spec = strdup(spec);
			site->nargs = -1;
			return site->bad_spec ? 0 : -1;
		}
		site->nargs++;
		specs += len;
	}
	return 0;
}

/* One note's descriptor: pc, base and semaphore addresses, then the
 * provider, name and argument specs, each NUL-terminated. */
static int one_note(Elf *e, const char *path, const char *desc, size_t len, unsigned asize,
		    bool has_base, uint64_t base_addr, struct host_usdt_sites *out)
{
	uint64_t a[3] = { 0 };
	if (len < 3 * asize)
		return 0; /* not ours to judge: skipped as libbpf skips it */
	for (int i = 0; i < 3; i++) {
		if (asize == 8) {
			memcpy(&a[i], desc + 8 * i, 8);
		} else {
			uint32_t v;
			memcpy(&v, desc + 4 * i, 4);
			a[i] = v;
		}
	}
	const char *p = desc + 3 * asize, *end = desc + len;
	const char *strs[3];
	for (int i = 0; i < 3; i++) {
		const char *z = memchr(p, '\0', (size_t)(end - p));
		if (!z)
			return 0;
		strs[i] = p;
		p = z + 1;
	}
	/* prelink may have moved the file: the base note says by how much */
	uint64_t pc = has_base && a[1] ? a[0] - a[1] + base_addr : a[0];
	uint64_t off, sema = 0;
	if (!va_to_off(e, pc, &off) || (a[2] && !va_to_off(e, a[2], &sema)))
		return 0;
	struct host_usdt_site *site = new_site(out);
	if (!site)
		return -1;
	site->file_off = off;
	site->sema_off = sema;
	site->path = strdup(path);
	site->provider = strdup(strs[0]);
	site->name = strdup(strs[1]);
	if (!site->path || !site->provider || !site->name)
		return -1;
	return parse_args(site, strs[2]);
}

static int read_notes(Elf *e, const char *path, struct host_usdt_sites *out)
{
	GElf_Shdr sh, bsh;
	Elf_Scn *scn = section_named(e, ".note.stapsdt", &sh);
	if (!scn || sh.sh_type != SHT_NOTE)
		return 0;
	bool has_base = section_named(e, ".stapsdt.base", &bsh) != NULL;
	unsigned asize = gelf_getclass(e) == ELFCLASS32 ? 4 : 8;
	Elf_Data *d = elf_getdata(scn, NULL);
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off, next;
	while (d && off < d->d_size && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off))) {
		const char *owner = (const char *)d->d_buf + name_off;
		if (nh.n_type == NT_STAPSDT && nh.n_namesz == 8 && !memcmp(owner, "stapsdt", 8) &&
		    one_note(e, path, (const char *)d->d_buf + desc_off, nh.n_descsz, asize,
			     has_base, has_base ? bsh.sh_addr : 0, out))
			return -1;
		off = next;
	}
	return 0;
}

int host_usdt_read(const char *path, struct host_usdt_sites *out, char *err, size_t errlen)
{
	int fd = elf_version(EV_CURRENT) == EV_NONE ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		snprintf(err, errlen, "cannot read %s as an ELF file", path);
		if (e)
			elf_end(e);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	int rc = read_notes(e, path, out);
	elf_end(e);
	close(fd);
	if (rc)
		snprintf(err, errlen, "out of memory reading the USDT notes of %s", path);
	return rc;
}

int host_usdt_read_pid(int pid, struct host_usdt_sites *out, char *err, size_t errlen)
{
	char name[64], line[PATH_MAX + 256], path[PATH_MAX + 64], last[PATH_MAX + 64] = "";
	snprintf(name, sizeof(name), "/proc/%d/maps", pid);
	FILE *f = fopen(name, "re");
	if (!f) {
		snprintf(err, errlen, "cannot read %s: is process %d running?", name, pid);
		return -1;
	}
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		if (!p)
			continue;
		p[strcspn(p, "\n")] = '\0';
		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, p);
		/* a file's mappings come together: read it at its first */
		if (!strcmp(path, last))
			continue;
		snprintf(last, sizeof(last), "%s", path);
		/* mapped files that are not ELF (locales, fonts) have no notes */
		struct host_usdt_sites one = { 0 };
		bool ok = host_usdt_read(path, &one, err, errlen) == 0;
		for (int i = 0; ok && rc == 0 && i < one.n; i++) {
			struct host_usdt_site *s = new_site(out);
			if (!s) {
				snprintf(err, errlen, "out of memory");
				rc = -1;
				break;
			}
			*s = one.v[i];
			memset(&one.v[i], 0, sizeof(one.v[i]));
		}
		host_usdt_free(&one);
	}
	fclose(f);
	*err = rc ? *err : '\0';
	return rc;
}

void host_usdt_free(struct host_usdt_sites *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].provider);
		free(s->v[i].name);
		free(s->v[i].bad_spec);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}
