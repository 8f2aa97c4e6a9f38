/* The assembler and disassembler agree: text -> insns -> text is the
 * identity on canonical text, errors are located on their line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_asm.h"

static int passed, failed;

static void check(int ok, const char *what)
{
	if (ok) {
		passed++;
	} else {
		failed++;
		printf("FAIL: %s\n", what);
	}
}

static const char canonical[] =
	".map pages 8 8 4096\n"
	"   0: r1 = *(u64 *)(r1 + 0)\n"
	"   1: r1 >>= 21\n"
	"   2: *(u64 *)(r10 - 8) = r1\n"
	"   3: r1 = map[pages] ll\n"
	"   5: r2 = r10\n"
	"   6: r2 += -8\n"
	"   7: call agg_count\n"
	"   8: if r0 != 0 goto +4\n"
	"   9: w3 = -w3\n"
	"  10: *(u32 *)(r10 - 16) = 7\n"
	"  11: lock *(u64 *)(r10 - 8) += r3\n"
	"  12: if w2 s>= w3 goto -4\n"
	"  13: r4 = 0x123456789 ll\n"
	"  15: goto +0\n"
	"  16: r0 = 0\n"
	"  17: exit\n";

static const char source[] =
	".name gdev:access\n"
	".map pages 8 8 4096\n"
	"r1 = *(u64 *)(r1 + 0)   ; addr\n"
	"r1 >>= 21\n"
	"*(u64 *)(r10 - 8) = r1\n"
	"r1 = map[pages] ll\n"
	"r2 = r10\n"
	"r2 += -8\n"
	"call agg_count\n"
	"if r0 != 0 goto out\n"
	"back: w3 = -w3\n"
	"*(u32 *)(r10 - 16) = 7\n"
	"lock *(u64 *)(r10 - 8) += r3\n"
	"if w2 s>= w3 goto back\n"
	"out: r4 = 0x123456789 ll\n"
	"goto +0\n"
	"r0 = 0\n"
	"exit\n";

static int assemble(const char *text, struct arena *a, struct dev_prog *p,
		    struct diags *d, struct source *src)
{
	src->name = "t.bpf";
	src->text = text;
	src->len = strlen(text);
	diags_init(d, a);
	return bpf_assemble(src, a, p, d);
}

int main(void)
{
	struct arena a;
	arena_init(&a);
	struct dev_prog p;
	struct diags d;
	struct source src;
	check(assemble(source, &a, &p, &d, &src) == 0, "sample assembles");
	check(p.ninsns == 18, "18 slots (two lddw)");
	check(p.spans[0].first_line == 3, "first instruction's span is line 3");
	check(!strcmp(p.name, "gdev:access"), ".name sets the name");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bpf_disasm(f, &p);
	fclose(f);
	check(!strcmp(buf, canonical), "disassembly is canonical");
	if (strcmp(buf, canonical))
		printf("got:\n%s", buf);
	free(buf);

	static const char *const bad[] = {
		"r11 = 1\n", "r1 = map[nope] ll\n", "goto nowhere\n",
		"call no_such_helper\n", "r1 = 1 2\n", "*(u128 *)(r10 - 8) = 1\n",
		"r1 = 0x100000000\n",
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		struct dev_prog q;
		int rc = assemble(bad[k], &a, &q, &d, &src);
		check(rc != 0 && d.errors == 1 && d.head->span.first_line == 1, bad[k]);
	}
	arena_free(&a);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
