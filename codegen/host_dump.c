/* -d bpf and --emit for the host object: the ELF is read back with
 * libelf, instructions printed with the shared disassembler, map and
 * kfunc names taken from relocations and source lines from .BTF.ext. */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_asm.h"
#include "host_priv.h"

struct line_sec {
	const char *name;
	const uint32_t *recs; /* insn_off, file, line_off, line_col */
	uint32_t n, rec_words;
};

struct lines {
	struct line_sec secs[64];
	int n;
};

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* .BTF.ext line_info, keyed by section name through .BTF's strings. */
static void read_lines(Elf_Data *btf, Elf_Data *ext, struct lines *L)
{
	L->n = 0;
	if (!btf || !ext || btf->d_size < 24 || ext->d_size < 32)
		return;
	const unsigned char *b = btf->d_buf, *e = ext->d_buf;
	const char *strs = (const char *)b + rd32(b + 4) + rd32(b + 16);
	uint32_t str_len = rd32(b + 20);
	uint32_t hdr = rd32(e + 4), off = rd32(e + 16), len = rd32(e + 20);
	if ((size_t)hdr + off + len > ext->d_size || len < 4)
		return;
	const unsigned char *p = e + hdr + off, *end = p + len;
	uint32_t rec = rd32(p);
	p += 4;
	if (rec < 16 || rec % 4)
		return;
	while (p + 8 <= end && L->n < 64) {
		uint32_t name = rd32(p), n = rd32(p + 4);
		p += 8;
		if (name >= str_len || p + (size_t)n * rec > end)
			return;
		L->secs[L->n++] = (struct line_sec){ strs + name, (const uint32_t *)(const void *)p,
						     n, rec / 4 };
		p += (size_t)n * rec;
	}
}

/* The source line of each of n instructions of section sec (0: none),
 * into line[]: one pass over the section's line records. */
static void lines_of(const struct lines *L, const char *sec, int *line, size_t n)
{
	memset(line, 0, n * sizeof(*line));
	for (int i = 0; i < L->n; i++) {
		if (strcmp(L->secs[i].name, sec))
			continue;
		for (uint32_t k = 0; k < L->secs[i].n; k++) {
			const uint32_t *r = L->secs[i].recs + k * L->secs[i].rec_words;
			if (r[0] % 8 == 0 && r[0] / 8 < n)
				line[r[0] / 8] = (int)(r[3] >> 10);
		}
	}
}

static const char *helper_name(int id)
{
	switch (id) {
	case BPF_H_MAP_LOOKUP: return "bpf_map_lookup_elem";
	case BPF_H_MAP_UPDATE: return "bpf_map_update_elem";
	case BPF_H_MAP_DELETE: return "bpf_map_delete_elem";
	case BPF_H_TRACE_PRINTK: return "bpf_trace_printk";
	case BPF_H_KTIME_GET_NS: return "bpf_ktime_get_ns";
	case BPF_H_GET_SMP_PROCESSOR_ID: return "bpf_get_smp_processor_id";
	case BPF_H_GET_CURRENT_PID_TGID: return "bpf_get_current_pid_tgid";
	case BPF_H_GET_CURRENT_UID_GID: return "bpf_get_current_uid_gid";
	case BPF_H_GET_CURRENT_COMM: return "bpf_get_current_comm";
	case BPF_H_GET_PRANDOM_U32: return "bpf_get_prandom_u32";
	case BPF_H_GET_NUMA_NODE_ID: return "bpf_get_numa_node_id";
	case BPF_H_GET_CURRENT_CGROUP_ID: return "bpf_get_current_cgroup_id";
	case BPF_H_SEND_SIGNAL: return "bpf_send_signal";
	case BPF_H_PROBE_READ: return "bpf_probe_read";
	case BPF_H_PROBE_READ_USER: return "bpf_probe_read_user";
	case BPF_H_PROBE_READ_USER_STR: return "bpf_probe_read_user_str";
	case BPF_H_PROBE_READ_KERNEL: return "bpf_probe_read_kernel";
	case BPF_H_PROBE_READ_KERNEL_STR: return "bpf_probe_read_kernel_str";
	case BPF_H_JIFFIES64: return "bpf_jiffies64";
	case BPF_H_RINGBUF_OUTPUT: return "bpf_ringbuf_output";
	case BPF_H_SEQ_PRINTF: return "bpf_seq_printf";
	case BPF_H_SEQ_WRITE: return "bpf_seq_write";
	case BPF_H_D_PATH: return "bpf_d_path";
	case BPF_H_GET_ATTACH_COOKIE: return "bpf_get_attach_cookie";
	case GPUX_H_PREFETCH: return "gpux_prefetch";
	case GPUX_H_EVICT: return "gpux_evict";
	case GPUX_H_ADVISE: return "gpux_advise";
	case GPUX_H_ALLOC_BASE: return "gpux_alloc_base";
	case GPUX_H_ALLOC_SIZE: return "gpux_alloc_size";
	case GPUX_H_GPU_FREE: return "gpux_gpu_free";
	case GPUX_H_GPU: return "gpux_gpu";
	default: return NULL;
	}
}

/* The symbol each of n instructions' relocation refers to (NULL: none),
 * into sym[]: one pass over the relocations. */
static void relocs_of(Elf *elf, Elf_Scn *rel, size_t strndx_sym, Elf_Data *syms,
		      const char **sym, size_t n)
{
	memset(sym, 0, n * sizeof(*sym));
	if (!rel || !syms)
		return;
	GElf_Shdr sh;
	gelf_getshdr(rel, &sh);
	Elf_Data *d = elf_getdata(rel, NULL);
	for (size_t i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Rel r;
		GElf_Sym s;
		if (!gelf_getrel(d, (int)i, &r) || r.r_offset % 8 || r.r_offset / 8 >= n)
			continue;
		if (gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s))
			sym[r.r_offset / 8] = elf_strptr(elf, strndx_sym, s.st_name);
	}
}

static void print_insns(FILE *out, Elf *elf, Elf_Scn *scn, const char *sec,
			Elf_Scn *rel, size_t symstr, Elf_Data *syms,
			const struct lines *L, const struct source *src)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	const struct bpf_insn *in = d->d_buf;
	int n = (int)(d->d_size / sizeof(*in)), last = 0;
	int *lines = calloc((size_t)n + 1, sizeof(*lines));
	const char **syms_at = calloc((size_t)n + 1, sizeof(*syms_at));
	if (!lines || !syms_at) {
		free(lines);
		free(syms_at);
		return;
	}
	lines_of(L, sec, lines, (size_t)n);
	relocs_of(elf, rel, symstr, syms, syms_at, (size_t)n);
	for (int k = 0; k < n;) {
		int line = lines[k];
		size_t len;
		const char *text = line && src ? source_line(src, line, &len) : NULL;
		if (line && line != last && text)
			fprintf(out, "; %.*s\n", (int)len, text);
		if (line)
			last = line;
		fprintf(out, "%4d: ", k);
		const char *sym = syms_at[k];
		const struct bpf_insn *i = &in[k];
		if (sym && bpf_is_lddw(i)) {
			fprintf(out, "r%d = map[%s] ll\n", i->dst, sym);
			k += 2;
			continue;
		}
		if (i->code == (BPF_JMP | BPF_CALL)) {
			const char *hn = sym ? sym : i->src ? NULL : helper_name(i->imm);
			if (hn) {
				fprintf(out, "call %s\n", hn);
				k++;
				continue;
			}
		}
		k += bpf_disasm_insn(out, in, k, n, NULL, 0);
		fputc('\n', out);
	}
	free(lines);
	free(syms_at);
}

int host_print_bpf(const struct host_obj *obj, const struct source *src, FILE *out)
{
	if (!obj->size)
		return 0;
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)obj->elf, obj->size);
	size_t shstr;
	if (!elf || elf_getshdrstrndx(elf, &shstr)) {
		if (elf)
			elf_end(elf);
		return -1;
	}
	Elf_Data *btf = NULL, *ext = NULL, *syms = NULL;
	size_t symstr = 0;
	for (Elf_Scn *s = NULL; (s = elf_nextscn(elf, s));) {
		GElf_Shdr sh;
		gelf_getshdr(s, &sh);
		const char *nm = elf_strptr(elf, shstr, sh.sh_name);
		if (sh.sh_type == SHT_SYMTAB) {
			syms = elf_getdata(s, NULL);
			symstr = sh.sh_link;
		} else if (nm && !strcmp(nm, ".BTF")) {
			btf = elf_getdata(s, NULL);
		} else if (nm && !strcmp(nm, ".BTF.ext")) {
			ext = elf_getdata(s, NULL);
		}
	}
	struct lines L;
	read_lines(btf, ext, &L);
	for (Elf_Scn *s = NULL; (s = elf_nextscn(elf, s));) {
		GElf_Shdr sh;
		gelf_getshdr(s, &sh);
		if (!(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size)
			continue;
		const char *sec = elf_strptr(elf, shstr, sh.sh_name);
		size_t idx = elf_ndxscn(s);
		Elf_Scn *rel = NULL;
		for (Elf_Scn *r = NULL; (r = elf_nextscn(elf, r));) {
			GElf_Shdr rh;
			gelf_getshdr(r, &rh);
			if (rh.sh_type == SHT_REL && rh.sh_info == idx)
				rel = r;
		}
		const char *fn = NULL;
		for (int i = 0; i < obj->nprogs; i++)
			if (!strcmp(obj->progs[i].section, sec))
				fn = obj->progs[i].func;
		fprintf(out, "%s: ; section %s\n", fn ? fn : "?", sec);
		print_insns(out, elf, s, sec, rel, symstr, syms, &L, src);
		fputc('\n', out);
	}
	elf_end(elf);
	return 0;
}

int host_emit(const struct host_obj *obj, const char *dir, const char *base,
	      struct diags *diags)
{
	if (!obj->size)
		return 0;
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.bpf.o", dir, base);
	FILE *f = fopen(path, "wb");
	if (!f) {
		diag_error_nospan(diags, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	size_t w = fwrite(obj->elf, 1, obj->size, f);
	if (fclose(f) || w != obj->size) {
		diag_error_nospan(diags, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
