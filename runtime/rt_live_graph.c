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
 * Locks: glock is taken before rt_lock, never after (rt_live_fn and
 * rt_live_count take rt_lock); every hooked call on a tracked graph runs
 * under glock, so the runtime thread's restores never race the
 * program's calls. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt_hooks.h"

#include <stdlib.h>
#include <string.h>

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

static pthread_mutex_t glock = PTHREAD_MUTEX_INITIALIZER;
static struct gexec *execs;

/* Graph-level driver functions the runtime calls itself. */
static struct {
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
} gcu;

static bool ready(void)
{
	static int ok = -1;
	if (ok >= 0)
		return ok;
#define SYM(field, name) (*(void **)&gcu.field = rt_cuda_sym(name))
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

/* The nodes of graph (calloc'ed, *n of them), or NULL. */
static CUgraphNode *nodes_of(CUgraph graph, size_t *n)
{
	*n = 0;
	if (gcu.GetNodes(graph, NULL, n) != CUDA_SUCCESS || !*n)
		return NULL;
	CUgraphNode *v = calloc(*n, sizeof(*v));
	if (v && gcu.GetNodes(graph, v, n) != CUDA_SUCCESS) {
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
		if (gcu.NodeType(v[i], &t) != CUDA_SUCCESS)
			continue;
		if (t == CU_GRAPH_NODE_TYPE_KERNEL)
			any = true;
		else if (t == CU_GRAPH_NODE_TYPE_GRAPH && gcu.Child && depth < 8 &&
			 gcu.Child(v[i], &child) == CUDA_SUCCESS)
			any = has_kernels(child, depth + 1);
		else if (t == CU_GRAPH_NODE_TYPE_CONDITIONAL)
			any = true; /* its bodies are not looked into */
	}
	free(v);
	return any;
}

static bool node_info(struct knode *k)
{
	kparams p;
	if (gcu.KGet(k->node, &p) != CUDA_SUCCESS)
		return false;
	k->f = p.kern ? (const void *)p.kern : (const void *)p.func;
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
		if (gcu.NodeType(v[i], &t) != CUDA_SUCCESS)
			continue;
		if (t == CU_GRAPH_NODE_TYPE_KERNEL) {
			k[nk].node = v[i];
			ok = node_info(&k[nk++]);
		} else if ((t == CU_GRAPH_NODE_TYPE_GRAPH && gcu.Child &&
			    gcu.Child(v[i], &child) == CUDA_SUCCESS && has_kernels(child, 1)) ||
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
	    gcu.KGet(k->node, &p) != CUDA_SUCCESS)
		return;
	if (to != (CUfunction)k->f)
		swap_params(&p, to);
	CUresult rc = set(e->exec, k->node, &p);
	if (rc == CUDA_SUCCESS) {
		k->swapped = to != (CUfunction)k->f;
		return;
	}
	if (to != (CUfunction)k->f) {
		say_once(&told_swap, "a graph's kernel node cannot run its instrumented namesake; "
				     "it runs untouched");
		if (k->swapped && gcu.KGet(k->node, &p) == CUDA_SUCCESS &&
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
		if (gcu.Clone(&tmp, e->view) != CUDA_SUCCESS)
			return CUDA_ERROR_OUT_OF_MEMORY;
		size_t n;
		CUgraphNode *v = nodes_of(tmp, &n);
		for (size_t i = 0; i < n; i++) {
			CUgraphNodeType t;
			kparams p;
			if (gcu.NodeType(v[i], &t) == CUDA_SUCCESS && t == CU_GRAPH_NODE_TYPE_KERNEL &&
			    gcu.KGet(v[i], &p) == CUDA_SUCCESS) {
				const void *f = p.kern ? (const void *)p.kern : (const void *)p.func;
				CUfunction to = target(f);
				if (to != (CUfunction)f) {
					swap_params(&p, to);
					gcu.KSet(v[i], &p);
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
		gcu.Destroy(tmp);
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

static void forget(struct gexec *e)
{
	if (e->view)
		gcu.Destroy(e->view);
	gcu.Destroy(e->inst);
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
	pthread_mutex_lock(&glock);
	struct gexec *e = find(x);
	unsigned gen = rt_live_gen();
	if (e && !e->untouched && e->view && e->gen != gen) {
		if (!view_swaps(e) && !e->swapped)
			e->gen = gen;
		else if (update_whole(e, gen) != CUDA_SUCCESS) {
			say_once(&told_swap, "a graph's kernel node cannot run its instrumented "
					     "namesake; it runs untouched");
			go_untouched(e, NULL);
		}
	}
	for (size_t i = 0; e && !e->untouched && !e->view && i < e->nk; i++)
		if (e->k[i].gen != gen)
			set_node(e, &e->k[i], gen);
	pthread_mutex_unlock(&glock);
}

void rt_live_graph_launched(CUgraphExec x)
{
	if (!rt_live())
		return;
	pthread_mutex_lock(&glock);
	struct gexec *e = find(x);
	for (size_t i = 0; e && i < e->nk; i++)
		if (!e->k[i].off)
			rt_live_count((CUfunction)e->k[i].f, e->k[i].threads);
	pthread_mutex_unlock(&glock);
}

void rt_live_graph_restore(void)
{
	if (!rt_live())
		return;
	pthread_mutex_lock(&glock);
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
	pthread_mutex_unlock(&glock);
}

void rt_live_graph_ctx_gone(CUcontext ctx, int dev)
{
	if (!rt_live())
		return;
	pthread_mutex_lock(&glock);
	for (struct gexec **p = &execs; *p;) {
		struct gexec *e = *p;
		if (ctx ? e->ctx == ctx : (e->primary && e->dev == dev)) {
			*p = e->next;
			forget(e);
		} else {
			p = &e->next;
		}
	}
	pthread_mutex_unlock(&glock);
}

/* ---------------- instantiation ---------------- */

/* What to instantiate in graph's place: a clone the runtime keeps, or
 * NULL (not a live session, nothing it can do: graph itself). */
static CUgraph clone_for(CUgraph graph, unsigned long long flags)
{
	if (!rt_live() || !graph || !ready())
		return NULL;
	if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) {
		say_once(&told_device, "graphs for device launch run untouched in a live session");
		return NULL;
	}
	CUgraph c;
	if (gcu.Clone(&c, graph) != CUDA_SUCCESS) {
		say_once(&told_clone, "a graph that cannot be cloned (memory nodes) runs untouched "
				      "in a live session");
		return NULL;
	}
	return c;
}

/* x, instantiated from clone: tracked from now on (false: not). */
static bool track(CUgraphExec x, CUgraph clone)
{
	struct gexec *e = calloc(1, sizeof(*e));
	if (!e)
		return false;
	e->exec = x;
	e->inst = clone;
	rt_cu.CtxGetCurrent(&e->ctx);
	unsigned flags;
	int active = 0;
	CUcontext prim = NULL;
	if (rt_cu.CtxGetDevice(&e->dev) == CUDA_SUCCESS &&
	    rt_cu.DevicePrimaryCtxGetState(e->dev, &flags, &active) == CUDA_SUCCESS && active &&
	    rt_cu.DevicePrimaryCtxRetain(&prim, e->dev) == CUDA_SUCCESS) {
		e->primary = prim == e->ctx;
		rt_cu.DevicePrimaryCtxRelease(e->dev);
	}
	if (!collect(e, clone)) {
		free(e);
		return false;
	}
	pthread_mutex_lock(&glock);
	e->next = execs;
	execs = e;
	pthread_mutex_unlock(&glock);
	return true;
}

/* The instantiation hooks: the clone first; if that fails (or cannot be
 * tracked), the program's graph, which answers with its own errors. */
#define INSTANTIATE(FN, X, GRAPH, FLAGS, ...)                                          \
	do {                                                                           \
		CUgraph c_ = clone_for(GRAPH, FLAGS);                                  \
		if (c_) {                                                              \
			CUresult rc_ = FN(X, c_, __VA_ARGS__);                         \
			if (rc_ == CUDA_SUCCESS && track(*(X), c_))                    \
				return rc_;                                            \
			if (rc_ == CUDA_SUCCESS) {                                     \
				typedef CUresult (*xd_fn)(CUgraphExec);                \
				xd_fn xd_ = REAL(H_G_EXEC_DESTROY, "cuGraphExecDestroy", \
						 xd_fn);                               \
				if (xd_)                                               \
					xd_(*(X));                                     \
			}                                                              \
			gcu.Destroy(c_);                                               \
		}                                                                      \
		return FN(X, GRAPH, __VA_ARGS__);                                      \
	} while (0)

typedef CUresult (*inst_log_fn)(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);
typedef CUresult (*inst_fl_fn)(CUgraphExec *, CUgraph, unsigned long long);
typedef CUresult (*inst_par_fn)(CUgraphExec *, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *);

CUresult gpux_cuGraphInstantiate(CUgraphExec *x, CUgraph graph, CUgraphNode *bad, char *log,
				 size_t n) __asm__("cuGraphInstantiate");
CUresult gpux_cuGraphInstantiate(CUgraphExec *x, CUgraph graph, CUgraphNode *bad, char *log,
				 size_t n)
{
	inst_log_fn fn = REAL(H_G_INST, "cuGraphInstantiate", inst_log_fn);
	if (!fn)
		return NO_CUDA;
	INSTANTIATE(fn, x, graph, 0, bad, log, n);
}

CUresult cuGraphInstantiate_v2(CUgraphExec *x, CUgraph graph, CUgraphNode *bad, char *log,
			       size_t n);
CUresult cuGraphInstantiate_v2(CUgraphExec *x, CUgraph graph, CUgraphNode *bad, char *log,
			       size_t n)
{
	inst_log_fn fn = REAL(H_G_INST2, "cuGraphInstantiate_v2", inst_log_fn);
	if (!fn)
		return NO_CUDA;
	INSTANTIATE(fn, x, graph, 0, bad, log, n);
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *x, CUgraph graph, unsigned long long fl)
{
	inst_fl_fn fn = REAL(H_G_INST_FL, "cuGraphInstantiateWithFlags", inst_fl_fn);
	if (!fn)
		return NO_CUDA;
	INSTANTIATE(fn, x, graph, fl, fl);
}

CUresult cuGraphInstantiateWithParams(CUgraphExec *x, CUgraph graph,
				      CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	inst_par_fn fn = REAL(H_G_INST_PAR, "cuGraphInstantiateWithParams", inst_par_fn);
	if (!fn)
		return NO_CUDA;
	INSTANTIATE(fn, x, graph, p ? p->flags : 0, p);
}

CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *x, CUgraph graph,
					   CUDA_GRAPH_INSTANTIATE_PARAMS *p);
CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *x, CUgraph graph,
					   CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	inst_par_fn fn = REAL(H_G_INST_PAR_PT, "cuGraphInstantiateWithParams_ptsz", inst_par_fn);
	if (!fn)
		return NO_CUDA;
	INSTANTIATE(fn, x, graph, p ? p->flags : 0, p);
}

/* ---------------- the executable graph's life ---------------- */

/* After the program's update of x from graph (its own call, its own
 * answer): x runs graph's functions, the view is a clone of graph. */
static void updated(struct gexec *e, CUgraph graph)
{
	CUgraph v;
	if (!e || e->untouched)
		return;
	struct gexec tmp = { .k = NULL };
	bool cloned = gcu.Clone(&v, graph) == CUDA_SUCCESS;
	if (cloned && collect(&tmp, v)) {
		if (e->view)
			gcu.Destroy(e->view);
		e->view = v;
		e->gen = 0;
		e->swapped = false; /* the update set the program's functions */
		free(e->k);
		e->k = tmp.k;
		e->nk = tmp.nk;
		return;
	}
	if (cloned)
		gcu.Destroy(v);
	e->untouched = true;
	say_once(&told_clone, "a graph that cannot be cloned (memory nodes) runs untouched in a "
			      "live session");
}

CUresult gpux_cuGraphExecUpdate(CUgraphExec x, CUgraph graph, CUgraphNode *bad,
				CUgraphExecUpdateResult *r) __asm__("cuGraphExecUpdate");
CUresult gpux_cuGraphExecUpdate(CUgraphExec x, CUgraph graph, CUgraphNode *bad,
				CUgraphExecUpdateResult *r)
{
	typedef CUresult (*fn_t)(CUgraphExec, CUgraph, CUgraphNode *, CUgraphExecUpdateResult *);
	fn_t fn = REAL(H_G_UPDATE, "cuGraphExecUpdate", fn_t);
	if (!fn)
		return NO_CUDA;
	if (!rt_live())
		return fn(x, graph, bad, r);
	pthread_mutex_lock(&glock);
	CUresult rc = fn(x, graph, bad, r);
	if (rc == CUDA_SUCCESS)
		updated(find(x), graph);
	pthread_mutex_unlock(&glock);
	return rc;
}

CUresult cuGraphExecUpdate_v2(CUgraphExec x, CUgraph graph, CUgraphExecUpdateResultInfo *info)
{
	typedef CUresult (*fn_t)(CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo *);
	fn_t fn = REAL(H_G_UPDATE2, "cuGraphExecUpdate_v2", fn_t);
	if (!fn)
		return NO_CUDA;
	if (!rt_live())
		return fn(x, graph, info);
	pthread_mutex_lock(&glock);
	CUresult rc = fn(x, graph, info);
	if (rc == CUDA_SUCCESS)
		updated(find(x), graph);
	pthread_mutex_unlock(&glock);
	return rc;
}

CUresult cuGraphExecDestroy(CUgraphExec x)
{
	typedef CUresult (*fn_t)(CUgraphExec);
	fn_t fn = REAL(H_G_EXEC_DESTROY, "cuGraphExecDestroy", fn_t);
	if (!fn)
		return NO_CUDA;
	struct gexec *e = NULL;
	if (rt_live()) {
		pthread_mutex_lock(&glock);
		for (struct gexec **p = &execs; *p; p = &(*p)->next)
			if ((*p)->exec == x) {
				e = *p;
				*p = e->next;
				break;
			}
		pthread_mutex_unlock(&glock);
	}
	CUresult rc = fn(x);
	if (e)
		forget(e);
	return rc;
}

static CUresult upload(enum hook_id id, const char *sym, CUgraphExec x, CUstream s)
{
	typedef CUresult (*fn_t)(CUgraphExec, CUstream);
	fn_t fn = REAL(id, sym, fn_t);
	if (!fn)
		return NO_CUDA;
	rt_live_enter();
	rt_live_graph_prepare(x);
	CUresult rc = fn(x, s);
	rt_live_leave();
	return rc;
}

CUresult cuGraphUpload(CUgraphExec x, CUstream s)
{
	return upload(H_G_UPLOAD, "cuGraphUpload", x, s);
}

CUresult cuGraphUpload_ptsz(CUgraphExec x, CUstream s);
CUresult cuGraphUpload_ptsz(CUgraphExec x, CUstream s)
{
	return upload(H_G_UPLOAD_PT, "cuGraphUpload_ptsz", x, s);
}

/* ---------------- the program's node-level calls ---------------- */

/* Under glock, before the program's call on x's node *n: *n becomes the
 * clone's node; after an update, a call that changes a node (!enabling)
 * first leaves the graph untouched. */
static struct gexec *node_call(CUgraphExec x, CUgraphNode *n, bool enabling)
{
	struct gexec *e = find(x);
	CUgraphNode c;
	if (!e)
		return NULL;
	if (gcu.FindInClone(&c, *n, e->inst) == CUDA_SUCCESS)
		*n = c;
	if (e->view && !enabling)
		go_untouched(e, NULL);
	return e;
}

#define NODE_HOOK(NAME, ID, PARAMS, ARGS, ENABLING)                                     \
	CUresult NAME PARAMS                                                           \
	{                                                                              \
		typedef CUresult(*fn_t) PARAMS;                                        \
		fn_t fn = REAL(ID, #NAME, fn_t);                                       \
		if (!fn)                                                               \
			return NO_CUDA;                                                \
		if (!rt_live())                                                        \
			return fn ARGS;                                                \
		pthread_mutex_lock(&glock);                                            \
		node_call(x, &n, ENABLING);                                            \
		CUresult rc = fn ARGS;                                                 \
		pthread_mutex_unlock(&glock);                                          \
		return rc;                                                             \
	}

NODE_HOOK(cuGraphExecMemcpyNodeSetParams, H_G_MEMCPY,
	  (CUgraphExec x, CUgraphNode n, const CUDA_MEMCPY3D *p, CUcontext c), (x, n, p, c), false)
NODE_HOOK(cuGraphExecMemsetNodeSetParams, H_G_MEMSET,
	  (CUgraphExec x, CUgraphNode n, const CUDA_MEMSET_NODE_PARAMS *p, CUcontext c),
	  (x, n, p, c), false)
NODE_HOOK(cuGraphExecHostNodeSetParams, H_G_HOST,
	  (CUgraphExec x, CUgraphNode n, const CUDA_HOST_NODE_PARAMS *p), (x, n, p), false)
NODE_HOOK(cuGraphExecChildGraphNodeSetParams, H_G_CHILD,
	  (CUgraphExec x, CUgraphNode n, CUgraph p), (x, n, p), false)
NODE_HOOK(cuGraphExecEventRecordNodeSetEvent, H_G_EVREC,
	  (CUgraphExec x, CUgraphNode n, CUevent p), (x, n, p), false)
NODE_HOOK(cuGraphExecEventWaitNodeSetEvent, H_G_EVWAIT,
	  (CUgraphExec x, CUgraphNode n, CUevent p), (x, n, p), false)
NODE_HOOK(cuGraphExecExternalSemaphoresSignalNodeSetParams, H_G_SEMSIG,
	  (CUgraphExec x, CUgraphNode n, const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS *p), (x, n, p),
	  false)
NODE_HOOK(cuGraphExecExternalSemaphoresWaitNodeSetParams, H_G_SEMWAIT,
	  (CUgraphExec x, CUgraphNode n, const CUDA_EXT_SEM_WAIT_NODE_PARAMS *p), (x, n, p), false)
NODE_HOOK(cuGraphExecBatchMemOpNodeSetParams, H_G_BATCH,
	  (CUgraphExec x, CUgraphNode n, const CUDA_BATCH_MEM_OP_NODE_PARAMS *p), (x, n, p),
	  false)
NODE_HOOK(cuGraphNodeGetEnabled, H_G_ENABLED,
	  (CUgraphExec x, CUgraphNode n, unsigned *p), (x, n, p), true)

CUresult cuGraphNodeSetEnabled(CUgraphExec x, CUgraphNode n, unsigned on)
{
	typedef CUresult (*fn_t)(CUgraphExec, CUgraphNode, unsigned);
	fn_t fn = REAL(H_G_ENABLE, "cuGraphNodeSetEnabled", fn_t);
	if (!fn)
		return NO_CUDA;
	if (!rt_live())
		return fn(x, n, on);
	pthread_mutex_lock(&glock);
	struct gexec *e = node_call(x, &n, true);
	CUresult rc = fn(x, n, on);
	struct knode *k = rc == CUDA_SUCCESS && e && !e->view ? knode_of(e, n) : NULL;
	if (k)
		k->off = !on;
	pthread_mutex_unlock(&glock);
	return rc;
}

/* A kernel node the program set on x (rc: its answer) is set on the
 * clone by mirror too, which keeps what to set back; the node runs the
 * program's function until the next launch. When the clone cannot
 * follow, the graph goes untouched (the node kept as the program set
 * it). */
static void kernel_set(struct gexec *e, CUgraphNode n, CUresult rc, bool mirrored)
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

CUresult gpux_cuGraphExecKernelNodeSetParams(CUgraphExec x, CUgraphNode n,
					     const CUDA_KERNEL_NODE_PARAMS_v1 *p)
	__asm__("cuGraphExecKernelNodeSetParams");
CUresult gpux_cuGraphExecKernelNodeSetParams(CUgraphExec x, CUgraphNode n,
					     const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	typedef CUresult (*fn_t)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v1 *);
	fn_t fn = REAL(H_G_KSET, "cuGraphExecKernelNodeSetParams", fn_t);
	if (!fn)
		return NO_CUDA;
	if (!rt_live())
		return fn(x, n, p);
	pthread_mutex_lock(&glock);
	struct gexec *e = node_call(x, &n, false);
	CUresult rc = fn(x, n, p);
	kernel_set(e, n, rc, rc == CUDA_SUCCESS && gcu.KSet1 && gcu.KSet1(n, p) == CUDA_SUCCESS);
	pthread_mutex_unlock(&glock);
	return rc;
}

CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec x, CUgraphNode n, const kparams *p)
{
	kset_exec_fn fn = REAL(H_G_KSET2, "cuGraphExecKernelNodeSetParams_v2", kset_exec_fn);
	if (!fn)
		return NO_CUDA;
	if (!rt_live())
		return fn(x, n, p);
	pthread_mutex_lock(&glock);
	struct gexec *e = node_call(x, &n, false);
	CUresult rc = fn(x, n, p);
	kernel_set(e, n, rc, rc == CUDA_SUCCESS && gcu.KSet(n, p) == CUDA_SUCCESS);
	pthread_mutex_unlock(&glock);
	return rc;
}

CUresult cuGraphExecNodeSetParams(CUgraphExec x, CUgraphNode n, CUgraphNodeParams *p)
{
	typedef CUresult (*fn_t)(CUgraphExec, CUgraphNode, CUgraphNodeParams *);
	fn_t fn = REAL(H_G_NSET, "cuGraphExecNodeSetParams", fn_t);
	if (!fn)
		return NO_CUDA;
	if (!rt_live())
		return fn(x, n, p);
	pthread_mutex_lock(&glock);
	struct gexec *e = node_call(x, &n, false);
	CUresult rc = fn(x, n, p);
	if (p && p->type == CU_GRAPH_NODE_TYPE_KERNEL)
		kernel_set(e, n, rc,
			   rc == CUDA_SUCCESS && gcu.NSet && gcu.NSet(n, p) == CUDA_SUCCESS);
	pthread_mutex_unlock(&glock);
	return rc;
}

/* base and since as in rt_entry.c. */
#define E(NAME, BASE, SINCE, PT, ID, FN) { NAME, BASE, SINCE, PT, ID, (void *)FN }
const struct rt_hook rt_graph_hooks[] = {
	E("cuGraphInstantiate", "cuGraphInstantiate", 0, false, H_G_INST, gpux_cuGraphInstantiate),
	E("cuGraphInstantiate_v2", "cuGraphInstantiate", 11000, false, H_G_INST2,
	  cuGraphInstantiate_v2),
	E("cuGraphInstantiateWithFlags", "cuGraphInstantiateWithFlags", 0, false, H_G_INST_FL,
	  cuGraphInstantiateWithFlags),
	E("cuGraphInstantiateWithParams", "cuGraphInstantiateWithParams", 0, false, H_G_INST_PAR,
	  cuGraphInstantiateWithParams),
	E("cuGraphInstantiateWithParams_ptsz", "cuGraphInstantiateWithParams", 0, true,
	  H_G_INST_PAR_PT, cuGraphInstantiateWithParams_ptsz),
	E("cuGraphExecUpdate", "cuGraphExecUpdate", 0, false, H_G_UPDATE, gpux_cuGraphExecUpdate),
	E("cuGraphExecUpdate_v2", "cuGraphExecUpdate", 12000, false, H_G_UPDATE2,
	  cuGraphExecUpdate_v2),
	E("cuGraphExecDestroy", "cuGraphExecDestroy", 0, false, H_G_EXEC_DESTROY,
	  cuGraphExecDestroy),
	E("cuGraphUpload", "cuGraphUpload", 0, false, H_G_UPLOAD, cuGraphUpload),
	E("cuGraphUpload_ptsz", "cuGraphUpload", 0, true, H_G_UPLOAD_PT, cuGraphUpload_ptsz),
	E("cuGraphExecKernelNodeSetParams", "cuGraphExecKernelNodeSetParams", 0, false, H_G_KSET,
	  gpux_cuGraphExecKernelNodeSetParams),
	E("cuGraphExecKernelNodeSetParams_v2", "cuGraphExecKernelNodeSetParams", 12000, false,
	  H_G_KSET2, cuGraphExecKernelNodeSetParams_v2),
	E("cuGraphExecNodeSetParams", "cuGraphExecNodeSetParams", 0, false, H_G_NSET,
	  cuGraphExecNodeSetParams),
	E("cuGraphExecMemcpyNodeSetParams", "cuGraphExecMemcpyNodeSetParams", 0, false,
	  H_G_MEMCPY, cuGraphExecMemcpyNodeSetParams),
	E("cuGraphExecMemsetNodeSetParams", "cuGraphExecMemsetNodeSetParams", 0, false,
	  H_G_MEMSET, cuGraphExecMemsetNodeSetParams),
	E("cuGraphExecHostNodeSetParams", "cuGraphExecHostNodeSetParams", 0, false, H_G_HOST,
	  cuGraphExecHostNodeSetParams),
	E("cuGraphExecChildGraphNodeSetParams", "cuGraphExecChildGraphNodeSetParams", 0, false,
	  H_G_CHILD, cuGraphExecChildGraphNodeSetParams),
	E("cuGraphExecEventRecordNodeSetEvent", "cuGraphExecEventRecordNodeSetEvent", 0, false,
	  H_G_EVREC, cuGraphExecEventRecordNodeSetEvent),
	E("cuGraphExecEventWaitNodeSetEvent", "cuGraphExecEventWaitNodeSetEvent", 0, false,
	  H_G_EVWAIT, cuGraphExecEventWaitNodeSetEvent),
	E("cuGraphExecExternalSemaphoresSignalNodeSetParams",
	  "cuGraphExecExternalSemaphoresSignalNodeSetParams", 0, false, H_G_SEMSIG,
	  cuGraphExecExternalSemaphoresSignalNodeSetParams),
	E("cuGraphExecExternalSemaphoresWaitNodeSetParams",
	  "cuGraphExecExternalSemaphoresWaitNodeSetParams", 0, false, H_G_SEMWAIT,
	  cuGraphExecExternalSemaphoresWaitNodeSetParams),
	E("cuGraphExecBatchMemOpNodeSetParams", "cuGraphExecBatchMemOpNodeSetParams", 0, false,
	  H_G_BATCH, cuGraphExecBatchMemOpNodeSetParams),
	E("cuGraphNodeSetEnabled", "cuGraphNodeSetEnabled", 0, false, H_G_ENABLE,
	  cuGraphNodeSetEnabled),
	E("cuGraphNodeGetEnabled", "cuGraphNodeGetEnabled", 0, false, H_G_ENABLED,
	  cuGraphNodeGetEnabled),
};
#undef E

const size_t rt_graph_nhooks = sizeof(rt_graph_hooks) / sizeof(rt_graph_hooks[0]);
