#ifndef GPUX_KMOD_LIBC_STDBOOL_H
#define GPUX_KMOD_LIBC_STDBOOL_H
#include <linux/types.h>
#endif
