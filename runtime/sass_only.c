/* Compares a fatbin's SASS kernels with its PTX kernels. */
#include "sass_only.h"

#include <stdlib.h>
#include <string.h>

#include "cubin.h"
#include "fatbin.h"

/* Adds the kernels of one element to PTX or SASS. */
static int elem_kernels(const struct gpux_fb_elem *e, struct gpux_names *ptx,
			struct gpux_names *sass)
{
	uint8_t *data;
	size_t len;
	int rc;

	if (e->kind != GPUX_FB_PTX && e->kind != GPUX_FB_ELF)
		return GPUX_FB_OK;
	rc = gpux_fb_elem_data(e, &data, &len);
	if (rc)
		return rc;
	if (e->kind == GPUX_FB_PTX)
		rc = gpux_ptx_names((const char *)data, ptx);
	else
		rc = gpux_cubin_kernels(data, len, sass);
	free(data);
	return rc;
}

int gpux_fb_sass_only(const void *buf, size_t len, struct gpux_names *out,
		      unsigned *max_arch)
{
	struct gpux_names ptx = {0}, sass = {0};
	struct gpux_fb_iter it;
	struct gpux_fb_elem e;
	unsigned arch = 0;
	int rc;

	gpux_fb_iter_init(&it, buf, len);
	while ((rc = gpux_fb_next(&it, &e)) == GPUX_FB_OK) {
		rc = elem_kernels(&e, &ptx, &sass);
		if (rc)
			goto done;
		if (e.kind == GPUX_FB_ELF && e.arch > arch)
			arch = e.arch;
	}
	if (rc != GPUX_FB_END)
		goto done;
	rc = GPUX_FB_OK;
	for (size_t i = 0; i < sass.n && !rc; i++)
		if (!gpux_names_has(&ptx, sass.name[i]))
			rc = gpux_names_add(out, sass.name[i],
					    strlen(sass.name[i]), GPUX_SYM_ENTRY);
	if (max_arch)
		*max_arch = arch;
done:
	gpux_names_free(&ptx);
	gpux_names_free(&sass);
	return rc;
}
