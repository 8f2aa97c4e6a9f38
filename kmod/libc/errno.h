#ifndef GPUX_KMOD_LIBC_ERRNO_H
#define GPUX_KMOD_LIBC_ERRNO_H

#include <linux/compiler.h>
#include <linux/errno.h>

/* per file: set and read within one parse, runs are one at a time */
static int kmod_errno __maybe_unused;
#define errno kmod_errno

#endif
