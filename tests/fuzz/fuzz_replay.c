/* Without libFuzzer: run the fuzz target over files given on the command
 * line (the seed corpus and every crash the fuzzer ever found), so the
 * ordinary test suite, under ASan too, replays them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int ran = 0;
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			fprintf(stderr, "fuzz_replay: cannot open %s\n", argv[i]);
			return 1;
		}
		static uint8_t buf[1 << 16];
		size_t n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, n);
		ran++;
	}
	printf("replayed %d inputs\n", ran);
	return ran ? 0 : 1;
}
