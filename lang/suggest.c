#include "suggest.h"

#include <string.h>
#include <strings.h>

#define TOO_FAR (SUGGEST_MAX_LEN + 1u)

static unsigned min3(unsigned a, unsigned b, unsigned c)
{
	unsigned m = a < b ? a : b;
	return m < c ? m : c;
}

unsigned suggest_distance(const char *a, const char *b)
{
	size_t la = strnlen(a, SUGGEST_MAX_LEN + 1);
	size_t lb = strnlen(b, SUGGEST_MAX_LEN + 1);
	if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
		return TOO_FAR;

	/* Three rolling rows: the swap case looks two rows back. */
	unsigned rows[3][SUGGEST_MAX_LEN + 1];
	unsigned *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned cost = a[i - 1] != b[j - 1];
			cur[j] = min3(prev[j] + 1, cur[j - 1] + 1,
				      prev[j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < cur[j])
				cur[j] = prev2[j - 2] + 1;
		}
		unsigned *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

const char *suggest_closest(const char *word, const char *const *cands,
			    size_t n)
{
	if (!word || !cands)
		return NULL;
	size_t len = strnlen(word, SUGGEST_MAX_LEN + 1);
	if (len == 0 || len > SUGGEST_MAX_LEN)
		return NULL;

	for (size_t i = 0; i < n; i++)
		if (cands[i] && !strcasecmp(word, cands[i]))
			return cands[i];

	unsigned limit = len / 3 > 1 ? (unsigned)(len / 3) : 1;
	const char *best = NULL;
	unsigned best_d = limit + 1;
	for (size_t i = 0; i < n; i++) {
		if (!cands[i])
			continue;
		unsigned d = suggest_distance(word, cands[i]);
		if (d < best_d) {
			best = cands[i];
			best_d = d;
		}
	}
	return best;
}
