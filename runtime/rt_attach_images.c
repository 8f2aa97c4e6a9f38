/* The images of modules loaded before gpux attached (gpux -p): the
 * driver keeps no copy a process can read back, but what cudart loads
 * comes from fatbins registered in the program's objects. Each loaded
 * object's .nvFatBinSegment (read from its file's section headers) holds
 * the wrappers cudart passes to the driver; a kernel launched from an
 * unknown module is looked up by name in them, and its wrapper becomes
 * the module's image, as if the load had been seen. Modules loaded from
 * memory the program has since reused have no image to find. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cubin.h"
#include "fatbin.h"
#include "kernel_list.h"

#define MAX_SECTIONS 4096 /* more section headers than that: not a program's object */

struct wrapped {
	const void *wrapper; /* in the program's memory */
	bool named;          /* names read (empty: no PTX, or unreadable) */
	struct gpux_names names;
};

static struct wrapped *ws;
static size_t nws, cap;
static bool scanned;

static void add(const void *w)
{
	struct gpux_fb_wrapper fw;
	if (gpux_fb_wrapper_parse(w, GPUX_FB_WRAPPER_SIZE, &fw) || !fw.data)
		return;
	if (nws == cap) {
		size_t n = cap ? 2 * cap : 64;
		struct wrapped *v = realloc(ws, n * sizeof(*v));
		if (!v)
			return;
		ws = v;
		cap = n;
	}
	ws[nws++] = (struct wrapped){ .wrapper = w };
}

/* The wrappers of one object, from its file's .nvFatBinSegment. */
static void scan_file(const char *path, uintptr_t base)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	char *names = NULL;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    !eh.e_shnum || eh.e_shnum > MAX_SECTIONS || eh.e_shstrndx >= eh.e_shnum)
		goto out;
	size_t shlen = (size_t)eh.e_shnum * sizeof(*sh);
	if (!(sh = malloc(shlen)) || pread(fd, sh, shlen, (off_t)eh.e_shoff) != (ssize_t)shlen)
		goto out;
	const Elf64_Shdr *ns = &sh[eh.e_shstrndx];
	if (ns->sh_size > (1u << 24) || !(names = malloc(ns->sh_size + 1)) ||
	    pread(fd, names, ns->sh_size, (off_t)ns->sh_offset) != (ssize_t)ns->sh_size)
		goto out;
	names[ns->sh_size] = 0;
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		if (sh[i].sh_name >= ns->sh_size || strcmp(names + sh[i].sh_name, ".nvFatBinSegment") ||
		    !(sh[i].sh_flags & SHF_ALLOC))
			continue;
		const char *p = (const char *)(base + sh[i].sh_addr);
		for (uint64_t off = 0; off + GPUX_FB_WRAPPER_SIZE <= sh[i].sh_size;
		     off += GPUX_FB_WRAPPER_SIZE)
			add(p + off);
	}
out:
	free(names);
	free(sh);
	close(fd);
}

static int scan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size, (void)arg;
	const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : NULL;
	if (!path) { /* the executable (the vdso has no name either, nor a file) */
		static bool exe_done;
		if (exe_done)
			return 0;
		exe_done = true;
		path = "/proc/self/exe";
	}
	scan_file(path, info->dlpi_addr);
	return 0;
}

static void forget(void)
{
	for (size_t i = 0; i < nws; i++)
		gpux_names_free(&ws[i].names);
	free(ws);
	ws = NULL;
	nws = cap = 0;
}

void rt_attach_images_scan(void)
{
	forget();
	dl_iterate_phdr(scan_object, NULL);
	scanned = true;
	RT_TRACE("attach: %zu fatbins registered in the program's objects", nws);
}

/* The kernels of a wrapper's container: from its first cubin, else from
 * its PTX; none when it has no PTX (nothing gpux could instrument). */
static void read_names(struct wrapped *w)
{
	w->named = true;
	struct gpux_fb_wrapper fw;
	size_t len;
	const void *c;
	if (gpux_fb_wrapper_parse(w->wrapper, GPUX_FB_WRAPPER_SIZE, &fw))
		return;
	c = (const void *)(uintptr_t)fw.data;
	if (gpux_fb_container_size(c, GPUX_FB_HEADER_SIZE, &len))
		return;
	struct gpux_fb_iter it;
	struct gpux_fb_elem e, cubin = { 0 }, ptx = { 0 };
	gpux_fb_iter_init(&it, c, len);
	while (gpux_fb_next(&it, &e) == GPUX_FB_OK) {
		if (e.kind == GPUX_FB_ELF && !cubin.kind)
			cubin = e;
		if (e.kind == GPUX_FB_PTX && !ptx.kind)
			ptx = e;
	}
	if (!ptx.kind)
		return;
	uint8_t *data = NULL;
	size_t n;
	if (cubin.kind && gpux_fb_elem_data(&cubin, &data, &n) == GPUX_FB_OK) {
		gpux_cubin_kernels(data, n, &w->names);
	} else {
		char *text = NULL;
		if (gpux_fb_elem_ptx(&ptx, &text) == GPUX_FB_OK)
			gpux_ptx_names(text, &w->names);
		free(text);
	}
	free(data);
}

const void *rt_attach_image_of(const char *kernel)
{
	if (!scanned || !kernel)
		return NULL;
	for (size_t i = 0; i < nws; i++) {
		if (!ws[i].named)
			read_names(&ws[i]);
		for (size_t k = 0; k < ws[i].names.n; k++)
			if ((!ws[i].names.kind || ws[i].names.kind[k] != GPUX_SYM_FUNC) &&
			    !strcmp(ws[i].names.name[k], kernel))
				return ws[i].wrapper;
	}
	return NULL;
}

bool rt_attached_late(void)
{
	return scanned;
}
