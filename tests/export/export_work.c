/* A traced program with exact calls for tests/export's uprobe case:
 * work(i % 3) for i below argv[1] (10 by default). */
#include <stdio.h>
#include <stdlib.h>

volatile long sink;

__attribute__((noinline)) void work(long k)
{
	sink += k;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	for (long i = 0; i < n; i++)
		work(i % 3);
	printf("%ld calls\n", n);
	return 0;
}
