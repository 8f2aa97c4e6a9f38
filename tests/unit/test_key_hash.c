/* The device map key hash as the host computes it (abi/gpux_dev.h, the
 * one definition the helper library and the VM share) gives the known
 * values, for aligned and unaligned keys. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gpux_dev.h"
#include "key_hash_cases.h"

static int passed, failed;

static void check(uint64_t got, const struct key_hash_case *c, const char *how)
{
	if (got == c->hash) {
		passed++;
		return;
	}
	failed++;
	printf("FAIL: %u words (%s): 0x%016" PRIx64 ", want 0x%016" PRIx64 "\n", c->words, how,
	       got, c->hash);
}

int main(void)
{
	for (size_t i = 0; i < KEY_HASH_NCASES; i++) {
		const struct key_hash_case *c = &key_hash_cases[i];
		check(gpux_key_hash(c->key, c->words), c, "aligned");
		/* a VM key may sit anywhere in the program's stack */
		unsigned char buf[1 + sizeof(c->key)];
		memcpy(buf + 1, c->key, sizeof(c->key));
		check(gpux_key_hash(buf + 1, c->words), c, "unaligned");
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
