#ifndef GPUX_KMOD_LIBC_STDINT_H
#define GPUX_KMOD_LIBC_STDINT_H

#include <linux/limits.h>
#include <linux/types.h>

#define UINT8_MAX U8_MAX
#define UINT16_MAX U16_MAX
#define UINT32_MAX U32_MAX
#define UINT64_MAX U64_MAX
#define INT32_MAX S32_MAX
#define INT64_MAX S64_MAX
#ifndef SIZE_MAX
#define SIZE_MAX (~(size_t)0)
#endif

#endif
