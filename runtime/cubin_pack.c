/* Build tool: one file as one zstd frame, for the helper cubins embedded
 * in libgpux-rt.so (runtime/helpers_cubin.cmake). libzstd is the
 * runtime's own dependency, so the build needs no zstd program.
 *   cubin_pack IN OUT */
#include <stdio.h>
#include <stdlib.h>
#include <zstd.h>

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	void *buf = NULL;
	long n = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
	if (n > 0 && !fseek(f, 0, SEEK_SET) && (buf = malloc((size_t)n)) &&
	    fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = buf ? (size_t)n : 0;
	return buf;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: cubin_pack IN OUT\n");
		return 2;
	}
	size_t len = 0;
	void *in = slurp(argv[1], &len);
	size_t cap = ZSTD_compressBound(len);
	void *out = in ? malloc(cap) : NULL;
	if (!out) {
		fprintf(stderr, "cubin_pack: cannot read %s\n", argv[1]);
		free(in);
		return 1;
	}
	/* 15: within a tenth of 19's size at a quarter of its time */
	size_t n = ZSTD_compress(out, cap, in, len, 15);
	FILE *f = ZSTD_isError(n) ? NULL : fopen(argv[2], "wb");
	int rc = f && fwrite(out, 1, n, f) == n ? 0 : 1;
	if (f && fclose(f))
		rc = 1;
	if (rc)
		fprintf(stderr, "cubin_pack: cannot write %s\n", argv[2]);
	free(in);
	free(out);
	return rc;
}
