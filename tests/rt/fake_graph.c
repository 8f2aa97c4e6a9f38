/* The fake libcuda's graphs: kernel nodes only (dependencies are
 * accepted and ignored: nodes run in the order they were added), stream
 * capture of cuLaunchKernel, executable graphs that keep their nodes'
 * parameters and enabled states, updates that pair nodes by position.
 * A node keeps the caller's kernelParams pointer (the driver copies the
 * arguments; the test programs keep theirs alive). Handles are checked
 * against the live ones, so a stale one is CUDA_ERROR_INVALID_HANDLE,
 * and an executable graph's node must be named by a node of the graph
 * it was instantiated from, as the driver requires. */
#include "fake_cuda.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES 64
#define MAX_OBJS 256
#define MAX_CAPTURES 8

struct fk_graph;
struct fk_node {
	struct fk_graph *g;
	CUDA_KERNEL_NODE_PARAMS_v2 k;
	struct fk_node *from; /* the node it was cloned from */
};
struct fk_graph {
	struct fk_node *nodes[MAX_NODES];
	int n;
};
struct fk_exec {
	struct fk_graph *g; /* the graph it was instantiated from */
	int n;
	struct {
		struct fk_node *id;
		CUDA_KERNEL_NODE_PARAMS_v2 k;
		bool off;
	} nodes[MAX_NODES];
};

static pthread_mutex_t glock = PTHREAD_MUTEX_INITIALIZER;
static void *objs[MAX_OBJS]; /* live graphs and executable graphs */
static struct {
	CUstream s;
	struct fk_graph *g;
} caps[MAX_CAPTURES];

static bool live_obj(const void *p)
{
	for (int i = 0; p && i < MAX_OBJS; i++)
		if (objs[i] == p)
			return true;
	return false;
}

static void *obj_new(size_t size)
{
	for (int i = 0; i < MAX_OBJS; i++)
		if (!objs[i])
			return objs[i] = calloc(1, size);
	return NULL;
}

static void obj_free(void *p)
{
	for (int i = 0; i < MAX_OBJS; i++)
		if (objs[i] == p)
			objs[i] = NULL;
	free(p);
}

static struct fk_graph *graph_of(CUgraph h)
{
	return live_obj(h) ? (struct fk_graph *)h : NULL;
}

static struct fk_node *node_of(CUgraphNode h)
{
	for (int i = 0; h && i < MAX_OBJS; i++) {
		struct fk_graph *g = objs[i];
		for (int j = 0; g && j < MAX_NODES; j++)
			if (j < g->n && g->nodes[j] == (struct fk_node *)h)
				return g->nodes[j];
	}
	return NULL;
}

static struct fk_node *add_node(struct fk_graph *g, const CUDA_KERNEL_NODE_PARAMS_v2 *k)
{
	if (g->n == MAX_NODES)
		return NULL;
	struct fk_node *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->g = g;
	n->k = *k;
	g->nodes[g->n++] = n;
	return n;
}

static void graph_free(struct fk_graph *g)
{
	for (int i = 0; i < g->n; i++)
		free(g->nodes[i]);
	obj_free(g);
}

#define LOCKED(expr)                                   \
	do {                                           \
		pthread_mutex_lock(&glock);            \
		CUresult rc_ = (expr);                 \
		pthread_mutex_unlock(&glock);          \
		return rc_;                            \
	} while (0)

static CUresult create(CUgraph *out)
{
	struct fk_graph *g = obj_new(sizeof(struct fk_graph));
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*out = (CUgraph)g;
	return CUDA_SUCCESS;
}

CUresult cuGraphCreate(CUgraph *g, unsigned flags)
{
	(void)flags;
	LOCKED(create(g));
}

static CUresult destroy(CUgraph h)
{
	struct fk_graph *g = graph_of(h);
	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	graph_free(g);
	return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph g)
{
	LOCKED(destroy(g));
}

static CUresult add_kernel(CUgraphNode *out, CUgraph h, const CUDA_KERNEL_NODE_PARAMS_v2 *k)
{
	struct fk_graph *g = graph_of(h);
	struct fk_node *n = g && k ? add_node(g, k) : NULL;
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	*out = (CUgraphNode)n;
	return CUDA_SUCCESS;
}

CUresult cuGraphAddKernelNode_v2(CUgraphNode *n, CUgraph g, const CUgraphNode *deps, size_t nd,
				 const CUDA_KERNEL_NODE_PARAMS_v2 *k)
{
	(void)deps, (void)nd;
	LOCKED(add_kernel(n, g, k));
}

static CUresult kget(CUgraphNode h, CUDA_KERNEL_NODE_PARAMS_v2 *k)
{
	struct fk_node *n = node_of(h);
	if (!n || !k)
		return CUDA_ERROR_INVALID_VALUE;
	*k = n->k;
	return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS_v2 *k)
{
	LOCKED(kget(n, k));
}

static CUresult kset(CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS_v2 *k)
{
	struct fk_node *n = node_of(h);
	if (!n || !k)
		return CUDA_ERROR_INVALID_VALUE;
	n->k = *k;
	return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v2 *k)
{
	LOCKED(kset(n, k));
}

static CUresult get_nodes(CUgraph h, CUgraphNode *v, size_t *n)
{
	struct fk_graph *g = graph_of(h);
	if (!g || !n)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; v && i < g->n && (size_t)i < *n; i++)
		v[i] = (CUgraphNode)g->nodes[i];
	*n = (size_t)g->n;
	return CUDA_SUCCESS;
}

CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *v, size_t *n)
{
	LOCKED(get_nodes(g, v, n));
}

static CUresult node_type(CUgraphNode h, CUgraphNodeType *t)
{
	if (!node_of(h))
		return CUDA_ERROR_INVALID_VALUE;
	*t = CU_GRAPH_NODE_TYPE_KERNEL;
	return CUDA_SUCCESS;
}

CUresult cuGraphNodeGetType(CUgraphNode n, CUgraphNodeType *t)
{
	LOCKED(node_type(n, t));
}

static CUresult clone_graph(CUgraph *out, CUgraph h)
{
	struct fk_graph *g = graph_of(h), *c = NULL;
	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult rc = create((CUgraph *)&c);
	for (int i = 0; rc == CUDA_SUCCESS && i < g->n; i++) {
		struct fk_node *n = add_node(c, &g->nodes[i]->k);
		if (n)
			n->from = g->nodes[i];
		else
			rc = CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (rc == CUDA_SUCCESS)
		*out = (CUgraph)c;
	else if (c)
		graph_free(c);
	return rc;
}

CUresult cuGraphClone(CUgraph *c, CUgraph g)
{
	LOCKED(clone_graph(c, g));
}

static CUresult find_in_clone(CUgraphNode *out, CUgraphNode orig, CUgraph h)
{
	struct fk_graph *c = graph_of(h);
	for (int i = 0; c && i < c->n; i++)
		if (c->nodes[i]->from == (struct fk_node *)orig) {
			*out = (CUgraphNode)c->nodes[i];
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphNodeFindInClone(CUgraphNode *n, CUgraphNode orig, CUgraph c)
{
	LOCKED(find_in_clone(n, orig, c));
}

static CUresult instantiate(CUgraphExec *out, CUgraph h)
{
	struct fk_graph *g = graph_of(h);
	if (!g || !out)
		return CUDA_ERROR_INVALID_VALUE;
	struct fk_exec *x = obj_new(sizeof(struct fk_exec));
	if (!x)
		return CUDA_ERROR_OUT_OF_MEMORY;
	x->g = g;
	x->n = g->n;
	for (int i = 0; i < g->n; i++) {
		x->nodes[i].id = g->nodes[i];
		x->nodes[i].k = g->nodes[i]->k;
	}
	*out = (CUgraphExec)x;
	flog("cuGraphInstantiateWithFlags nodes=%d", g->n);
	return CUDA_SUCCESS;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *x, CUgraph g, unsigned long long flags)
{
	(void)flags;
	LOCKED(instantiate(x, g));
}

/* x's slot for node h, which must be one of the graph x came from. */
static int slot(struct fk_exec *x, CUgraphNode h)
{
	for (int i = 0; x && i < x->n; i++)
		if (x->nodes[i].id == (struct fk_node *)h)
			return i;
	return -1;
}

static struct fk_exec *exec_of(CUgraphExec h)
{
	return live_obj(h) ? (struct fk_exec *)h : NULL;
}

static CUresult exec_kset(CUgraphExec h, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v2 *k)
{
	struct fk_exec *x = exec_of(h);
	int i = slot(x, n);
	if (i < 0 || !k)
		return CUDA_ERROR_INVALID_VALUE;
	x->nodes[i].k = *k;
	return CUDA_SUCCESS;
}

CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec x, CUgraphNode n,
					   const CUDA_KERNEL_NODE_PARAMS_v2 *k)
{
	LOCKED(exec_kset(x, n, k));
}

static CUresult set_enabled(CUgraphExec h, CUgraphNode n, unsigned on, unsigned *get)
{
	struct fk_exec *x = exec_of(h);
	int i = slot(x, n);
	if (i < 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (get)
		*get = !x->nodes[i].off;
	else
		x->nodes[i].off = !on;
	return CUDA_SUCCESS;
}

CUresult cuGraphNodeSetEnabled(CUgraphExec x, CUgraphNode n, unsigned on)
{
	LOCKED(set_enabled(x, n, on, NULL));
}

CUresult cuGraphNodeGetEnabled(CUgraphExec x, CUgraphNode n, unsigned *on)
{
	LOCKED(set_enabled(x, n, 0, on));
}

/* Nodes paired by position; the enabled states stay. */
static CUresult update(CUgraphExec h, CUgraph hg, CUgraphExecUpdateResultInfo *info)
{
	struct fk_exec *x = exec_of(h);
	struct fk_graph *g = graph_of(hg);
	if (!x || !g)
		return CUDA_ERROR_INVALID_VALUE;
	if (info)
		memset(info, 0, sizeof(*info));
	if (g->n != x->n) {
		if (info)
			info->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
		return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	}
	for (int i = 0; i < g->n; i++)
		x->nodes[i].k = g->nodes[i]->k;
	if (info)
		info->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
	flog("cuGraphExecUpdate_v2 nodes=%d", g->n);
	return CUDA_SUCCESS;
}

CUresult cuGraphExecUpdate_v2(CUgraphExec x, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
	LOCKED(update(x, g, info));
}

CUresult cuGraphLaunch(CUgraphExec h, CUstream s)
{
	(void)s;
	pthread_mutex_lock(&glock);
	struct fk_exec *x = exec_of(h), copy;
	if (x)
		copy = *x;
	pthread_mutex_unlock(&glock);
	if (!x)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < copy.n; i++) {
		const CUDA_KERNEL_NODE_PARAMS_v2 *k = &copy.nodes[i].k;
		if (copy.nodes[i].off)
			continue;
		CUfunction f = k->func ? k->func : (CUfunction)k->kern;
		CUresult rc = fk_launch(f, k->gridDimX, k->gridDimY, k->gridDimZ, k->blockDimX,
					k->blockDimY, k->blockDimZ, k->kernelParams, "cuGraphLaunch");
		if (rc != CUDA_SUCCESS)
			return rc;
	}
	return CUDA_SUCCESS;
}

static CUresult exec_destroy(CUgraphExec h)
{
	struct fk_exec *x = exec_of(h);
	if (!x)
		return CUDA_ERROR_INVALID_VALUE;
	obj_free(x);
	return CUDA_SUCCESS;
}

CUresult cuGraphExecDestroy(CUgraphExec x)
{
	LOCKED(exec_destroy(x));
}

/* ---- stream capture ---- */

static int cap_slot(CUstream s)
{
	for (int i = 0; s && i < MAX_CAPTURES; i++)
		if (caps[i].s == s)
			return i;
	return -1;
}

bool fk_capturing(CUstream s)
{
	pthread_mutex_lock(&glock);
	bool on = cap_slot(s) >= 0;
	pthread_mutex_unlock(&glock);
	return on;
}

static CUresult begin(CUstream s)
{
	if (!s || cap_slot(s) >= 0)
		return CUDA_ERROR_ILLEGAL_STATE;
	int i;
	for (i = 0; i < MAX_CAPTURES && caps[i].s; i++)
		;
	if (i == MAX_CAPTURES)
		return CUDA_ERROR_OUT_OF_MEMORY;
	CUgraph g;
	CUresult rc = create(&g);
	if (rc == CUDA_SUCCESS) {
		caps[i].s = s;
		caps[i].g = (struct fk_graph *)g;
	}
	return rc;
}

CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
	(void)mode;
	LOCKED(begin(s));
}

static CUresult end(CUstream s, CUgraph *out)
{
	int i = cap_slot(s);
	if (i < 0)
		return CUDA_ERROR_ILLEGAL_STATE;
	*out = (CUgraph)caps[i].g;
	caps[i].s = NULL;
	caps[i].g = NULL;
	return CUDA_SUCCESS;
}

CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
	LOCKED(end(s, g));
}

bool fk_captured(CUstream s, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		 unsigned by, unsigned bz, unsigned shm, void **params)
{
	pthread_mutex_lock(&glock);
	int i = cap_slot(s);
	if (i >= 0) {
		CUDA_KERNEL_NODE_PARAMS_v2 k = { .func = f, .gridDimX = gx, .gridDimY = gy,
						 .gridDimZ = gz, .blockDimX = bx, .blockDimY = by,
						 .blockDimZ = bz, .sharedMemBytes = shm,
						 .kernelParams = params };
		add_node(caps[i].g, &k);
	}
	pthread_mutex_unlock(&glock);
	return i >= 0;
}
