/* Test helpers: sections of ELF files on disk, through libelf. */
#ifndef GPUX_TEST_ELF_UTIL_H
#define GPUX_TEST_ELF_UTIL_H

#include <stddef.h>
#include <stdint.h>

struct sec {
	uint8_t *data;                /* malloc'd copy, exactly len bytes */
	size_t len;
	uint64_t addr;                /* sh_addr (0 in objects) */
	char name[64];
};

/* All sections of PATH; returns the count or -1. Free with secs_free. */
int secs_load(const char *path, struct sec **out);
void secs_free(struct sec *s, int n);
struct sec *secs_find(struct sec *s, int n, const char *name);

/* For an object file: the section a relocation at OFFSET in section
 * RELA_NAME points at, and its addend. 0 on success. */
int rela_target(const char *path, const char *rela_name, uint64_t offset,
		char *sec_name, size_t size, int64_t *addend);

#endif
