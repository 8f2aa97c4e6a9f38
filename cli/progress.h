/* A line on stderr while a compile takes long: after 2 s
 * (GPUX_PROGRESS_MS), what gpux is doing and for how long, redrawn every
 * second, and erased when it is done. Only on a terminal: a log or a
 * test's stderr stays as without it. */
#ifndef GPUX_PROGRESS_H
#define GPUX_PROGRESS_H

/* What gpux is doing now ("checking the program"); the first call
 * starts the clock. Cheap: callable at every stage. */
void progress_set(const char *what);
/* Done: the line is erased if it was drawn. Before anything else is
 * written to stderr or the terminal; a later progress_set starts anew. */
void progress_stop(void);

#endif
