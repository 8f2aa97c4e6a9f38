/* Target of the live probe tests: calls gpux_tgt_add N times (default
 * 5; argv[1]) and getppid() N times; a second argument sleeps that
 * many seconds first (for -p), a third that many seconds after. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline, used)) long gpux_tgt_add(long a, long b)
{
	__asm__ volatile("" ::: "memory");
	return a + b;
}

/* More arguments than registers: sarg0 and sarg1 are g and h (x86-64) */
__attribute__((noinline, used)) long gpux_stack_args(long a, long b, long c, long d, long e,
						     long f, long g, long h)
{
	__asm__ volatile("" ::: "memory");
	return a + b + c + d + e + f + g * h;
}

/* Bytes and their length, for buf() */
__attribute__((noinline, used)) long gpux_bytes(const char *p, long n)
{
	__asm__ volatile("" ::: "memory");
	return p[0] + n;
}

/* A call chain of known names, for ustack: main -> gpux_stack_top ->
 * gpux_stack_mid -> gpux_stack_leaf; work after each call keeps it a
 * call (no tail call) */
__attribute__((noinline, used)) long gpux_stack_leaf(long n)
{
	__asm__ volatile("" ::: "memory");
	return n * 3;
}

__attribute__((noinline, used)) long gpux_stack_mid(long n)
{
	long r = gpux_stack_leaf(n + 1);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

__attribute__((noinline, used)) long gpux_stack_top(long n)
{
	long r = gpux_stack_mid(n + 1);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5;
	if (argc > 2)
		sleep((unsigned)atoi(argv[2]));
	long s = 0;
	for (int i = 0; i < n; i++)
		s = gpux_tgt_add(s, i + 1);
	for (int i = 0; i < n; i++)
		(void)getppid();
	if (gpux_stack_args(1, 2, 3, 4, 5, 6, 7, 8) != 77)
		return 1;
	/* on the stack: a page the process has touched, which a probe can read */
	char bytes[] = "gpux\tbuf\001\377";
	if (gpux_bytes(bytes, (long)sizeof(bytes) - 1) != 'g' + 10)
		return 1;
	if (gpux_stack_top(1) != 11)
		return 1;
	printf("sum %ld\n", s);
	fflush(stdout);
	if (argc > 3)
		sleep((unsigned)atoi(argv[3]));
	return 0;
}
