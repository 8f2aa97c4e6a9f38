/* Stacks and symbols in bpftrace 0.17's words (out_syms.h). */
#include "out_syms.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"

struct ksym {
	uint64_t addr;
	char *name;
};

struct file_tab {
	char *path;
	struct host_symtab tab;
	bool ok;
};

static struct {
	struct out_syms_src src;
	struct ksym *k;
	size_t nk;
	bool k_loaded;
	struct file_tab *files;
	size_t nfiles;
} S;

void out_syms_set(const struct out_syms_src *src)
{
	S.src = src ? *src : (struct out_syms_src){ 0 };
}

void out_syms_end(void)
{
	for (size_t i = 0; i < S.nk; i++)
		free(S.k[i].name);
	free(S.k);
	for (size_t i = 0; i < S.nfiles; i++) {
		if (S.files[i].ok && S.src.symtab_free)
			S.src.symtab_free(&S.files[i].tab);
		free(S.files[i].path);
	}
	free(S.files);
	memset(&S, 0, sizeof(S));
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

static void load_kallsyms(void)
{
	S.k_loaded = true;
	FILE *f = fopen("/proc/kallsyms", "re");
	if (!f)
		return;
	char line[512], name[256];
	uint64_t a;
	char type;
	size_t cap = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &a, &type, name) != 3)
			continue;
		if (S.nk == cap) {
			size_t nc = cap ? 2 * cap : 65536;
			struct ksym *v = realloc(S.k, nc * sizeof(*v));
			if (!v)
				break;
			S.k = v;
			cap = nc;
		}
		char *copy = strdup(name);
		if (!copy)
			break;
		S.k[S.nk++] = (struct ksym){ a, copy };
	}
	fclose(f);
	qsort(S.k, S.nk, sizeof(*S.k), ksym_cmp);
}

/* The kernel symbol at or below addr (as bcc finds it), or NULL. */
static const struct ksym *ksym_find(uint64_t addr)
{
	if (!S.k_loaded)
		load_kallsyms();
	size_t lo = 0, hi = S.nk;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (S.k[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &S.k[lo - 1] : NULL;
}

static void put_ptr(FILE *out, uint64_t a)
{
	if (a)
		fprintf(out, "0x%" PRIx64, a);
	else
		fputc('0', out);
}

void out_ksym(FILE *out, uint64_t addr)
{
	const struct ksym *k = ksym_find(addr);
	if (k)
		fputs(k->name, out);
	else
		put_ptr(out, addr);
}

int out_parse_maps_line(const char *line, struct out_mapping *m)
{
	int n = 0;
	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &m->start,
		   &m->end, &m->offset, &n) != 3 || !n)
		return -1;
	const char *p = line + n;
	size_t len = strcspn(p, "\n");
	if (len >= sizeof(m->path))
		return -1;
	memcpy(m->path, p, len);
	m->path[len] = '\0';
	return 0;
}

int out_symtab_find(const struct host_symtab *t, uint64_t a)
{
	int lo = 0, hi = t->n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (t->sym[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the nearest symbols below: one whose extent holds a */
	for (int i = lo - 1; i >= 0 && i >= lo - 8; i--) {
		const struct host_symbol *s = &t->sym[i];
		if (a == s->addr || a - s->addr < s->size)
			return i;
	}
	return -1;
}

static const struct host_symtab *file_tab(const char *path)
{
	for (size_t i = 0; i < S.nfiles; i++)
		if (!strcmp(S.files[i].path, path))
			return S.files[i].ok ? &S.files[i].tab : NULL;
	if (!S.src.symtab_load)
		return NULL;
	struct file_tab *v = realloc(S.files, (S.nfiles + 1) * sizeof(*v));
	if (!v)
		return NULL;
	S.files = v;
	struct file_tab *f = &S.files[S.nfiles];
	if (!(f->path = strdup(path)))
		return NULL;
	S.nfiles++;
	f->ok = S.src.symtab_load(path, &f->tab) == 0;
	return f->ok ? &f->tab : NULL;
}

struct usym {
	const char *name;
	uint64_t off;
	char module[4096];
};

/* addr in process pid: the mapping's file, its symbol and the offset. */
static bool usym_find(uint64_t addr, uint32_t pid, struct usym *u)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%u/maps", pid);
	FILE *f = fopen(p, "re");
	if (!f)
		return false;
	char line[4352];
	struct out_mapping m;
	bool hit = false;
	while (!hit && fgets(line, sizeof(line), f))
		hit = out_parse_maps_line(line, &m) == 0 && addr >= m.start && addr < m.end &&
		      m.path[0] == '/';
	fclose(f);
	if (!hit)
		return false;
	const struct host_symtab *t = file_tab(m.path);
	if (!t)
		return false;
	uint64_t foff = addr - m.start + m.offset, a = 0;
	bool in = false;
	for (int i = 0; i < t->nload && !in; i++)
		if (foff >= t->load[i].offset && foff - t->load[i].offset < t->load[i].filesz) {
			a = foff - t->load[i].offset + t->load[i].vaddr;
			in = true;
		}
	int s = in ? out_symtab_find(t, a) : -1;
	if (s < 0)
		return false;
	u->name = t->sym[s].name;
	u->off = a - t->sym[s].addr;
	snprintf(u->module, sizeof(u->module), "%s", m.path);
	return true;
}

void out_usym(FILE *out, const unsigned char *p)
{
	uint64_t addr = (uint64_t)rd64(p), pid = (uint64_t)rd64(p + 8);
	struct usym u;
	if (usym_find(addr, (uint32_t)pid, &u))
		fputs(u.name, out);
	else
		put_ptr(out, addr);
}

/* One frame: name+offset (module in perf mode), else the address. */
static void put_frame(FILE *out, bool user, bool perf, uint64_t a, uint32_t pid)
{
	if (user) {
		struct usym u;
		if (usym_find(a, pid, &u)) {
			fprintf(out, "%s+%" PRIu64, u.name, u.off);
			if (perf)
				fprintf(out, " (%s)", u.module);
		} else {
			put_ptr(out, a);
			if (perf)
				fputs(" ([unknown])", out);
		}
		return;
	}
	const struct ksym *k = ksym_find(a);
	if (k)
		fprintf(out, "%s+%" PRIu64, k->name, a - k->addr);
	else
		put_ptr(out, a);
}

void out_stack(FILE *out, struct type t, uint64_t v, int indent)
{
	unsigned limit = t.limit ? t.limit : STACK_DEFAULT_LIMIT;
	uint64_t *ips = calloc(limit, sizeof(*ips));
	if (!ips || !S.src.stack || S.src.stack(S.src.arg, limit, (uint32_t)v, ips)) {
		free(ips);
		return;
	}
	bool perf = t.stack_mode == STACK_PERF;
	fputc('\n', out);
	for (unsigned i = 0; i < limit && ips[i]; i++) {
		if (perf)
			fprintf(out, "\t%" PRIx64 " ", ips[i]);
		else
			fprintf(out, "%*s", indent, "");
		put_frame(out, t.user, perf, ips[i], (uint32_t)(v >> 32));
		fputc('\n', out);
	}
	free(ips);
}

char *out_sym_text(struct type t, const unsigned char *p, int indent)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	if (!m)
		return NULL;
	if (t.kind == TY_STACK)
		out_stack(m, t, (uint64_t)rd64(p), indent);
	else if (t.kind == TY_KSYM)
		out_ksym(m, (uint64_t)rd64(p));
	else if (t.kind == TY_USYM)
		out_usym(m, p);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}
