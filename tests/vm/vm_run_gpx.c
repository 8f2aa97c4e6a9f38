/* Test driver for the userspace BPF VM: compiles FILE.gpx with
 * host_compile, loads the object into the VM, runs BEGIN, each cuda:launch
 * and cuda:kernel_end section on hand-built contexts, each interval section N times, then
 * END, decoding the ring records after every run; finally dumps every
 * map sorted by key. A first line "// vm: intervals=N budget=N" sets
 * the counts; "patch=I:D" adds D to the offset of instruction I of
 * gpux/begin before loading (to make a compiled program misbehave).
 * "mutate=N" instead loads N copies of the object with a few random
 * bytes changed (ELF robustness: the ASan build watches).
 * Output is canonical text for the .expect files.
 *
 *   vm_run_gpx FILE.gpx */
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_vm.h"
#include "cuda_events.h"
#include "frontend.h"
#include "llvm_host.h"

/* The gpux/cuda/launch context (llvm_host.h): fields in catalog order,
 * strings char[HOST_STR_MAX], dim3 as three u32 in 16 bytes, else u64,
 * then the hidden kernel id. */
struct cuda_launch_ctx {
	char kernel[HOST_STR_MAX];
	uint32_t grid[4];
	uint32_t block[4];
	uint64_t shmem;
	uint64_t stream;
	uint64_t nargs, args[GPUX_CEV_ARGS], kernel_id;
};

static const struct cuda_launch_ctx launches[] = {
	{ "vecadd", { 40, 1, 1, 0 }, { 256, 1, 1, 0 }, 0, 0, 0, { 0 }, 0 },
	{ "gemm_tile", { 8, 8, 2, 0 }, { 16, 16, 1, 0 }, 4096, 7, 0, { 0 }, 1 },
	{ "vecadd", { 80, 1, 1, 0 }, { 128, 1, 1, 0 }, 0, 0, 0, { 0 }, 0 },
};

/* The gpux/cuda/kernel_end context (abi/cuda_events.h): the catalog's
 * fields, then the hidden kernel id. */
struct cuda_kend_ctx {
	char kernel[HOST_STR_MAX];
	uint64_t stream;
	uint32_t grid[4];
	uint32_t block[4];
	uint64_t shmem, start, end, duration, kernel_id;
};

static const struct cuda_kend_ctx kends[] = {
	{ "vecadd", 0, { 40, 1, 1, 0 }, { 256, 1, 1, 0 }, 0, 5000000000, 5000004500, 4500, 0 },
	{ "gemm_tile", 7, { 8, 8, 2, 0 }, { 16, 16, 1, 0 }, 4096, 6000000000, 6000250000, 250000, 1 },
	{ "vecadd", 0, { 80, 1, 1, 0 }, { 128, 1, 1, 0 }, 0, 7000000000, 7000002000, 2000, 0 },
};

static void put_str(const unsigned char *p, size_t max)
{
	putchar('"');
	for (size_t i = 0; i < max && p[i]; i++) {
		if (p[i] == '\n')
			fputs("\\n", stdout);
		else if (p[i] == '"' || p[i] == '\\')
			printf("\\%c", p[i]);
		else if (p[i] < 32 || p[i] > 126)
			printf("\\x%02x", p[i]);
		else
			putchar(p[i]);
	}
	putchar('"');
}

static int64_t rd64(const unsigned char *p)
{
	int64_t v;
	memcpy(&v, p, 8);
	return v;
}

static void put_int(struct type t, const unsigned char *p)
{
	if (t.kind == TY_INT && !t.is_signed)
		printf("%llu", (unsigned long long)rd64(p));
	else
		printf("%lld", (long long)rd64(p));
}

static int on_record(void *arg, const void *data, size_t len)
{
	const struct host_obj *o = arg;
	const unsigned char *d = data;
	struct host_rec_hdr h;
	if (len < sizeof(h)) {
		printf("  record: short (%zu bytes)\n", len);
		return 0;
	}
	memcpy(&h, d, sizeof(h));
	bool map_ok = h.id < (unsigned)o->nmaps, fmt_ok = h.id < (unsigned)o->nfmts;
	switch (h.kind) {
	case HOST_REC_PRINTF:
		if (!fmt_ok || len != o->fmts[h.id].size) {
			printf("  printf: bad id %u or size %zu\n", h.id, len);
			break;
		}
		printf("  printf #%u ", h.id);
		put_str((const unsigned char *)o->fmts[h.id].fmt, 4096);
		for (int i = 0; i < o->fmts[h.id].nargs; i++) {
			const struct host_fmt_arg *a = &o->fmts[h.id].args[i];
			putchar(' ');
			if (a->type.kind == TY_STR)
				put_str(d + a->offset, a->size);
			else
				put_int(a->type, d + a->offset);
		}
		putchar('\n');
		break;
	case HOST_REC_EXIT:
		printf("  exit %lld\n", len >= 16 ? (long long)rd64(d + 8) : -999);
		break;
	case HOST_REC_PRINT:
	case HOST_REC_CLEAR:
	case HOST_REC_ZERO:
		printf("  %s @%s", h.kind == HOST_REC_PRINT ? "print" : h.kind == HOST_REC_CLEAR
		       ? "clear" : "zero", map_ok ? o->maps[h.id].name : "?");
		if (len >= 24)
			printf(" %lld %lld", (long long)rd64(d + 8), (long long)rd64(d + 16));
		putchar('\n');
		break;
	case HOST_REC_TIME:
		printf("  time #%u ", h.id);
		put_str(fmt_ok ? (const unsigned char *)o->fmts[h.id].fmt : (const unsigned char *)"?", 256);
		putchar('\n');
		break;
	default:
		printf("  record: kind %u id %u len %zu\n", h.kind, h.id, len);
	}
	return 0;
}

static int on_record_quiet(void *arg, const void *data, size_t len)
{
	(void)arg;
	(void)data;
	(void)len;
	return 0;
}

static void run(struct vm *vm, const struct host_obj *o, const char *sec, const void *ctx,
		size_t size)
{
	uint64_t r0 = 0;
	int rc = vm_run(vm, sec, ctx, size, &r0);
	if (rc)
		printf("run %s: error %d: %s\n", sec, rc, vm_last_error(vm));
	else
		printf("run %s: ok r0=%llu\n", sec, (unsigned long long)r0);
	vm_ring_drain(vm, on_record, (void *)o);
}

/* ---- map dump ---- */

struct ent {
	unsigned char *kv;
	size_t klen;
};

struct coll {
	struct ent *e;
	size_t n, cap, ks, vs;
};

static int collect(void *arg, const void *key, const void *value)
{
	struct coll *c = arg;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->e = realloc(c->e, c->cap * sizeof(*c->e));
	}
	unsigned char *kv = malloc(c->ks + c->vs);
	memcpy(kv, key, c->ks);
	memcpy(kv + c->ks, value, c->vs);
	c->e[c->n++] = (struct ent){ kv, c->ks };
	return 0;
}

/* bpftrace-like order: key components in turn, integers by value,
 * strings by text, then the bucket. */
static const struct host_map *sort_map;

static int ent_cmp(const void *a, const void *b)
{
	const unsigned char *x = ((const struct ent *)a)->kv, *y = ((const struct ent *)b)->kv;
	const struct host_map *hm = sort_map;
	for (int j = 0; j < hm->nkeys; j++) {
		unsigned off = hm->keys[j].offset;
		int c;
		if (hm->keys[j].type.kind == TY_STR && !(hm->kernel_id_keys & (1u << j))) {
			c = strncmp((const char *)x + off, (const char *)y + off, hm->keys[j].size);
		} else {
			int64_t u = rd64(x + off), v = rd64(y + off);
			c = (u > v) - (u < v);
		}
		if (c)
			return c;
	}
	if (!hm->bucket)
		return 0;
	int64_t u = rd64(x + hm->key_size - 8), v = rd64(y + hm->key_size - 8);
	return (u > v) - (u < v);
}

static void dump_map(struct vm *vm, const struct host_map *hm)
{
	struct vm_map *m = vm_map_by_name(vm, hm->sym);
	if (!m) {
		printf("map @%s: missing in the VM\n", hm->name);
		return;
	}
	struct vm_map_info in;
	vm_map_info(vm, m, &in);
	printf("map @%s (%s) type %u key %u value %u count %u drops %llu\n", hm->name, in.name,
	       in.type, in.key_size, in.value_size, in.count, (unsigned long long)in.drops);
	struct coll c = { .ks = in.key_size, .vs = in.value_size };
	vm_map_foreach(vm, m, collect, &c);
	sort_map = hm;
	qsort(c.e, c.n, sizeof(*c.e), ent_cmp);
	for (size_t i = 0; i < c.n; i++) {
		const unsigned char *k = c.e[i].kv, *v = k + c.ks;
		if (i >= 10 && c.n > 20) { /* a full map: the first few tell enough */
			if (i == 10)
				printf("  ... %zu more\n", c.n - 10);
			free(c.e[i].kv);
			continue;
		}
		printf("  [");
		for (int j = 0; j < hm->nkeys; j++) {
			if (j)
				printf(", ");
			if (hm->kernel_id_keys & (1u << j)) /* the controller prints names */
				printf("kernel#%lld", (long long)rd64(k + hm->keys[j].offset));
			else if (hm->keys[j].type.kind == TY_STR)
				put_str(k + hm->keys[j].offset, hm->keys[j].size);
			else
				put_int(hm->keys[j].type, k + hm->keys[j].offset);
		}
		printf("]");
		if (hm->bucket)
			printf(" bucket %lld", (long long)rd64(k + hm->key_size - 8));
		printf(" =");
		if (hm->value_str) {
			putchar(' ');
			put_str(v, hm->value_str);
		} else {
			for (size_t w = 0; w + 8 <= c.vs; w += 8)
				printf(" %lld", (long long)rd64(v + w));
		}
		putchar('\n');
		free(c.e[i].kv);
	}
	free(c.e);
}

/* ---- driver ---- */

static void mutate(const struct host_obj *o, int n)
{
	int counts[3] = { 0 };
	srand(42);
	unsigned char *copy = malloc(o->size);
	for (int t = 0; t < n; t++) {
		memcpy(copy, o->elf, o->size);
		for (int k = 1 + rand() % 4; k; k--)
			copy[(size_t)rand() % o->size] = (unsigned char)rand();
		char err[256];
		struct vm *vm;
		if (vm_load(copy, o->size, &vm, err, sizeof(err))) {
			counts[0]++;
			continue;
		}
		vm_set_budget(vm, 10000);
		uint64_t r0;
		counts[vm_run(vm, "gpux/begin", NULL, 0, &r0) ? 1 : 2]++;
		vm_ring_drain(vm, on_record_quiet, NULL);
		vm_free(vm);
	}
	free(copy);
	/* the counts move with every codegen change: only say that each
	 * outcome happened (and nothing crashed) */
	printf("mutate: %d objects; refused %s, stopped %s, ran %s\n", n, counts[0] ? "some" : "none",
	       counts[1] ? "some" : "none", counts[2] ? "some" : "none");
}

static void patch_off(struct host_obj *o, int insn, int delta)
{
	elf_version(EV_CURRENT);
	Elf *e = elf_memory((char *)o->elf, o->size);
	size_t shstr;
	if (!e || elf_getshdrstrndx(e, &shstr)) {
		if (e)
			elf_end(e);
		return;
	}
	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
		GElf_Shdr sh;
		gelf_getshdr(s, &sh);
		const char *nm = elf_strptr(e, shstr, sh.sh_name);
		if (nm && !strcmp(nm, "gpux/begin") && (size_t)(insn + 1) * 8 <= sh.sh_size) {
			int16_t off;
			unsigned char *p = o->elf + sh.sh_offset + (size_t)insn * 8 + 2;
			memcpy(&off, p, 2);
			off = (int16_t)(off + delta);
			memcpy(p, &off, 2);
			printf("patched gpux/begin insn %d: off %+d\n", insn, delta);
		}
	}
	elf_end(e);
}

static bool has_section(struct vm *vm, const char *sec)
{
	for (int i = 0; i < vm_prog_count(vm); i++)
		if (!strcmp(vm_prog_section(vm, i), sec))
			return true;
	return false;
}

static void run_all(struct vm *vm, const struct host_obj *o, int intervals, int hooks)
{
	if (has_section(vm, "gpux/begin"))
		run(vm, o, "gpux/begin", NULL, 0);
	const char *last = "";
	for (int i = 0; i < vm_prog_count(vm); i++) {
		const char *sec = vm_prog_section(vm, i);
		if (!strcmp(sec, last))
			continue; /* several probes of one section run together */
		last = sec;
		if (!strncmp(sec, "gpux/cuda/launch", 16)) {
			/* the runtime's job: a filtered section runs for matching kernels */
			const char *filter = sec[16] == ':' ? sec + 17 : "*";
			for (size_t k = 0; k < sizeof(launches) / sizeof(launches[0]); k++)
				if (!fnmatch(filter, launches[k].kernel, 0))
					run(vm, o, sec, &launches[k], sizeof(launches[k]));
		} else if (!strncmp(sec, "gpux/cuda/kernel_end", 20)) {
			const char *filter = sec[20] == ':' ? sec + 21 : "*";
			for (size_t k = 0; k < sizeof(kends) / sizeof(kends[0]); k++)
				if (!fnmatch(filter, kends[k].kernel, 0))
					run(vm, o, sec, &kends[k], sizeof(kends[k]));
		} else if (!strncmp(sec, "gpux/interval/", 14)) {
			for (int k = 0; k < intervals; k++)
				run(vm, o, sec, NULL, 0);
		} else if (!strncmp(sec, "kprobe/", 7)) {
			/* a capture's registers: %di (arg 0) points at a VA
			 * block inside the context (start @8 = 0x7f0000200000,
			 * managed_range @0 = NULL) */
			uint64_t regs[24] = { 0 };
			regs[112 / 8] = (uint64_t)(uintptr_t)&regs[20];
			regs[21] = 0x7f0000200000ull;
			for (int k = 0; k < hooks; k++)
				run(vm, o, sec, regs, sizeof(regs));
		} else if (!strncmp(sec, "struct_ops/", 11)) {
			static const uint64_t args[4] = { 0, 0x1000, 0x2000, 0 };
			for (int k = 0; k < hooks; k++)
				run(vm, o, sec, args, sizeof(args));
		}
	}
	if (has_section(vm, "gpux/end"))
		run(vm, o, "gpux/end", NULL, 0);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: vm_run_gpx FILE.gpx\n");
		return 2;
	}
	size_t len;
	char *text = source_read_file(argv[1], &len);
	if (!text) {
		perror(argv[1]);
		return 2;
	}
	int intervals = 1, hooks = 0, patch_insn = -1, patch_delta = 0, mutations = 0;
	unsigned long long budget = 0;
	const char *opt = strstr(text, "// vm:");
	if (opt == text) {
		const char *p = strstr(opt, "intervals=");
		if (p)
			intervals = atoi(p + 10);
		if ((p = strstr(opt, "hooks=")))
			hooks = atoi(p + 6);
		if ((p = strstr(opt, "budget=")))
			budget = strtoull(p + 7, NULL, 10);
		if ((p = strstr(opt, "mutate=")))
			mutations = atoi(p + 7);
		if ((p = strstr(opt, "patch=")))
			sscanf(p + 6, "%d:%d", &patch_insn, &patch_delta);
	}
	struct program *prog = program_new(argv[1], text, len);
	free(text);
	struct diags d;
	diags_init(&d, &prog->arena);
	struct host_opts opts = { .optimize = true };
	struct host_obj obj;
	int rc = 1;
	if (frontend_check(prog, &d, FE_STOP_SEMA)) {
		diags_print(&d, &prog->src, stdout);
		program_free(prog);
		return 1;
	}
	if (host_compile(prog, &opts, &obj, &d)) {
		diags_print(&d, &prog->src, stdout);
	} else {
		char err[256];
		struct vm *vm;
		if (patch_insn >= 0)
			patch_off(&obj, patch_insn, patch_delta);
		if (mutations) {
			mutate(&obj, mutations);
			rc = 0;
		} else if (vm_load_flags(obj.elf, obj.size, VM_LOAD_DRIVER, &vm, err, sizeof(err))) {
			printf("load: %s\n", err);
		} else {
			if (budget)
				vm_set_budget(vm, budget);
			run_all(vm, &obj, intervals, hooks);
			for (int i = 0; i < obj.nmaps; i++)
				dump_map(vm, &obj.maps[i]);
			vm_free(vm);
			rc = 0;
		}
	}
	host_obj_free(&obj);
	program_free(prog);
	return rc;
}
