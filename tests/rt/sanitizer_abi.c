/* The values gpux passes to and reads from NVIDIA's Compute Sanitizer
 * (runtime/rt_sass_priv.h, runtime/sass_ptx.h), against its headers:
 * built only where sanitizer_patching.h is found (GPUX_SANITIZER_INCLUDE,
 * else the toolkit's compute-sanitizer/include). Compiling is the test. */
#include <sanitizer.h>
#include <stdio.h>

#include "rt_sass_priv.h"

_Static_assert((int)SANITIZER_SUCCESS == (int)(SAN_OK), "SanitizerResult success");
_Static_assert((int)SANITIZER_ERROR_INVALID_PARAMETER == (int)(SAN_INVALID_PARAMETER), "invalid parameter");
_Static_assert((int)SANITIZER_INSTRUCTION_BLOCK_ENTER == (int)(SAN_BLOCK_ENTER), "block enter");
_Static_assert((int)SANITIZER_INSTRUCTION_BLOCK_EXIT == (int)(SAN_BLOCK_EXIT), "block exit");
_Static_assert((int)SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS == (int)(SAN_GLOBAL_ACCESS), "global access");
_Static_assert((int)SANITIZER_MEMORY_DEVICE_FLAG_READ == (int)(GPUX_SAN_READ), "read flag");
_Static_assert((int)SANITIZER_MEMORY_DEVICE_FLAG_WRITE == (int)(GPUX_SAN_WRITE), "write flag");
_Static_assert((int)SANITIZER_MEMORY_DEVICE_FLAG_PREFETCH == (int)(GPUX_SAN_PREFETCH), "prefetch flag");
_Static_assert(SANITIZER_PATCH_SUCCESS == 0, "a callback's success, which gpux returns");

int main(void)
{
	puts("the Sanitizer's values match");
	return 0;
}
