/* The compiled program's memory (host_obj.h). */
#include "host_obj.h"

#include <stdlib.h>
#include <string.h>

void host_obj_free(struct host_obj *obj)
{
	free(obj->elf);
	free(obj->ir);
	arena_free(&obj->arena);
	memset(obj, 0, sizeof(*obj));
}
