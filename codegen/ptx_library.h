/* The device helper library (codegen/ptx/helpers.cu as PTX), built in. */
#ifndef GPUX_PTX_LIBRARY_H
#define GPUX_PTX_LIBRARY_H

#include <stddef.h>

/* The PTX text and its length; NULL when gpux was built without nvcc. */
const char *ptx_helper_library(size_t *len);

#endif
