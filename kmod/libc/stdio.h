#ifndef GPUX_KMOD_LIBC_STDIO_H
#define GPUX_KMOD_LIBC_STDIO_H

#include <linux/kernel.h>

/* trace files are gpux --sim's: the module has no files to read */
typedef struct kmod_no_file FILE;

#endif
