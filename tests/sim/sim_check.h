/* What the simulator's C tests share: an exact check that reports and
 * goes on (failed is the test's verdict), and the address space they
 * allocate in. */
#ifndef GPUX_TESTS_SIM_CHECK_H
#define GPUX_TESTS_SIM_CHECK_H

#include <stdio.h>

static int failed;

#define EQ(what, got, want)                                                     \
	do {                                                                    \
		unsigned long long g_ = (got), w_ = (want);                     \
		if (g_ != w_) {                                                 \
			fprintf(stderr, "FAIL %s:%d %s: %llu, want %llu\n", __func__, \
				__LINE__, what, g_, w_);                        \
			failed = 1;                                             \
		}                                                               \
	} while (0)

#define MB (1ull << 20)
#define BASE 0x7f0000000000ull

#endif
