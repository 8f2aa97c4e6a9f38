/* libelf helpers for the fatbin tests (the library itself has none). */
#include "elf_util.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static Elf *open_elf(const char *path, int *fd)
{
	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY);
	if (*fd < 0)
		return NULL;
	return elf_begin(*fd, ELF_C_READ, NULL);
}

int secs_load(const char *path, struct sec **out)
{
	size_t shstrndx, nsec;
	Elf_Scn *scn = NULL;
	int fd, n = 0;
	Elf *e = open_elf(path, &fd);

	*out = NULL;
	if (!e || elf_getshdrstrndx(e, &shstrndx) || elf_getshdrnum(e, &nsec)) {
		if (e)
			elf_end(e);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*out = calloc(nsec, sizeof(**out));
	while ((scn = elf_nextscn(e, scn)) && *out) {
		GElf_Shdr sh;
		Elf_Data *d;
		struct sec *s = &(*out)[n];
		const char *nm;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		nm = elf_strptr(e, shstrndx, sh.sh_name);
		d = elf_rawdata(scn, NULL);
		snprintf(s->name, sizeof(s->name), "%s", nm ? nm : "");
		s->addr = sh.sh_addr;
		s->len = d ? d->d_size : 0;
		s->data = malloc(s->len ? s->len : 1);
		if (d && s->len)
			memcpy(s->data, d->d_buf, s->len);
		n++;
	}
	elf_end(e);
	close(fd);
	return n;
}

void secs_free(struct sec *s, int n)
{
	for (int i = 0; i < n; i++)
		free(s[i].data);
	free(s);
}

struct sec *secs_find(struct sec *s, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s[i].name, name))
			return &s[i];
	return NULL;
}

int rela_target(const char *path, const char *rela_name, uint64_t offset,
		char *sec_name, size_t size, int64_t *addend)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL, *symscn;
	int fd, rc = -1;
	Elf *e = open_elf(path, &fd);

	if (!e || elf_getshdrstrndx(e, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh, symsh, tsh;
		Elf_Data *d, *symd;
		const char *nm;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA)
			continue;
		nm = elf_strptr(e, shstrndx, sh.sh_name);
		if (!nm || strcmp(nm, rela_name))
			continue;
		d = elf_getdata(scn, NULL);
		symscn = elf_getscn(e, sh.sh_link);
		if (!d || !symscn || !gelf_getshdr(symscn, &symsh))
			goto out;
		symd = elf_getdata(symscn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;

			if (!gelf_getrela(d, (int)i, &r) || r.r_offset != offset)
				continue;
			if (!symd || !gelf_getsym(symd, (int)GELF_R_SYM(r.r_info), &sym))
				goto out;
			if (!gelf_getshdr(elf_getscn(e, sym.st_shndx), &tsh))
				goto out;
			nm = elf_strptr(e, shstrndx, tsh.sh_name);
			snprintf(sec_name, size, "%s", nm ? nm : "");
			*addend = r.r_addend + (int64_t)sym.st_value;
			rc = 0;
			goto out;
		}
	}
out:
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return rc;
}
