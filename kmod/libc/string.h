#ifndef GPUX_KMOD_LIBC_STRING_H
#define GPUX_KMOD_LIBC_STRING_H

#include <linux/string.h>

static inline char *kmod_strtok_r(char *s, const char *delim, char **save)
{
	char *tok;

	if (!s)
		s = *save;
	if (!s)
		return NULL;
	s += strspn(s, delim);
	if (!*s) {
		*save = NULL;
		return NULL;
	}
	tok = s;
	s = strpbrk(tok, delim);
	if (s)
		*s++ = 0;
	*save = s;
	return tok;
}
#define strtok_r kmod_strtok_r

#endif
