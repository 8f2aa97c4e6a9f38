/* The front end's registry of units (lang/provider.h), from units.def. */
#include "provider.h"

#define ATTACH(name)
#define UNIT(name) extern const struct provider_unit name##_unit;
#include "units.def"
#undef UNIT

#define UNIT(name) &name##_unit,
static const struct provider_unit *const units[] = {
#include "units.def"
};
#undef UNIT
#undef ATTACH

const struct provider_unit *const *provider_units(size_t *n)
{
	*n = sizeof(units) / sizeof(units[0]);
	return units;
}
