/* cuda:graph_launch: one event per replay of an executable graph, with
 * the nodes of the graph it was instantiated from, counted at its
 * instantiation (only while the session wants the event: nothing is
 * counted otherwise). A graph instantiated before then says 0 nodes. */
#include "rt_hooks.h"
#include "rt_host_priv.h"

#include <stdlib.h>

#define EXECS 4096u /* executable graphs remembered, a power of two */

struct exec_ent {
	CUgraphExec x; /* NULL: free; (CUgraphExec)1: a removed one */
	uint32_t nodes, kernels;
};
static struct exec_ent execs[EXECS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#define GONE ((CUgraphExec)(uintptr_t)1)

static uint32_t slot_of(CUgraphExec x)
{
	return (uint32_t)((uintptr_t)x * 0x9e3779b97f4a7c15ull >> 52) & (EXECS - 1);
}

void rt_graph_ev_instantiated(CUgraphExec x, CUgraph g)
{
	typedef CUresult (*nodes_fn)(CUgraph, CUgraphNode *, size_t *);
	typedef CUresult (*type_fn)(CUgraphNode, CUgraphNodeType *);
	static nodes_fn get_nodes;
	static type_fn get_type;
	if (!x || !rt_cev_ready() || !rt_cev_on(GPUX_CEV_GRAPH_LAUNCH))
		return;
	if (!get_nodes) {
		get_type = (type_fn)rt_cuda_sym("cuGraphNodeGetType");
		get_nodes = (nodes_fn)rt_cuda_sym("cuGraphGetNodes");
	}
	size_t n = 0;
	if (!get_nodes || get_nodes(g, NULL, &n) != CUDA_SUCCESS)
		return;
	uint32_t kernels = 0;
	CUgraphNode *v = n && get_type ? malloc(n * sizeof(*v)) : NULL;
	if (v && get_nodes(g, v, &n) == CUDA_SUCCESS)
		for (size_t i = 0; i < n; i++) {
			CUgraphNodeType t;
			if (get_type(v[i], &t) == CUDA_SUCCESS && t == CU_GRAPH_NODE_TYPE_KERNEL)
				kernels++;
		}
	free(v);
	pthread_mutex_lock(&lock);
	for (uint32_t i = 0, at = slot_of(x); i < EXECS; i++, at = (at + 1) & (EXECS - 1))
		if (!execs[at].x || execs[at].x == GONE || execs[at].x == x) {
			execs[at] = (struct exec_ent){ x, (uint32_t)n, kernels };
			break;
		}
	pthread_mutex_unlock(&lock);
}

void rt_graph_ev_destroyed(CUgraphExec x)
{
	pthread_mutex_lock(&lock);
	for (uint32_t i = 0, at = slot_of(x); i < EXECS && execs[at].x; i++, at = (at + 1) & (EXECS - 1))
		if (execs[at].x == x) {
			execs[at].x = GONE;
			break;
		}
	pthread_mutex_unlock(&lock);
}

void rt_graph_ev_launched(CUgraphExec x, CUstream s)
{
	struct gpux_cev_graph_launch c = { .graph = (uint64_t)(uintptr_t)x,
					   .stream = (uint64_t)(uintptr_t)s };
	pthread_mutex_lock(&lock);
	for (uint32_t i = 0, at = slot_of(x); i < EXECS && execs[at].x; i++, at = (at + 1) & (EXECS - 1))
		if (execs[at].x == x) {
			c.nodes = execs[at].nodes;
			c.kernels = execs[at].kernels;
			break;
		}
	pthread_mutex_unlock(&lock);
	rt_cev_emit(GPUX_CEV_GRAPH_LAUNCH, &c, sizeof c, NULL);
}
