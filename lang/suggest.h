/* "Did you mean ...?" for misspelled probe, field, builtin and function
 * names. */
#ifndef GPUX_SUGGEST_H
#define GPUX_SUGGEST_H

#include <stddef.h>

/* Words and candidates longer than this are never compared, bounding the
 * work on hostile input. */
#define SUGGEST_MAX_LEN 64

/* The candidate closest to word by edit distance (insert, delete,
 * substitute, swap adjacent), if that distance is at most
 * max(1, strlen(word) / 3); a candidate equal to word ignoring case wins
 * outright ("begin" -> "BEGIN"). Ties go to the earlier candidate. NULL
 * when nothing is close enough. NULL entries in cands are skipped. */
const char *suggest_closest(const char *word, const char *const *cands,
			    size_t n);

/* Optimal string alignment distance; SUGGEST_MAX_LEN + 1 when either
 * string is too long to compare. */
unsigned suggest_distance(const char *a, const char *b);

#endif
