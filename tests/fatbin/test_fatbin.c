/* Fatbin tests on objects and programs nvcc built at test-build time.
 * Usage: test_fatbin CASE DIR, or test_fatbin list|ptx FILE (what the
 * cuobjdump comparison reads). Exit 77 skips (no nvcc at build time). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubin.h"
#include "decompress.h"
#include "elf_util.h"
#include "fatbin.h"
#include "kernel_list.h"
#include "sass_only.h"

static const char *dir;
static int failures;

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	failures++; } } while (0)

static const char *K_VEC = "_Z7vec_addPKfS0_Pfi";
static const char *K_SCALE = "_Z5scalePffi";
static const char *K_C = "plain_c_kernel";
static const char *F_HELPER = "_Z6helperf";

static char *path_of(const char *file)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%s/%s", dir, file);
	return buf;
}

/* The fatbin section of an object or program: a malloc'd copy. */
static uint8_t *fatbin_of(const char *file, const char *secname, size_t *len)
{
	struct sec *s, *f;
	uint8_t *out = NULL;
	int n = secs_load(path_of(file), &s);

	*len = 0;
	if (n < 0) {
		fprintf(stderr, "cannot read %s\n", path_of(file));
		failures++;
		return NULL;
	}
	f = secs_find(s, n, secname);
	if (f) {
		out = f->data;
		*len = f->len;
		f->data = NULL;
	}
	secs_free(s, n);
	CHECK(out != NULL);
	return out;
}

/* Expected elements: kind, arch, compression flag. */
struct want { int kind; unsigned arch; unsigned comp; };

static void check_elems(const char *file, const char *secname,
			const struct want *w, int nw)
{
	struct gpux_fb_iter it;
	struct gpux_fb_elem e;
	size_t len;
	uint8_t *fb = fatbin_of(file, secname, &len);
	int i = 0, rc;

	if (!fb)
		return;
	gpux_fb_iter_init(&it, fb, len);
	while ((rc = gpux_fb_next(&it, &e)) == GPUX_FB_OK) {
		CHECK(i < nw);
		if (i < nw) {
			CHECK(e.kind == w[i].kind);
			CHECK(e.arch == w[i].arch);
			CHECK((e.flags & (GPUX_FB_FLAG_LZ4 | GPUX_FB_FLAG_ZSTD)) ==
			      w[i].comp);
			CHECK(e.flags & GPUX_FB_FLAG_64BIT);
			if (e.kind == GPUX_FB_PTX)
				CHECK(e.code_major == 9 && e.code_minor == 0);
		}
		i++;
	}
	CHECK(rc == GPUX_FB_END);
	CHECK(i == nw);
	if (i != nw)
		fprintf(stderr, "%s: %d elements, want %d\n", file, i, nw);
	free(fb);
}

#define Z GPUX_FB_FLAG_ZSTD
#define L GPUX_FB_FLAG_LZ4

static void case_layout(void)
{
	const struct want def[] = {{2, 80, 0}, {1, 80, Z}, {2, 90, 0}};
	const struct want none[] = {{2, 80, 0}, {1, 80, 0}, {2, 90, 0}};
	const struct want all[] = {{2, 80, Z}, {1, 80, Z}, {2, 90, Z}};
	const struct want speed[] = {{2, 80, 0}, {1, 80, L}, {2, 90, 0}};
	const struct want speed_all[] = {{2, 80, L}, {1, 80, L}, {2, 90, L}};
	const struct want sass[] = {{2, 80, 0}};

	/* nvcc 13: PTX compressed with ZSTD by default; -compress-all adds
	 * the ELFs; the speed mode uses LZ4. */
	check_elems("k_def.o", ".nv_fatbin", def, 3);
	check_elems("k_none.o", ".nv_fatbin", none, 3);
	check_elems("k_all.o", ".nv_fatbin", all, 3);
	check_elems("k_size.o", ".nv_fatbin", all, 3);
	check_elems("k_speed.o", ".nv_fatbin", speed, 3);
	check_elems("k_speed_all.o", ".nv_fatbin", speed_all, 3);
	check_elems("k_sass.o", ".nv_fatbin", sass, 1);
	check_elems("k_rdc.o", "__nv_relfatbin", all, 3);
}

/* Element I of FILE's fatbin, decompressed; *out its header (zeroed
 * when there is no such element). */
static uint8_t *elem_data(const char *file, const char *secname, int idx,
			  size_t *len, struct gpux_fb_elem *out)
{
	struct gpux_fb_iter it;
	struct gpux_fb_elem e;
	size_t fl;
	uint8_t *fb = fatbin_of(file, secname, &fl), *data = NULL;
	int i = 0;

	*len = 0;
	if (out)
		*out = (struct gpux_fb_elem){0};
	if (!fb)
		return NULL;
	gpux_fb_iter_init(&it, fb, fl);
	while (gpux_fb_next(&it, &e) == GPUX_FB_OK)
		if (i++ == idx) {
			CHECK(gpux_fb_elem_data(&e, &data, len) == GPUX_FB_OK);
			if (out)
				*out = e;
			break;
		}
	free(fb);
	CHECK(data != NULL);
	return data;
}

/* Every compression of an element inflates to the uncompressed bytes. */
static void case_decompress(void)
{
	const char *files[] = {"k_def.o", "k_all.o", "k_size.o", "k_speed.o",
			       "k_speed_all.o"};

	for (int idx = 0; idx < 3; idx++) {
		size_t rlen, len;
		uint8_t *ref = elem_data("k_none.o", ".nv_fatbin", idx, &rlen, NULL);

		for (size_t f = 0; f < sizeof(files) / sizeof(*files); f++) {
			uint8_t *d = elem_data(files[f], ".nv_fatbin", idx, &len,
					       NULL);

			/* Uncompressed payloads carry padding past the data. */
			CHECK(d && ref && len <= rlen && !memcmp(d, ref, len));
			for (size_t i = len; ref && i < rlen; i++)
				CHECK(ref[i] == 0);
			free(d);
		}
		free(ref);
	}
}

static char *read_text(const char *file)
{
	FILE *f = fopen(path_of(file), "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = 0;
	fclose(f);
	return buf;
}

/* The fatbin keeps PTX minus comments and indentation: compare lines
 * with comments cut and blanks collapsed, empty lines dropped. */
static char *norm_ptx(const char *s)
{
	char *out = malloc(strlen(s) + 2), *o = out;
	int blank = 1, space = 0;

	for (; *s; s++) {
		if (s[0] == '/' && s[1] == '/') {
			while (s[1] && s[1] != '\n')
				s++;
			continue;
		}
		if (*s == '\n') {
			if (!blank)
				*o++ = '\n';
			blank = 1;
			space = 0;
		} else if (*s == ' ' || *s == '\t' || *s == '\r') {
			space = !blank;
		} else {
			if (space)
				*o++ = ' ';
			*o++ = *s;
			blank = space = 0;
		}
	}
	*o = 0;
	return out;
}

static void case_ptx(void)
{
	const char *files[] = {"k_def.o", "k_none.o", "k_speed.o", "k_all.o"};
	char *want = read_text("k80.ptx"), *nwant;

	CHECK(want != NULL);
	if (!want)
		return;
	nwant = norm_ptx(want);
	for (size_t f = 0; f < sizeof(files) / sizeof(*files); f++) {
		struct gpux_fb_elem e;
		char *ptx, *n;
		size_t len;
		uint8_t *fb = fatbin_of(files[f], ".nv_fatbin", &len);

		if (!fb)
			continue;
		CHECK(gpux_fb_best_ptx(fb, len, 90, &e, NULL) == GPUX_FB_OK);
		CHECK(e.arch == 80);
		CHECK(gpux_fb_elem_ptx(&e, &ptx) == GPUX_FB_OK);
		n = norm_ptx(ptx);
		CHECK(!strcmp(n, nwant));
		if (strcmp(n, nwant))
			fprintf(stderr, "%s: PTX differs from k80.ptx\n", files[f]);
		free(n);
		free(ptx);
		free(fb);
	}
	free(nwant);
	free(want);
}

static void case_names(void)
{
	static const char ptx[] =
		"// .entry in_comment(\n"
		"/* .entry in_block( { */\n"
		".version 9.0\n.target sm_80\n"
		".file 1 \"odd .entry name{.cu\"\n"
		".extern .func (.param .b32 func_retval0) vprintf(\n"
		"\t.param .b64 vprintf_param_0, .param .b64 p1\n);\n"
		".global .align 4 .u32 counter;\n"
		".func (.param .b32 func_retval0) _Z6helperi(\n"
		"\t.param .b32 _Z6helperi_param_0\n)\n{\n\tret;\n}\n"
		".weak .func wfunc()\n{\n\tret;\n}\n"
		".visible .entry k1(\n\t.param .u64 k1_p0\n)\n"
		".maxntid 256, 1, 1\n{\n"
		"\t{ .reg .b32 t; }\n"
		"\tprototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _);\n"
		"\tret;\n}\n"
		".entry $k2()\n{\n\texit;\n}\n"
		".func nobody;\n";
	struct gpux_names l = {0};

	CHECK(gpux_ptx_names(ptx, &l) == GPUX_FB_OK);
	CHECK(l.n == 4);
	CHECK(l.n > 0 && !strcmp(l.name[0], "_Z6helperi") &&
	      l.kind[0] == GPUX_SYM_FUNC);
	CHECK(l.n > 1 && !strcmp(l.name[1], "wfunc"));
	CHECK(l.n > 2 && !strcmp(l.name[2], "k1") && l.kind[2] == GPUX_SYM_ENTRY);
	CHECK(l.n > 3 && !strcmp(l.name[3], "$k2"));
	gpux_names_free(&l);

	/* Names in nvcc's PTX, compressed. */
	{
		size_t len;
		struct gpux_fb_elem e;
		char *text = (char *)elem_data("k_def.o", ".nv_fatbin", 1, &len, &e);

		CHECK(text && e.kind == GPUX_FB_PTX);
		CHECK(text && gpux_ptx_names(text, &l) == GPUX_FB_OK);
		CHECK(gpux_names_has(&l, K_VEC) && gpux_names_has(&l, K_SCALE) &&
		      gpux_names_has(&l, K_C) && gpux_names_has(&l, F_HELPER));
		CHECK(l.n == 4);
		for (size_t i = 0; i < l.n; i++)
			CHECK(l.kind[i] == (strcmp(l.name[i], F_HELPER) ?
					    GPUX_SYM_ENTRY : GPUX_SYM_FUNC));
		gpux_names_free(&l);
		free(text);
	}
	/* Kernel names of a cubin. */
	{
		size_t len;
		uint8_t *elf = elem_data("k_all.o", ".nv_fatbin", 2, &len, NULL);

		CHECK(elf && gpux_cubin_kernels(elf, len, &l) == GPUX_FB_OK);
		CHECK(l.n == 3 && gpux_names_has(&l, K_VEC) &&
		      gpux_names_has(&l, K_SCALE) && gpux_names_has(&l, K_C));
		gpux_names_free(&l);
		free(elf);
	}
}

static void case_lz4(void)
{
	/* Literal '\n', then a match at offset 1 (overlapping), length 7. */
	static const uint8_t run[] = {0x13, '\n', 1, 0, 0x20, 'a', 'b'};
	static const uint8_t bad_off[] = {0x13, 'x', 2, 0, 0x10, 'a'};
	static const uint8_t zero_off[] = {0x13, 'x', 0, 0, 0x10, 'a'};
	static const uint8_t long_lit[] = {0xf0, 0xff};
	uint8_t out[64];
	uint8_t *buf;
	size_t len;

	CHECK(gpux_lz4_block(run, sizeof(run), out, sizeof(out)) == 10);
	CHECK(!memcmp(out, "\n\n\n\n\n\n\n\nab", 10));
	CHECK(gpux_lz4_block(run, sizeof(run), out, 9) == -1);
	CHECK(gpux_lz4_block(run, 3, out, sizeof(out)) == -1);
	CHECK(gpux_lz4_block(bad_off, sizeof(bad_off), out, sizeof(out)) == -1);
	CHECK(gpux_lz4_block(zero_off, sizeof(zero_off), out, sizeof(out)) == -1);
	CHECK(gpux_lz4_block(long_lit, sizeof(long_lit), out, sizeof(out)) == -1);
	CHECK(gpux_lz4_decompress(run, sizeof(run), 10, &buf, &len) == GPUX_FB_OK);
	CHECK(len == 10 && buf[10] == 0);
	free(buf);
	CHECK(gpux_lz4_decompress(run, sizeof(run), 11, &buf, &len) ==
	      GPUX_FB_EDECOMPRESS && !buf);
	/* A size beyond 255x the input is refused before any malloc. */
	CHECK(gpux_lz4_decompress(run, sizeof(run), 1u << 20, &buf, &len) ==
	      GPUX_FB_EFORMAT);
	CHECK(gpux_zstd_decompress(run, sizeof(run), 10, &buf, &len) ==
	      GPUX_FB_EDECOMPRESS);
}

static void case_sass_only(void)
{
	struct gpux_names l = {0};
	struct gpux_fb_elem e;
	unsigned arch = 0, lowest = 1;
	char hint[80];
	size_t len;
	uint8_t *fb = fatbin_of("k_sass.o", ".nv_fatbin", &len);

	CHECK(gpux_fb_best_ptx(fb, len, 90, &e, &lowest) == GPUX_FB_ENOTFOUND);
	CHECK(lowest == 0);
	CHECK(gpux_fb_sass_only(fb, len, &l, &arch) == GPUX_FB_OK);
	CHECK(l.n == 3 && gpux_names_has(&l, K_VEC) &&
	      gpux_names_has(&l, K_SCALE) && gpux_names_has(&l, K_C));
	CHECK(arch == 80);
	gpux_fb_rebuild_hint(arch, hint, sizeof(hint));
	CHECK(!strcmp(hint, "-gencode arch=compute_80,code=[sm_80,compute_80]"));
	gpux_names_free(&l);
	free(fb);

	fb = fatbin_of("k_def.o", ".nv_fatbin", &len);
	CHECK(gpux_fb_sass_only(fb, len, &l, &arch) == GPUX_FB_OK);
	CHECK(l.n == 0 && arch == 90);
	gpux_names_free(&l);
	/* A device older than every PTX: none fits, the lowest is named. */
	CHECK(gpux_fb_best_ptx(fb, len, 75, &e, &lowest) == GPUX_FB_ENOTFOUND);
	CHECK(lowest == 80);
	CHECK(gpux_fb_best_ptx(fb, len, 80, &e, &lowest) == GPUX_FB_OK);
	CHECK(e.arch == 80);
	free(fb);
}

/* -rdc: the TU's fatbin goes to __nv_relfatbin with relocatable PTX;
 * the linked program's .nv_fatbin holds nvlink's SASS only. */
static void case_rdc(void)
{
	struct gpux_names l = {0};
	struct gpux_fb_elem e;
	size_t len;
	uint8_t *fb = fatbin_of("k_rdc.o", "__nv_relfatbin", &len);
	char *ptx;

	CHECK(gpux_fb_best_ptx(fb, len, 90, &e, NULL) == GPUX_FB_OK);
	CHECK(e.options_len >= 14 && !memcmp(e.options, "--compile-only", 14));
	CHECK(gpux_fb_elem_ptx(&e, &ptx) == GPUX_FB_OK);
	CHECK(gpux_ptx_names(ptx, &l) == GPUX_FB_OK);
	CHECK(gpux_names_has(&l, K_VEC) && gpux_names_has(&l, F_HELPER));
	gpux_names_free(&l);
	free(ptx);
	free(fb);

	fb = fatbin_of("two_rdc", ".nv_fatbin", &len);
	CHECK(gpux_fb_sass_only(fb, len, &l, NULL) == GPUX_FB_OK);
	CHECK(gpux_names_has(&l, K_VEC) && gpux_names_has(&l, "_Z13second_kernelPi"));
	gpux_names_free(&l);
	free(fb);
	fb = fatbin_of("two_rdc", "__nv_relfatbin", &len);
	CHECK(gpux_fb_sass_only(fb, len, &l, NULL) == GPUX_FB_OK);
	CHECK(l.n == 0);
	gpux_names_free(&l);
	free(fb);
}

/* Register counts from the cubins: what ptxas -v said for each kernel
 * ("Compiling entry function 'K' for 'sm_NN'" ... "Used N registers"). */
static void case_regs(void)
{
	char line[512], kernel[256] = "";
	unsigned arch = 0, seen = 0;
	FILE *f = fopen(path_of("ptxas_v.txt"), "r");
	size_t len;
	uint8_t *fb = fatbin_of("k_v.o", ".nv_fatbin", &len);

	CHECK(f && fb);
	if (!f || !fb) {
		if (f)
			fclose(f);
		free(fb);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		const char *c = strstr(line, "Compiling entry function '");
		unsigned regs;
		if (c && sscanf(c, "Compiling entry function '%255[^']' for 'sm_%u'", kernel, &arch) == 2)
			continue;
		const char *u = strstr(line, "Used ");
		if (!u || sscanf(u, "Used %u registers", &regs) != 1 || !kernel[0])
			continue;
		/* the ELF element of that arch */
		struct gpux_fb_iter it;
		struct gpux_fb_elem e;
		unsigned found = 0;
		gpux_fb_iter_init(&it, fb, len);
		while (gpux_fb_next(&it, &e) == GPUX_FB_OK) {
			uint8_t *elf;
			size_t n;
			struct gpux_cubin_regs r = {0};
			if (e.kind != GPUX_FB_ELF || e.arch != arch)
				continue;
			CHECK(gpux_fb_elem_data(&e, &elf, &n) == GPUX_FB_OK);
			CHECK(gpux_cubin_regs(elf, n, &r) == GPUX_FB_OK);
			found = gpux_cubin_regs_of(&r, kernel);
			if (found != regs)
				fprintf(stderr, "%s sm_%u: %u registers, ptxas said %u\n", kernel,
					arch, found, regs);
			gpux_cubin_regs_free(&r);
			free(elf);
		}
		CHECK(found == regs);
		seen++;
		kernel[0] = 0;
	}
	fclose(f);
	free(fb);
	/* three kernels for sm_80 and sm_90 */
	CHECK(seen == 6);
	struct gpux_cubin_regs r = {0};
	CHECK(gpux_cubin_regs((const uint8_t *)"\177ELF", 4, &r) == GPUX_FB_ETRUNC);
	gpux_cubin_regs_free(&r);
}

/* Wrappers: in an object the data pointer is a relocation against the
 * start of .nv_fatbin; in a program each points at one container. */
static void case_wrapper(void)
{
	struct gpux_fb_wrapper w;
	char name[64];
	int64_t addend = -1;
	size_t len;
	uint8_t *seg = fatbin_of("k_def.o", ".nvFatBinSegment", &len);

	CHECK(seg && gpux_fb_wrapper_parse(seg, len, &w) == GPUX_FB_OK);
	CHECK(w.version == 1 && len == GPUX_FB_WRAPPER_SIZE);
	CHECK(gpux_fb_wrapper_parse(seg, 23, &w) == GPUX_FB_ETRUNC);
	CHECK(rela_target(path_of("k_def.o"), ".rela.nvFatBinSegment", 8, name,
			  sizeof(name), &addend) == 0);
	CHECK(!strcmp(name, ".nv_fatbin") && addend == 0);
	free(seg);

	const char *progs[] = {"two", "two_rdc"};
	for (int p = 0; p < 2; p++) {
		struct sec *s;
		int n = secs_load(path_of(progs[p]), &s), found = 0;
		struct sec *ws = secs_find(s, n, ".nvFatBinSegment");

		CHECK(ws && ws->len % GPUX_FB_WRAPPER_SIZE == 0);
		for (size_t off = 0; ws && off < ws->len;
		     off += GPUX_FB_WRAPPER_SIZE) {
			CHECK(gpux_fb_wrapper_parse(ws->data + off, ws->len - off,
						    &w) == GPUX_FB_OK);
			for (int i = 0; i < n; i++) {
				struct sec *t = &s[i];
				struct gpux_fb_iter it;
				struct gpux_fb_elem e;
				size_t total, at;
				int elems = 0;

				if (!t->addr || w.data < t->addr ||
				    w.data >= t->addr + t->len)
					continue;
				at = (size_t)(w.data - t->addr);
				CHECK(gpux_fb_container_size(t->data + at,
					t->len - at, &total) == GPUX_FB_OK);
				CHECK(total <= t->len - at);
				gpux_fb_iter_init(&it, t->data + at, total);
				while (gpux_fb_next(&it, &e) == GPUX_FB_OK)
					elems++;
				CHECK(elems > 0 && it.container == 1);
				found++;
			}
		}
		/* two: nvlink's module and one per TU; two_rdc: the linked
		 * module and the two TUs' relocatable fatbins. */
		CHECK(found == 3);
		secs_free(s, n);
	}
}

/* A linked program: containers concatenated in one section. */
static void case_multi(void)
{
	struct gpux_fb_iter it;
	struct gpux_fb_elem e;
	struct gpux_names l = {0};
	size_t len;
	uint8_t *fb = fatbin_of("two", ".nv_fatbin", &len);
	unsigned ptx = 0;

	gpux_fb_iter_init(&it, fb, len);
	while (gpux_fb_next(&it, &e) == GPUX_FB_OK) {
		if (e.kind == GPUX_FB_PTX) {
			char *text;

			ptx++;
			CHECK(gpux_fb_elem_ptx(&e, &text) == GPUX_FB_OK);
			CHECK(gpux_ptx_names(text, &l) == GPUX_FB_OK);
			free(text);
		}
	}
	CHECK(it.container == 3 && ptx == 2);
	CHECK(gpux_names_has(&l, K_VEC) && gpux_names_has(&l, "_Z13second_kernelPi"));
	gpux_names_free(&l);
	free(fb);
}

/* Everything a caller might do with a buffer; returns the first error. */
static int consume(const uint8_t *buf, size_t len)
{
	struct gpux_fb_iter it;
	struct gpux_fb_elem e;
	struct gpux_names l = {0};
	int rc, first = 0;

	gpux_fb_iter_init(&it, buf, len);
	while ((rc = gpux_fb_next(&it, &e)) == GPUX_FB_OK) {
		uint8_t *d;
		size_t n;
		int r = gpux_fb_elem_data(&e, &d, &n);

		if (!r && e.kind == GPUX_FB_PTX)
			r = gpux_ptx_names((char *)d, &l);
		else if (!r && e.kind == GPUX_FB_ELF)
			r = gpux_cubin_kernels(d, n, &l);
		free(d);
		if (r && !first)
			first = r;
	}
	gpux_names_free(&l);
	if (rc != GPUX_FB_END && !first)
		first = rc;
	rc = gpux_fb_best_ptx(buf, len, 90, &e, NULL);
	rc = gpux_fb_sass_only(buf, len, &l, NULL);
	gpux_names_free(&l);
	(void)rc;
	return first;
}

/* Mutated copies live in exact-size mallocs, so ASan sees any overread. */
static int consume_copy(const uint8_t *buf, size_t len, size_t flip_at,
			uint8_t mask)
{
	uint8_t *c = malloc(len ? len : 1);
	int rc;

	memcpy(c, buf, len);
	if (flip_at < len)
		c[flip_at] ^= mask;
	rc = consume(c, len);
	free(c);
	return rc;
}

static void case_fuzz(void)
{
	const char *files[] = {"k_def.o", "k_speed_all.o", "k_rdc.o", "two"};
	unsigned seed = 12345;

	for (size_t f = 0; f < sizeof(files) / sizeof(*files); f++) {
		size_t len, trunc_ok = 0;
		const char *sec = strcmp(files[f], "k_rdc.o") ? ".nv_fatbin" :
								  "__nv_relfatbin";
		uint8_t *fb = fatbin_of(files[f], sec, &len);

		if (!fb)
			continue;
		CHECK(consume_copy(fb, len, len, 0) == 0);
		/* Every truncation inside a container is an error. */
		for (size_t n = 1; n < len; n++)
			if (consume_copy(fb, n, len, 0) == 0)
				trunc_ok++;
		if (strcmp(files[f], "two"))
			CHECK(trunc_ok == 0);
		/* Every bit of the headers, then random flips anywhere. */
		for (size_t i = 0; i < 256 && i < len; i++)
			for (int b = 0; b < 8; b++)
				consume_copy(fb, len, i, (uint8_t)(1u << b));
		for (int r = 0; r < 4000; r++) {
			seed = seed * 1103515245u + 12345u;
			consume_copy(fb, len, (seed >> 8) % len,
				     (uint8_t)(1u << (seed >> 4 & 7)));
		}
		free(fb);
	}
	CHECK(consume(NULL, 0) == 0);
}

/* cuobjdump -lelf -lptx's listing, for the comparison script. */
static int list_file(const char *file, int ptx_text)
{
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	const char *secs[] = {".nv_fatbin", "__nv_relfatbin"};
	unsigned nelf = 0, nptx = 0;
	struct sec *s;
	int n = secs_load(file, &s), rc = 0;
	char stem[256];

	snprintf(stem, sizeof(stem), "%s", base);
	if (strrchr(stem, '.'))
		*strrchr(stem, '.') = 0;
	for (int k = 0; k < 2 && n >= 0; k++) {
		struct sec *t = secs_find(s, n, secs[k]);
		struct gpux_fb_iter it;
		struct gpux_fb_elem e;

		if (!t)
			continue;
		gpux_fb_iter_init(&it, t->data, t->len);
		while ((rc = gpux_fb_next(&it, &e)) == GPUX_FB_OK) {
			char *text;

			if (e.kind == GPUX_FB_ELF)
				nelf++;
			if (e.kind == GPUX_FB_ELF && !ptx_text) {
				printf("ELF file %4u: %s.%u.sm_%u.cubin\n", nelf,
				       stem, nelf, e.arch);
			}
			if (e.kind != GPUX_FB_PTX)
				continue;
			++nptx;
			if (!ptx_text) {
				printf("PTX file %4u: %s.%u.sm_%u.ptx\n", nptx, stem,
				       nptx, e.arch);
			} else if (gpux_fb_elem_ptx(&e, &text) == GPUX_FB_OK) {
				fputs(text, stdout);
				free(text);
			}
		}
		if (rc != GPUX_FB_END)
			break;
		rc = 0;
		/* cuobjdump reads the relocatable fatbins only if no other. */
		if (nelf + nptx)
			break;
	}
	if (n >= 0)
		secs_free(s, n);
	return n < 0 || rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; void (*fn)(void); } cases[] = {
		{"layout", case_layout}, {"decompress", case_decompress},
		{"ptx", case_ptx}, {"names", case_names}, {"lz4", case_lz4},
		{"sass_only", case_sass_only}, {"rdc", case_rdc}, {"regs", case_regs},
		{"wrapper", case_wrapper}, {"multi", case_multi},
		{"fuzz", case_fuzz},
	};
	char stamp[4096];
	FILE *f;

	if (argc != 3)
		return 2;
	if (!strcmp(argv[1], "list") || !strcmp(argv[1], "ptxdump"))
		return list_file(argv[2], argv[1][0] == 'p');
	dir = argv[2];
	snprintf(stamp, sizeof(stamp), "%s/stamp", dir);
	f = fopen(stamp, "r");
	if (!f && strcmp(argv[1], "lz4")) {
		printf("skipped: no CUDA test programs (nvcc missing at build)\n");
		return 77;
	}
	if (f)
		fclose(f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		if (!strcmp(cases[i].name, argv[1])) {
			cases[i].fn();
			return failures ? 1 : 0;
		}
	fprintf(stderr, "unknown case %s\n", argv[1]);
	return 2;
}
