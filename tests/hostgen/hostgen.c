/* Test driver for the host lowering: compiles a .gpx file's host and
 * driver probes, opens the object with libbpf and lists what libbpf
 * found; with --load, has the kernel's verifier load the kernel
 * programs (userspace-VM and struct_ops parts are switched off, as the
 * runtime would). Exit 77 when bpf() is refused.
 *
 * With --run, also attaches them, calls malloc() a few times and checks
 * that the map keyed by comm counted this process ("hostgen").
 *
 * --compile-only stops after host_compile (the compile benchmark).
 * With $GPUX_BTF_DIR set, driver probes are bound to the BTF there.
 *
 *   hostgen [--load|--run|--compile-only] [--ir] [--bpf] [--emit DIR] FILE.gpx */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "frontend.h"
#include "llvm_host.h"

static int verbose_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static const struct host_prog *prog_of(const struct host_obj *o, const char *name)
{
	for (int i = 0; i < o->nprogs; i++)
		if (!strcmp(o->progs[i].func, name))
			return &o->progs[i];
	return NULL;
}

/* Attach the kernel programs, make this process hit them, and look for
 * our own comm in the first map keyed by a 16-byte string. */
static int run_checks(struct bpf_object *bo)
{
	struct bpf_link *links[16];
	int nl = 0, rc = 1;
	struct bpf_program *p;
	bpf_object__for_each_program(p, bo) {
		if (!bpf_program__autoload(p) || nl == 16)
			continue;
		links[nl] = bpf_program__attach(p);
		if (!links[nl]) {
			printf("attach %s failed: %s\n", bpf_program__name(p), strerror(errno));
			goto out;
		}
		nl++;
	}
	/* libc's own malloc: a sanitizer's interposed one would miss the probe */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *(*lmalloc)(size_t) = libc ? (void *(*)(size_t))dlsym(libc, "malloc") : malloc;
	void (*lfree)(void *) = libc ? (void (*)(void *))dlsym(libc, "free") : free;
	for (int i = 0; lmalloc && lfree && i < 100; i++) {
		void *volatile q = lmalloc(64 + (size_t)i);
		lfree(q);
	}
	if (libc)
		dlclose(libc);
	usleep(20000);
	struct bpf_map *m;
	bpf_object__for_each_map(m, bo) {
		if (bpf_map__key_size(m) != 16 || bpf_map__type(m) != BPF_MAP_TYPE_PERCPU_HASH)
			continue;
		char key[16] = "hostgen";
		int ncpu = libbpf_num_possible_cpus();
		uint64_t vals[1024] = { 0 }, sum = 0;
		if (ncpu <= 0 || ncpu > 1024 ||
		    bpf_map__lookup_elem(m, key, 16, vals, sizeof(uint64_t) * (size_t)ncpu, 0)) {
			printf("run: no element [hostgen] in %s\n", bpf_map__name(m));
			goto out;
		}
		for (int c = 0; c < ncpu; c++)
			sum += vals[c];
		printf("run %s: %s[hostgen] counted\n", sum >= 1 ? "ok" : "FAILED",
		       bpf_map__name(m));
		rc = sum >= 1 ? 0 : 1;
		break;
	}
out:
	while (nl--)
		bpf_link__destroy(links[nl]);
	return rc;
}

static int open_and_list(const struct host_obj *o, bool load, bool run)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "gpux");
	struct bpf_object *bo = bpf_object__open_mem(o->elf, o->size, &oo);
	if (!bo) {
		printf("libbpf open failed: %s\n", strerror(errno));
		return 1;
	}
	struct bpf_program *p;
	bpf_object__for_each_program(p, bo) {
		const struct host_prog *hp = prog_of(o, bpf_program__name(p));
		printf("prog %s %s%s\n", bpf_program__section_name(p),
		       hp ? (hp->run == HOST_RUN_KERNEL ? "kernel"
			     : hp->run == HOST_RUN_VM ? "vm" : "driver") : "?",
		       hp ? "" : " (unknown to gpux)");
		if (hp && hp->run != HOST_RUN_KERNEL)
			bpf_program__set_autoload(p, false);
	}
	struct bpf_map *m;
	bpf_object__for_each_map(m, bo) {
		printf("map %s type %d key %u value %u entries %u\n", bpf_map__name(m),
		       bpf_map__type(m), bpf_map__key_size(m), bpf_map__value_size(m),
		       bpf_map__max_entries(m));
		if (bpf_map__type(m) == BPF_MAP_TYPE_STRUCT_OPS)
			bpf_map__set_autocreate(m, false);
	}
	int rc = 0;
	if (load) {
		int err = bpf_object__load(bo);
		if (err == -EPERM) {
			fprintf(stderr, "SKIP: bpf() refused (EPERM); kernel load not tested\n");
			rc = 77;
		} else if (err) {
			printf("load failed: %s\n", strerror(-err));
			rc = 1;
		} else {
			printf("load ok\n");
			if (run)
				rc = run_checks(bo);
		}
	}
	bpf_object__close(bo);
	return rc;
}

int main(int argc, char **argv)
{
	bool load = false, run = false, ir = false, bpf = false, only = false;
	const char *file = NULL, *emit = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--load"))
			load = true;
		else if (!strcmp(argv[i], "--compile-only"))
			only = true;
		else if (!strcmp(argv[i], "--run"))
			load = run = true;
		else if (!strcmp(argv[i], "--ir"))
			ir = true;
		else if (!strcmp(argv[i], "--bpf"))
			bpf = true;
		else if (!strcmp(argv[i], "--emit") && i + 1 < argc)
			emit = argv[++i];
		else
			file = argv[i];
	}
	if (!file) {
		fprintf(stderr, "usage: hostgen [--load|--run|--compile-only] [--ir] [--bpf] [--emit DIR] FILE.gpx\n");
		return 2;
	}
	libbpf_set_print(verbose_print);
	size_t len;
	char *text = source_read_file(file, &len);
	if (!text) {
		perror(file);
		return 2;
	}
	struct program *prog = program_new(file, text, len);
	free(text);
	struct diags d;
	diags_init(&d, &prog->arena);
	int rc = 0;
	struct host_opts opts = { .optimize = true, .keep_ir = ir };
	struct host_obj obj;
	if (frontend_check(prog, &d, FE_STOP_SEMA)) {
		diags_print(&d, &prog->src, stdout);
		program_free(prog);
		return 1;
	}
	/* $GPUX_BTF_DIR: driver probes bound to the driver BTF there */
	struct host_binding bind;
	memset(&bind, 0, sizeof(bind));
	const struct host_sops_abi *abis[HOST_DRV_N];
	if (getenv("GPUX_BTF_DIR") && host_bind_driver(&bind) == 0) {
		for (int k = 0; k < HOST_DRV_N; k++)
			if (bind.abi[k])
				abis[opts.nabis++] = bind.abi[k];
		opts.abis = abis;
	}
	if (host_compile(prog, &opts, &obj, &d)) {
		diags_print(&d, &prog->src, stdout);
		rc = 1;
	} else if (only) {
		rc = obj.size ? 0 : 1; /* bench: front end + host_compile, no libbpf */
	} else if (ir) {
		host_print_ir(&obj, stdout);
	} else if (bpf) {
		rc = host_print_bpf(&obj, &prog->src, stdout) ? 1 : 0;
	} else if (emit) {
		rc = host_emit(&obj, emit, "host", &d) ? 1 : 0;
		diags_print(&d, &prog->src, stderr);
	} else {
		rc = obj.size ? open_and_list(&obj, load, run) : 0;
	}
	host_obj_free(&obj);
	host_binding_free(&bind);
	program_free(prog);
	return rc;
}
