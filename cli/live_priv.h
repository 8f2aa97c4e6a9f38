/* struct live, shared by live.c (the program, generations, entries) and
 * live_view.c (reading maps and messages, printing them). */
#ifndef GPUX_LIVE_PRIV_H
#define GPUX_LIVE_PRIV_H

#include <limits.h>
#include <sys/types.h>

#include "dev_session.h"
#include "live.h"
#include "map_base.h"

/* One generation of the session file: the probes of the entries active
 * when it was made (prog NULL: none), its segment at off. */
struct live_gen {
	struct program *prog;
	struct dev_session ds;
	struct gpux_sess_hdr *h;
	uint64_t off, size;
};

struct live_entry {
	int id;
	char *text;
	bool active;
};

struct live {
	FILE *out;
	bool verbose;
	bool no_cache;       /* --no-cache (GPUX_SESS_NO_CACHE) */
	int fd;              /* the session file */
	char rt[PATH_MAX];   /* libgpux-rt.so */
	pid_t pid;
	bool attached;       /* --repl -p: a process gpux did not start */
	bool reaped;
	int status;
	struct live_gen *g;  /* oldest first; g[0] has no probes */
	int ng;
	struct live_entry *e;
	int ne, last_id;
	struct gpux_sess_name *names; /* g[0]'s, for every generation */
	uint64_t msgs_off;   /* of g[0]'s messages, as laid out here */
	struct dev_msgs msgs;
	struct sess_trust trust; /* of g[0]'s names and messages */
	struct map_bases bases; /* :clear */
};

/* The runtime's new messages on stderr, each distinct one once. */
void live_read_msgs(struct live *lv);

#endif
