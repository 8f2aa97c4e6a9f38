/* The JIT's unsigned 64-bit division by a constant (codegen/ptx_alu.c,
 * ptx_udiv_magic): the multiply-and-shift sequence it emits gives n / d
 * for divisors of every size and dividends at the edges and at random,
 * computed here as the PTX computes it. */
#include <inttypes.h>
#include <stdio.h>

#include "ptx_emit.h"

/* mul.hi.u64, from 32-bit halves. */
static uint64_t mulhi(uint64_t a, uint64_t b)
{
	uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
	uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
	return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

static uint64_t rng = 0x9e3779b97f4a7c15;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(void)
{
	uint64_t ds[64] = { 3, 5, 6, 7, 10, 12, 100, 641, 1000, 1000000, 1000000007,
			    UINT64_C(0xFFFFFFFF), UINT64_C(0x100000001), UINT64_C(1) << 63 | 1,
			    UINT64_C(0xFFFFFFFF80000000), UINT64_MAX, UINT64_MAX - 1 };
	int nd = 17;
	while (nd < 64) {
		uint64_t d = next() >> (next() % 62);
		if (d > 2 && (d & (d - 1)))
			ds[nd++] = d;
	}
	long checked = 0, failed = 0;
	for (int i = 0; i < nd; i++) {
		uint64_t d = ds[i], m;
		int l;
		ptx_udiv_magic(d, &m, &l);
		uint64_t ns[8] = { 0, 1, d - 1, d, d + 1, UINT64_MAX, UINT64_MAX - d, d * 3 };
		for (int k = 0; k < 20008; k++) {
			uint64_t n = k < 8 ? ns[k] : k % 2 ? next() : next() >> (next() % 64);
			uint64_t q = mulhi(m, n);
			q = (((n - q) >> 1) + q) >> (l - 1);
			checked++;
			if (q != n / d && failed++ < 10)
				printf("FAIL: %" PRIu64 " / %" PRIu64 ": %" PRIu64 ", want %" PRIu64 "\n",
				       n, d, q, n / d);
		}
	}
	printf("%ld divisions, %ld wrong\n", checked, failed);
	return failed != 0;
}
