/* symbols/host_dwarf.c on this test's own DWARF (built with -g): a
 * function's parameters, their registers, and the records they point
 * to as C definitions. Skipped (77) where libdw cannot be loaded. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "host_dwarf.h"

static int failed, passed;
#define CHECK(c) ((c) ? (passed++, 1) : (failed++, fprintf(stderr, "FAIL line %d: %s\n", __LINE__, #c), 0))

struct inner {
	int a;
	long b;
};
struct outer {
	int id;
	struct inner in;
	struct inner *ip;
	char tag[4];
	void (*fn)(int);
};
struct bits {
	unsigned x : 3;
};

__attribute__((noinline, used)) long probe_me(const struct outer *o, int n, double d, long e,
					       struct bits *b, unsigned char c)
{
	__asm__ volatile("" ::: "memory");
	return o->id + n + (long)d + e + b->x + c;
}

static const char *def_of(const struct host_drecords *r, const char *name)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->name[i], name))
			return r->name[i];
	return NULL;
}

int main(int argc, char **argv)
{
	(void)argc;
	struct host_dparam *p;
	struct host_drecords r;
	int n;
	char err[512];
	int rc = host_dwarf_params(argv[0], "probe_me", &p, &n, &r, err, sizeof(err));
	if (rc == -ENOSYS) {
		printf("skipped: %s\n", err);
		return 77;
	}
	if (!CHECK(rc == 0) || !CHECK(n == 6)) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	CHECK(!strcmp(p[0].name, "o") && !strcmp(p[0].ctype, "const struct outer*"));
	CHECK(p[0].reg == 0 && p[0].size == 8 && !strcmp(p[0].record, "struct outer") &&
	      p[0].stars == 1);
	CHECK(!strcmp(p[1].ctype, "int") && p[1].reg == 1 && p[1].size == 4 && p[1].is_signed);
	/* a double is in an SSE register: none of the integer ones */
	CHECK(!strcmp(p[2].ctype, "double") && p[2].reg == -1);
	CHECK(!strcmp(p[3].ctype, "long int") && p[3].reg == 2);
	/* a struct with a bitfield cannot be written: not typed */
	CHECK(p[4].reg == 3 && !p[4].record);
	CHECK(!strcmp(p[5].ctype, "unsigned char") && p[5].reg == 4 && p[5].size == 1 &&
	      !p[5].is_signed);
	/* the records: inner (held by value) before outer, with sizes */
	CHECK(r.n == 2 && def_of(&r, "struct inner") && def_of(&r, "struct outer"));
	const char *in = r.defs ? strstr(r.defs, "struct inner {") : NULL;
	const char *out = r.defs ? strstr(r.defs, "struct outer {") : NULL;
	CHECK(in && out && in < out);
	CHECK(r.defs && strstr(r.defs, "\tstruct inner in;\n") && strstr(r.defs, "\tchar tag[4];\n") &&
	      strstr(r.defs, "\tstruct inner *ip;\n") && strstr(r.defs, "\tvoid *fn;\n"));
	for (int i = 0; i < r.n; i++)
		CHECK(r.size[i] == (strcmp(r.name[i], "struct inner") ? sizeof(struct outer)
								       : sizeof(struct inner)));
	host_dparams_free(p, n);
	host_drecords_free(&r);
	CHECK(host_dwarf_params(argv[0], "no_such_function", &p, &n, &r, err, sizeof(err)) ==
	      -ENOENT);
	CHECK(host_dwarf_params("/nonexistent", "x", &p, &n, &r, err, sizeof(err)) == -ENOENT);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
