/* A running process to load a library into (inject_test.sh): for SECONDS
 * it sleeps 2 ms at a time and counts, with AVX registers in use across
 * each sleep (their values must survive the injection), then prints its
 * count and whether they did. "traced": it asks its parent to trace it
 * first (PTRACE_TRACEME), so no one else can. Prints "target: ready"
 * once it runs.
 *   inject_target SECONDS [traced] */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <time.h>

__attribute__((target("avx"))) static int loop(double seconds)
{
	volatile double sink = 0;
	__m256d v = _mm256_set_pd(1.5, 2.5, 3.5, 4.5);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long n = 0;
	do {
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
		v = _mm256_add_pd(v, _mm256_set1_pd(1.0));
		n++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < seconds);
	double out[4];
	_mm256_storeu_pd(out, v);
	sink = out[0];
	(void)sink;
	int ok = out[0] == 4.5 + (double)n && out[3] == 1.5 + (double)n;
	printf("target: %s after %ld sleeps\n", ok ? "registers intact" : "REGISTERS CHANGED", n);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (argc > 2 && !strcmp(argv[2], "traced") && ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		return 2;
	printf("target: ready\n");
	fflush(stdout);
	return loop(atof(argv[1]));
}
