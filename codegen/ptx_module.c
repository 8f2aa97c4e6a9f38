/* The module around the probe functions: header, helper prototypes, map
 * descriptors, and the helper library's PTX. */
#include <stdbool.h>
#include <string.h>

#include "gpux_dev.h"
#include "ptx_emit.h"
#include "ptx_jit.h"

/* "9.0" -> 90; -1 if it is not MAJOR.MINOR. */
static int version_num(const char *s, size_t len)
{
	int major = 0, minor = 0;
	size_t k = 0;
	for (; k < len && s[k] >= '0' && s[k] <= '9'; k++)
		major = major * 10 + (s[k] - '0');
	if (k == 0 || k >= len || s[k] != '.' || major > 99)
		return -1;
	size_t m = ++k;
	for (; k < len && s[k] >= '0' && s[k] <= '9'; k++)
		minor = minor * 10 + (s[k] - '0');
	return k == m || minor > 9 ? -1 : major * 10 + minor;
}

const char *ptx_jit_version_for(const char *lib, size_t len, char *buf,
				size_t buf_len)
{
	const char *end = lib ? lib + len : NULL;
	for (const char *p = lib; p && p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		if (n > 9 && !strncmp(p, ".version ", 9)) {
			int v = version_num(p + 9, n - 9);
			if (v > version_num(PTX_JIT_VERSION, strlen(PTX_JIT_VERSION))) {
				snprintf(buf, buf_len, "%d.%d", v / 10, v % 10);
				return buf;
			}
			break;
		}
		p += n + 1;
	}
	return PTX_JIT_VERSION;
}

void ptx_jit_module_header(FILE *out, const char *version, const char *target,
			   enum ptx_link link)
{
	fprintf(out, ".version %s\n.target %s\n.address_size 64\n\n",
		version ? version : PTX_JIT_VERSION, target);
	/* In one module a helper is forward-declared and defined later by
	 * the appended library; ptxas refuses .extern for that case, and
	 * needs it for one another module defines. */
	const char *linkage = link == PTX_LINK_SAME_MODULE ? ".visible" : ".extern";
	const char *sym;
	int nargs;
	for (int n = 0; (sym = ptx_helper_nth(n, &nargs)); n++) {
		fprintf(out, "%s .func (.param .b64 gpux_rv) %s(", linkage, sym);
		for (int a = 0; a < nargs; a++)
			fprintf(out, "%s.param .b64 gpux_a%d", a ? ", " : "", a);
		fputs(");\n", out);
	}
	/* struct gpux_clock: the runtime stores what puts device times
	 * on the host's CLOCK_MONOTONIC. */
	bool here = link != PTX_LINK_EXTERN;
	fprintf(out, "%s .global .align 16 .u64 " GPUX_SYM_CLOCK_OFF "[2]%s;\n",
		here ? ".visible" : ".extern", here ? " = {0, 0}" : "");
	/* the `gpu` builtin: the device ordinal of the module's context */
	fprintf(out, "%s .global .align 4 .u32 " GPUX_SYM_GPU "%s;\n\n",
		here ? ".visible" : ".extern", here ? " = 0" : "");
}

void ptx_jit_map_decls(FILE *out, const struct dev_prog *prog,
		       enum ptx_link link)
{
	const char *linkage = link == PTX_LINK_EXTERN ? ".extern" : ".visible";
	for (int k = 0; k < prog->nmaps; k++)
		fprintf(out, "%s .global .align 8 .b8 " GPUX_SYM_MAP "%d[%d]; // @%s\n",
			linkage, k, GPUX_MAP_DESC_SIZE, prog->maps[k].name);
	if (prog->nmaps)
		fputc('\n', out);
}

static bool header_line(const char *line, size_t len)
{
	static const char *const drop[] = { ".version", ".target", ".address_size" };
	for (size_t k = 0; k < sizeof(drop) / sizeof(drop[0]); k++) {
		size_t n = strlen(drop[k]);
		if (len > n && !strncmp(line, drop[k], n) &&
		    (line[n] == ' ' || line[n] == '\t'))
			return true;
	}
	return false;
}

void ptx_jit_append_library(FILE *out, const char *ptx, size_t len)
{
	const char *end = ptx + len;
	while (ptx < end) {
		const char *nl = memchr(ptx, '\n', (size_t)(end - ptx));
		size_t n = (size_t)((nl ? nl + 1 : end) - ptx);
		if (!header_line(ptx, n))
			fwrite(ptx, 1, n, out);
		ptx += n;
	}
	if (len && ptx[-1] != '\n')
		fputc('\n', out);
}
