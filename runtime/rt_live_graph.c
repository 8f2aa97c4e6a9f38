/* CUDA graphs in live sessions (rt_live.c): before a launch of an
 * executable graph, its kernel nodes are set to the current
 * generation's instrumented namesakes where the generation changed, and
 * before a generation's modules are unloaded they are set back to the
 * program's functions.
 *
 * The runtime instantiates a clone of the program's graph, which it owns:
 * the program may destroy its graph, and the clone's nodes name the
 * executable graph's nodes for as long as it lives. The program's own
 * node-level calls on the executable graph are translated to the clone's
 * nodes (cuGraphNodeFindInClone), and its kernel node changes are made
 * on the clone too, which so keeps the parameters to set back.
 *
 * Once the program updates the executable graph from another graph
 * (cuGraphExecUpdate), the driver pairs the nodes and they are no longer
 * known one by one: the runtime keeps a clone of that graph (the view)
 * and updates the executable graph from it as a whole, kernels swapped,
 * keeping the nodes the program disabled disabled. A node-level change
 * after that (other than enabling) makes the graph run untouched, as do
 * graphs for device launch and kernels inside child graphs (each said
 * once).
 *
 * Locks: rt_lg_lock is taken before rt_lock, never after (rt_live_fn and
 * rt_live_count take rt_lock); every hooked call on a tracked graph runs
 * under rt_lg_lock, so the runtime thread's restores never race the
 * program's calls. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt_live_graph_priv.h"

#include <stdlib.h>
#include <string.h>

pthread_mutex_t rt_lg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gexec *execs;

struct rt_lg_cu rt_graph_cu;

static bool ready(void)
{
	static int ok = -1;
	if (ok >= 0)
		return ok;
#define SYM(field, name) (*(void **)&rt_graph_cu.field = rt_cuda_sym(name))
	ok = SYM(Clone, "cuGraphClone") && SYM(Destroy, "cuGraphDestroy") &&
	     SYM(FindInClone, "cuGraphNodeFindInClone") && SYM(GetNodes, "cuGraphGetNodes") &&
	     SYM(NodeType, "cuGraphNodeGetType") && SYM(KGet, "cuGraphKernelNodeGetParams_v2") &&
	     SYM(KSet, "cuGraphKernelNodeSetParams_v2") && rt_cu_ready();
	SYM(KSet1, "cuGraphKernelNodeSetParams");
	SYM(NSet, "cuGraphNodeSetParams");
	SYM(Child, "cuGraphChildGraphNodeGetGraph");
#undef SYM
	return ok;
}

static void say_once(int *told, const char *what)
{
	if (!__atomic_fetch_add(told, 1, __ATOMIC_RELAXED))
		rt_warn("%s", what);
}

static int told_untouched, told_device, told_child, told_clone, told_swap;

static void swap_refused(void)
{
	say_once(&told_swap, "a graph's kernel node cannot run its instrumented namesake; it runs "
			     "untouched");
}

/* The nodes of graph (calloc'ed, *n of them), or NULL. */
static CUgraphNode *nodes_of(CUgraph graph, size_t *n)
{
	*n = 0;
	if (rt_graph_cu.GetNodes(graph, NULL, n) != CUDA_SUCCESS || !*n)
		return NULL;
	CUgraphNode *v = calloc(*n, sizeof(*v));
	if (v && rt_graph_cu.GetNodes(graph, v, n) != CUDA_SUCCESS) {
		free(v);
		v = NULL;
	}
	if (!v)
		*n = 0;
	return v;
}

static bool has_kernels(CUgraph graph, int depth)
{
	size_t n;
	CUgraphNode *v = nodes_of(graph, &n);
	bool any = false;
	for (size_t i = 0; i < n && !any; i++) {
		CUgraphNodeType t;
		CUgraph child;
		if (rt_graph_cu.NodeType(v[i], &t) != CUDA_SUCCESS)
			continue;
		if (t == CU_GRAPH_NODE_TYPE_KERNEL)
			any = true;
		else if (t == CU_GRAPH_NODE_TYPE_GRAPH && rt_graph_cu.Child && depth < 8 &&
			 rt_graph_cu.Child(v[i], &child) == CUDA_SUCCESS)
			any = has_kernels(child, depth + 1);
		else if (t == CU_GRAPH_NODE_TYPE_CONDITIONAL)
			any = true; /* its bodies are not looked into */
	}
	free(v);
	return any;
}

/* The program's kernel in p: its CUkernel if it gave one, else its
 * CUfunction. */
static const void *kernel_of(const kparams *p)
{
	return p->kern ? (const void *)p->kern : (const void *)p->func;
}

static bool node_info(struct knode *k)
{
	kparams p;
	if (rt_graph_cu.KGet(k->node, &p) != CUDA_SUCCESS)
		return false;
	k->f = kernel_of(&p);
	k->threads = (uint64_t)p.gridDimX * p.gridDimY * p.gridDimZ * p.blockDimX * p.blockDimY *
		     p.blockDimZ;
	return true;
}

/* e's kernel nodes: those of graph (its clone or its view). */
static bool collect(struct gexec *e, CUgraph graph)
{
	size_t n;
	CUgraphNode *v = nodes_of(graph, &n);
	struct knode *k = calloc(n ? n : 1, sizeof(*k));
	size_t nk = 0;
	bool ok = k && (v || !n);
	for (size_t i = 0; ok && i < n; i++) {
		CUgraphNodeType t;
		CUgraph child;
		if (rt_graph_cu.NodeType(v[i], &t) != CUDA_SUCCESS)
			continue;
		if (t == CU_GRAPH_NODE_TYPE_KERNEL) {
			k[nk].node = v[i];
			ok = node_info(&k[nk++]);
		} else if ((t == CU_GRAPH_NODE_TYPE_GRAPH && rt_graph_cu.Child &&
			    rt_graph_cu.Child(v[i], &child) == CUDA_SUCCESS && has_kernels(child, 1)) ||
			   t == CU_GRAPH_NODE_TYPE_CONDITIONAL) {
			say_once(&told_child, "kernels inside a graph's child graphs and conditional "
					      "nodes run untouched in a live session");
		}
	}
	free(v);
	if (!ok) {
		free(k);
		return false;
	}
	free(e->k);
	e->k = k;
	e->nk = nk;
	return true;
}

static struct gexec *find(CUgraphExec x)
{
	for (struct gexec *e = execs; e; e = e->next)
		if (e->exec == x)
			return e;
	return NULL;
}

static struct knode *knode_of(struct gexec *e, CUgraphNode n)
{
	for (size_t i = 0; i < e->nk; i++)
		if (e->k[i].node == n)
			return &e->k[i];
	return NULL;
}

/* The current generation's function for f: its instrumented namesake,
 * or f itself. */
static CUfunction target(const void *f)
{
	return rt_live_fn((CUfunction)f);
}

static void swap_params(kparams *p, CUfunction to)
{
	p->func = to;
	p->kern = NULL;
	p->ctx = NULL;
}

typedef CUresult (*kset_exec_fn)(CUgraphExec, CUgraphNode, const kparams *);

/* Sets e's node k to the function of generation gen (0: the program's);
 * no call when it runs the program's function and is to go on so. */
static void set_node(struct gexec *e, struct knode *k, unsigned gen)
{
	kset_exec_fn set = REAL(H_G_KSET2, "cuGraphExecKernelNodeSetParams_v2", kset_exec_fn);
	CUfunction to = gen ? target(k->f) : (CUfunction)k->f;
	kparams p;
	k->gen = gen;
	if ((to == (CUfunction)k->f && !k->swapped) || !set ||
	    rt_graph_cu.KGet(k->node, &p) != CUDA_SUCCESS)
		return;
	if (to != (CUfunction)k->f)
		swap_params(&p, to);
	CUresult rc = set(e->exec, k->node, &p);
	if (rc == CUDA_SUCCESS) {
		k->swapped = to != (CUfunction)k->f;
		return;
	}
	if (to != (CUfunction)k->f) {
		swap_refused();
		if (k->swapped && rt_graph_cu.KGet(k->node, &p) == CUDA_SUCCESS &&
		    set(e->exec, k->node, &p) == CUDA_SUCCESS)
			k->swapped = false;
	}
}

static CUresult update_from(CUgraphExec x, CUgraph graph)
{
	typedef CUresult (*up2_fn)(CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo *);
	typedef CUresult (*up1_fn)(CUgraphExec, CUgraph, CUgraphNode *, CUgraphExecUpdateResult *);
	up2_fn up2 = REAL(H_G_UPDATE2, "cuGraphExecUpdate_v2", up2_fn);
	if (up2) {
		CUgraphExecUpdateResultInfo info;
		return up2(x, graph, &info);
	}
	up1_fn up1 = REAL(H_G_UPDATE, "cuGraphExecUpdate", up1_fn);
	CUgraphNode bad;
	CUgraphExecUpdateResult r;
	return up1 ? up1(x, graph, &bad, &r) : NO_CUDA;
}

/* e (with a view) updated as a whole to generation gen (0: the
 * program's functions); the nodes the program disabled stay disabled. */
static CUresult update_whole(struct gexec *e, unsigned gen)
{
	typedef CUresult (*en_get_fn)(CUgraphExec, CUgraphNode, unsigned *);
	typedef CUresult (*en_set_fn)(CUgraphExec, CUgraphNode, unsigned);
	en_get_fn get = REAL(H_G_ENABLED, "cuGraphNodeGetEnabled", en_get_fn);
	en_set_fn set = REAL(H_G_ENABLE, "cuGraphNodeSetEnabled", en_set_fn);
	CUgraph src = e->view, tmp = NULL;
	if (gen) {
		if (rt_graph_cu.Clone(&tmp, e->view) != CUDA_SUCCESS)
			return CUDA_ERROR_OUT_OF_MEMORY;
		size_t n;
		CUgraphNode *v = nodes_of(tmp, &n);
		for (size_t i = 0; i < n; i++) {
			CUgraphNodeType t;
			kparams p;
			if (rt_graph_cu.NodeType(v[i], &t) == CUDA_SUCCESS && t == CU_GRAPH_NODE_TYPE_KERNEL &&
			    rt_graph_cu.KGet(v[i], &p) == CUDA_SUCCESS) {
				const void *f = kernel_of(&p);
				CUfunction to = target(f);
				if (to != (CUfunction)f) {
					swap_params(&p, to);
					rt_graph_cu.KSet(v[i], &p);
				}
			}
		}
		free(v);
		src = tmp;
	}
	size_t n;
	CUgraphNode *v = nodes_of(e->inst, &n);
	bool *off = calloc(n ? n : 1, sizeof(*off));
	for (size_t i = 0; off && get && i < n; i++) {
		unsigned on = 1;
		off[i] = get(e->exec, v[i], &on) == CUDA_SUCCESS && !on;
	}
	CUresult rc = update_from(e->exec, src);
	for (size_t i = 0; off && set && i < n; i++)
		if (off[i])
			set(e->exec, v[i], 0);
	free(off);
	free(v);
	if (tmp)
		rt_graph_cu.Destroy(tmp);
	if (rc == CUDA_SUCCESS) {
		e->gen = gen;
		e->swapped = gen != 0;
	}
	return rc;
}

/* e back to the program's functions, and left so from now on (said
 * once); skip: a node the program has just set, kept as it is. */
static void go_untouched(struct gexec *e, CUgraphNode skip)
{
	if (e->untouched)
		return;
	e->untouched = true;
	say_once(&told_untouched, "a graph changed node by node after cuGraphExecUpdate runs "
				  "untouched in a live session");
	if (e->view) {
		if (e->swapped)
			update_whole(e, 0);
		return;
	}
	for (size_t i = 0; i < e->nk; i++)
		if (e->k[i].swapped && e->k[i].node != skip)
			set_node(e, &e->k[i], 0);
}

void rt_lg_forget(struct gexec *e)
{
	if (e->view)
		rt_graph_cu.Destroy(e->view);
	rt_graph_cu.Destroy(e->inst);
	free(e->k);
	free(e);
}

/* ---------------- what rt_entry.c and rt_live.c call ---------------- */

/* With a view: whether any of its kernels has an instrumented namesake
 * in generation gen. */
static bool view_swaps(struct gexec *e)
{
	for (size_t i = 0; i < e->nk; i++)
		if (target(e->k[i].f) != (CUfunction)e->k[i].f)
			return true;
	return false;
}

void rt_live_graph_prepare(CUgraphExec x)
{
	if (!rt_live())
		return;
	pthread_mutex_lock(&rt_lg_lock);
	struct gexec *e = find(x);
	unsigned gen = rt_live_gen();
	if (e && !e->untouched && e->view && e->gen != gen) {
		if (!view_swaps(e) && !e->swapped)
			e->gen = gen;
		else if (update_whole(e, gen) != CUDA_SUCCESS) {
			swap_refused();
			go_untouched(e, NULL);
		}
	}
	for (size_t i = 0; e && !e->untouched && !e->view && i < e->nk; i++)
		if (e->k[i].gen != gen)
			set_node(e, &e->k[i], gen);
	pthread_mutex_unlock(&rt_lg_lock);
}

void rt_live_graph_launched(CUgraphExec x)
{
	if (!rt_live())
		return;
	pthread_mutex_lock(&rt_lg_lock);
	struct gexec *e = find(x);
	for (size_t i = 0; e && i < e->nk; i++)
		if (!e->k[i].off)
			rt_live_count((CUfunction)e->k[i].f, e->k[i].threads);
	pthread_mutex_unlock(&rt_lg_lock);
}

void rt_live_graph_restore(void)
{
	if (!rt_live())
		return;
	pthread_mutex_lock(&rt_lg_lock);
	if (!execs) { /* nothing to restore, and maybe no driver yet */
		pthread_mutex_unlock(&rt_lg_lock);
		return;
	}
	CUcontext prev = NULL;
	rt_cu.CtxGetCurrent(&prev);
	for (struct gexec *e = execs; e; e = e->next) {
		if (e->untouched)
			continue;
		if (e->ctx)
			rt_cu.CtxSetCurrent(e->ctx);
		if (e->view) {
			if (e->swapped && update_whole(e, 0) != CUDA_SUCCESS)
				go_untouched(e, NULL);
			e->gen = 0;
			continue;
		}
		for (size_t i = 0; i < e->nk; i++)
			set_node(e, &e->k[i], 0);
	}
	rt_cu.CtxSetCurrent(prev);
	pthread_mutex_unlock(&rt_lg_lock);
}

void rt_live_graph_ctx_gone(CUcontext ctx, int dev)
{
	if (!rt_live())
		return;
	pthread_mutex_lock(&rt_lg_lock);
	for (struct gexec **p = &execs; *p;) {
		struct gexec *e = *p;
		if (ctx ? e->ctx == ctx : (e->primary && e->dev == dev)) {
			*p = e->next;
			rt_lg_forget(e);
		} else {
			p = &e->next;
		}
	}
	pthread_mutex_unlock(&rt_lg_lock);
}

CUgraph rt_lg_clone_for(CUgraph graph, unsigned long long flags)
{
	if (!rt_live() || !graph || !ready())
		return NULL;
	if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) {
		say_once(&told_device, "graphs for device launch run untouched in a live session");
		return NULL;
	}
	CUgraph c;
	if (rt_graph_cu.Clone(&c, graph) != CUDA_SUCCESS) {
		say_once(&told_clone, "a graph that cannot be cloned (memory nodes) runs untouched "
				      "in a live session");
		return NULL;
	}
	return c;
}

bool rt_lg_track(CUgraphExec x, CUgraph clone)
{
	struct gexec *e = calloc(1, sizeof(*e));
	if (!e)
		return false;
	e->exec = x;
	e->inst = clone;
	rt_cu.CtxGetCurrent(&e->ctx);
	e->primary = rt_cu.CtxGetDevice(&e->dev) == CUDA_SUCCESS && rt_is_primary(e->ctx, e->dev);
	if (!collect(e, clone)) {
		free(e);
		return false;
	}
	pthread_mutex_lock(&rt_lg_lock);
	e->next = execs;
	execs = e;
	pthread_mutex_unlock(&rt_lg_lock);
	return true;
}

void rt_lg_updated(CUgraphExec x, CUgraph graph)
{
	CUgraph v;
	struct gexec *e = find(x);
	if (!e || e->untouched)
		return;
	struct gexec tmp = { .k = NULL };
	bool cloned = rt_graph_cu.Clone(&v, graph) == CUDA_SUCCESS;
	if (cloned && collect(&tmp, v)) {
		if (e->view)
			rt_graph_cu.Destroy(e->view);
		e->view = v;
		e->gen = 0;
		e->swapped = false; /* the update set the program's functions */
		free(e->k);
		e->k = tmp.k;
		e->nk = tmp.nk;
		return;
	}
	if (cloned)
		rt_graph_cu.Destroy(v);
	e->untouched = true;
	say_once(&told_clone, "a graph that cannot be cloned (memory nodes) runs untouched in a "
			      "live session");
}

/* ---------------- the program's node-level calls ---------------- */

/* Under rt_lg_lock, before the program's call on x's node *n: *n becomes the
 * clone's node; after an update, a call that changes a node (!enabling)
 * first leaves the graph untouched. */
struct gexec *rt_lg_node_call(CUgraphExec x, CUgraphNode *n, bool enabling)
{
	struct gexec *e = find(x);
	CUgraphNode c;
	if (!e)
		return NULL;
	if (rt_graph_cu.FindInClone(&c, *n, e->inst) == CUDA_SUCCESS)
		*n = c;
	if (e->view && !enabling)
		go_untouched(e, NULL);
	return e;
}

void rt_lg_kernel_set(struct gexec *e, CUgraphNode n, CUresult rc, bool mirrored)
{
	struct knode *k = e && !e->view && !e->untouched ? knode_of(e, n) : NULL;
	if (rc != CUDA_SUCCESS || !k)
		return;
	if (!mirrored || !node_info(k)) {
		go_untouched(e, n);
		return;
	}
	k->gen = 0;
	k->swapped = false;
}

struct gexec *rt_lg_take(CUgraphExec x)
{
	struct gexec *e = NULL;
	pthread_mutex_lock(&rt_lg_lock);
	for (struct gexec **p = &execs; *p; p = &(*p)->next)
		if ((*p)->exec == x) {
			e = *p;
			*p = e->next;
			break;
		}
	pthread_mutex_unlock(&rt_lg_lock);
	return e;
}

void rt_lg_set_enabled(struct gexec *e, CUgraphNode n, unsigned on)
{
	struct knode *k = e && !e->view ? knode_of(e, n) : NULL;
	if (k)
		k->off = !on;
}

bool rt_lg_followed(struct gexec *e, CUgraphNode n)
{
	return e && !e->view && !e->untouched && knode_of(e, n);
}
