/* The cost of one cuda: event in the runtime's userspace BPF VM, as the
 * traced process pays it (rt_host.c): vm_run_prog of a section's
 * programs with a cuda:launch context. A benchmark, not a test.
 *   handler_bench HOST.bpf.o [SECTION] [N]
 * HOST.bpf.o: gpux --emit DIR -e 'cuda:launch { ... }' writes DIR/host.bpf.o.
 * Prints ns per event (median of 9 rounds of N events). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf_vm.h"
#include "cuda_events.h"

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: handler_bench HOST.bpf.o [SECTION] [N]\n");
		return 2;
	}
	const char *sec = argc > 2 ? argv[2] : "gpux/cuda/launch";
	long n = argc > 3 ? atol(argv[3]) : 1000000;
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	static unsigned char elf[1 << 22];
	size_t len = fread(elf, 1, sizeof(elf), f);
	fclose(f);
	struct vm *vm;
	char err[256];
	if (vm_load(elf, len, &vm, err, sizeof(err))) {
		fprintf(stderr, "handler_bench: %s\n", err);
		return 1;
	}
	int progs[16], np = 0;
	for (int i = 0; i < vm_prog_count(vm) && np < 16; i++)
		if (!strcmp(vm_prog_section(vm, i), sec))
			progs[np++] = i;
	if (!np) {
		fprintf(stderr, "handler_bench: no program in %s\n", sec);
		return 1;
	}
	struct gpux_cev_launch c = { .grid = { 40, 1, 1 }, .block = { 256, 1, 1 }, .kernel_id = 3 };
	static const char names[2][GPUX_CEV_STR] = {
		"vecAdd(float const*, float const*, float*, int)",
		"sgemm_tiled(float const*, float const*, float*, int)" };
	double r[9];
	for (int round = 0; round < 9; round++) {
		double t0 = now_ns();
		for (long k = 0; k < n; k++) {
			/* as the launch hook builds it from its name cache:
			 * two kernels alternate */
			memcpy(c.kernel, names[k & 1], sizeof(c.kernel));
			c.kernel_id = (uint64_t)(k & 1);
			for (int p = 0; p < np; p++)
				if (vm_run_prog(vm, progs[p], &c, sizeof(c), NULL)) {
					fprintf(stderr, "handler_bench: %s\n", vm_last_error(vm));
					return 1;
				}
		}
		r[round] = (now_ns() - t0) / (double)n;
	}
	qsort(r, 9, sizeof(r[0]), cmp);
	printf("handler %s programs=%d insns/run=%llu median_ns=%.1f min_ns=%.1f max_ns=%.1f\n",
	       sec, np, (unsigned long long)vm_last_insns(vm), r[4], r[0], r[8]);
	vm_free(vm);
	return 0;
}
