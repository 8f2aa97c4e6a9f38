/* The symbolizer's pure parts: /proc/PID/maps lines, and finding the
 * symbol that holds an address in a sorted table. */
#include <stdio.h>
#include <string.h>

#include "out_syms.h"

static int fails;
#define CHECK(c) ((c) ? (void)0 : (void)(fails++, fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c)))

int main(void)
{
	struct out_mapping m;
	CHECK(out_parse_maps_line("55d0c8a00000-55d0c8a01000 r-xp 00001000 08:01 1234   "
				  "       /tmp/x/probe_tgt\n", &m) == 0);
	CHECK(m.start == 0x55d0c8a00000 && m.end == 0x55d0c8a01000 && m.offset == 0x1000);
	CHECK(!strcmp(m.path, "/tmp/x/probe_tgt"));
	CHECK(out_parse_maps_line("7ffd1000-7ffd2000 rw-p 00000000 00:00 0 \n", &m) == 0);
	CHECK(m.path[0] == '\0');
	CHECK(out_parse_maps_line("garbage\n", &m) == -1);

	struct host_symbol sym[] = {
		{ 0x1000, 0x10, (char *)"a" },
		{ 0x1010, 0x20, (char *)"b" },
		{ 0x1040, 0, (char *)"zero" },
		{ 0x1100, 0x8, (char *)"c" },
	};
	struct host_symtab t = { .sym = sym, .n = 4 };
	CHECK(out_symtab_find(&t, 0x0fff) == -1);
	CHECK(out_symtab_find(&t, 0x1000) == 0);
	CHECK(out_symtab_find(&t, 0x100f) == 0);
	CHECK(out_symtab_find(&t, 0x1010) == 1);
	CHECK(out_symtab_find(&t, 0x1030) == -1); /* past b, before zero */
	CHECK(out_symtab_find(&t, 0x1040) == 2);  /* a size-0 symbol holds its address */
	CHECK(out_symtab_find(&t, 0x1041) == -1);
	CHECK(out_symtab_find(&t, 0x1107) == 3);
	CHECK(out_symtab_find(&t, 0x1108) == -1);
	if (fails)
		return 1;
	puts("ok");
	return 0;
}
