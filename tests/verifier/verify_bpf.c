/* Assemble a .bpf file and run the SIMT verifier on it.
 *
 *   verify_bpf [-l] [-s] FILE
 *
 * Diagnostics go to stderr in the front end's format; exit status 1 when
 * the file does not assemble or is rejected, 2 on usage or I/O errors.
 * -l prints the verifier log on stdout, -s the statistics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_asm.h"
#include "simt_verifier.h"

int main(int argc, char **argv)
{
	bool log = false, stats = false;
	int i;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-l"))
			log = true;
		else if (!strcmp(argv[i], "-s"))
			stats = true;
		else
			break;
	}
	if (i != argc - 1) {
		fprintf(stderr, "usage: %s [-l] [-s] FILE.bpf\n", argv[0]);
		return 2;
	}
	size_t len;
	char *text = source_read_file(argv[i], &len);
	if (!text) {
		perror(argv[i]);
		return 2;
	}
	struct source src = { argv[i], text, len, NULL, 0 };
	struct arena arena;
	struct diags diags;
	struct dev_prog prog;
	struct simt_stats st;
	arena_init(&arena);
	diags_init(&diags, &arena);
	int rc = bpf_assemble(&src, &arena, &prog, &diags);
	if (rc == 0)
		rc = simt_verify_log(&prog, &diags, &st, log ? stdout : NULL);
	if (rc == 0 && stats)
		printf("longest path %d, helper calls %d, map ops %d, states %d, "
		       "pruned %d, processed %ld\n", st.longest_path, st.helper_calls,
		       st.map_ops, st.states, st.pruned, st.processed);
	diags_print(&diags, &src, stderr);
	arena_free(&arena);
	free(text);
	return rc ? 1 : 0;
}
