#ifndef GPUX_KMOD_LIBC_STDDEF_H
#define GPUX_KMOD_LIBC_STDDEF_H
#include <linux/stddef.h>
#include <linux/types.h>
#endif
