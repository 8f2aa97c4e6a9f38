/* Keys and their gpux_key_hash (abi/gpux_dev.h), worked out apart from
 * the C code, for the host test (test_key_hash.c) and the CUDA one
 * (key_hash_cuda.cu). Changing the hash changes these: the device and
 * the runtime's VM must then still agree (both use the header). */
#ifndef GPUX_TEST_KEY_HASH_CASES_H
#define GPUX_TEST_KEY_HASH_CASES_H

#include <stdint.h>

struct key_hash_case {
	uint32_t words;
	uint64_t key[3];
	uint64_t hash;
};

static const struct key_hash_case key_hash_cases[] = {
	{ 0, { 0 }, 0x9e3779b97f4a7c15ull },
	{ 1, { 0 }, 0x9ca066f1a4ab2eeaull },
	{ 1, { 1 }, 0x25b775faeca8f520ull },
	{ 2, { 1, 2 }, 0x1d5bf0ff6c70157aull },
	{ 1, { 0xffffffffffffffffull }, 0x3cd617bbbcc39640ull },
	{ 3, { 0x0123456789abcdefull, 0, 42 }, 0x4eac4a659918cc29ull },
};

#define KEY_HASH_NCASES (sizeof(key_hash_cases) / sizeof(key_hash_cases[0]))

#endif
