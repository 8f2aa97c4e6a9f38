/* Between rt_live_graph.c (the tracked executable graphs) and
 * rt_graph_hooks.c (the program's graph calls that reach them). */
#ifndef GPUX_RT_LIVE_GRAPH_PRIV_H
#define GPUX_RT_LIVE_GRAPH_PRIV_H

#include "rt_hooks.h"

typedef CUDA_KERNEL_NODE_PARAMS_v2 kparams;

/* A kernel node of the clone the graph was instantiated from (or, after
 * an update, of the view): the program's function, for :top. */
struct knode {
	CUgraphNode node;
	const void *f;    /* the program's CUfunction or CUkernel */
	uint64_t threads;
	unsigned gen;     /* the generation it was set for (0: none) */
	bool swapped;     /* it runs an instrumented function */
	bool off;         /* disabled by the program */
};

struct gexec {
	CUgraphExec exec;
	CUgraph inst;     /* the clone it was instantiated from */
	CUgraph view;     /* after an update: a clone of the program's graph */
	CUcontext ctx;
	CUdevice dev;
	bool primary;     /* ctx is dev's primary context */
	unsigned gen;     /* with a view: the generation set as a whole */
	bool swapped;     /* with a view: it runs instrumented functions */
	bool untouched;
	struct knode *k;
	size_t nk;
	struct gexec *next;
};

/* Graph-level driver functions the runtime calls itself. */
struct rt_lg_cu {
	CUresult (*Clone)(CUgraph *, CUgraph);
	CUresult (*Destroy)(CUgraph);
	CUresult (*FindInClone)(CUgraphNode *, CUgraphNode, CUgraph);
	CUresult (*GetNodes)(CUgraph, CUgraphNode *, size_t *);
	CUresult (*NodeType)(CUgraphNode, CUgraphNodeType *);
	CUresult (*KGet)(CUgraphNode, kparams *);
	CUresult (*KSet)(CUgraphNode, const kparams *);
	/* optional */
	CUresult (*KSet1)(CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v1 *);
	CUresult (*NSet)(CUgraphNode, CUgraphNodeParams *);
	CUresult (*Child)(CUgraphNode, CUgraph *);
};
extern struct rt_lg_cu rt_graph_cu; /* resolved by rt_lg_clone_for */

/* Held around every hooked call on a tracked graph (before rt_lock,
 * never after). */
extern pthread_mutex_t rt_lg_lock;

/* What to instantiate in graph's place: a clone the runtime keeps, or
 * NULL (not a live session, or nothing it can do: graph itself). */
CUgraph rt_lg_clone_for(CUgraph graph, unsigned long long flags);
/* x, instantiated from clone: tracked from now on (false: not). */
bool rt_lg_track(CUgraphExec x, CUgraph clone);
/* x taken off the tracked ones (NULL: not tracked); then forgotten. */
struct gexec *rt_lg_take(CUgraphExec x);
void rt_lg_forget(struct gexec *e);

/* Under rt_lg_lock. After the program's successful update of x from
 * graph (its own call, its own answer): x runs graph's functions, the
 * view is a clone of graph. */
void rt_lg_updated(CUgraphExec x, CUgraph graph);
/* Before the program's call on x's node *n: *n becomes the clone's
 * node; after an update, a call that changes a node (!enabling) first
 * leaves the graph untouched. NULL: x is not tracked. */
struct gexec *rt_lg_node_call(CUgraphExec x, CUgraphNode *n, bool enabling);
/* Whether n (translated) is a kernel node of e's clone that the
 * runtime follows node by node. */
bool rt_lg_followed(struct gexec *e, CUgraphNode n);
/* After the program set kernel node n of e (rc: its answer; mirrored:
 * set on the clone too, which keeps what to set back): the node runs
 * the program's function until the next launch; when the clone could
 * not follow, the graph goes untouched, n kept as the program set it. */
void rt_lg_kernel_set(struct gexec *e, CUgraphNode n, CUresult rc, bool mirrored);
/* After the program enabled or disabled n: counted for :top or not. */
void rt_lg_set_enabled(struct gexec *e, CUgraphNode n, unsigned on);

#endif
