/* The kernel side's registry of attachers (attach/kattach_unit.h), from
 * units.def: ATTACH(name) is providers/name_attach.c, whose
 * name_attachers lists one attacher per attach kind it serves. */
#include <stddef.h>

#include "kattach_unit.h"

#define UNIT(name)
#define ATTACH(name) extern const struct kattach_unit *const name##_attachers[];
#include "units.def"
#undef ATTACH

#define ATTACH(name) name##_attachers,
static const struct kattach_unit *const *const units[] = {
#include "units.def"
};
#undef ATTACH
#undef UNIT

const struct kattach_unit *kattach_unit_of(enum attach_kind kind)
{
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		for (const struct kattach_unit *const *a = units[i]; *a; a++)
			if ((*a)->kind == kind)
				return *a;
	return NULL;
}
