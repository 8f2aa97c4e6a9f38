/* The program's calls on CUDA graphs in a live session, hooked
 * (rt_live_graph.c keeps the graphs): instantiation from a clone, its
 * updates followed, node-level calls translated to the clone's nodes.
 * Outside live sessions each goes straight to the driver. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt_live_graph_priv.h"

/* The instantiation hooks: the clone first; if that fails (or cannot be
 * tracked), the program's graph, which answers with its own errors. */
#define INSTANTIATE(FN, X, GRAPH, FLAGS, ...)                                          \
	do {                                                                           \
		CUgraph c_ = rt_lg_clone_for(GRAPH, FLAGS);                                  \
		if (c_) {                                                              \
			CUresult rc_ = FN(X, c_, __VA_ARGS__);                         \
			if (rc_ == CUDA_SUCCESS && rt_lg_track(*(X), c_)) {                  \
				rt_graph_ev_instantiated(*(X), GRAPH);                 \
				return rc_;                                            \
			}                                                              \
			if (rc_ == CUDA_SUCCESS) {                                     \
				typedef CUresult (*xd_fn)(CUgraphExec);                \
				xd_fn xd_ = REAL(H_G_EXEC_DESTROY, "cuGraphExecDestroy", \
						 xd_fn);                               \
				if (xd_)                                               \
					xd_(*(X));                                     \
			}                                                              \
			rt_graph_cu.Destroy(c_);                                               \
		}                                                                      \
		CUresult r_ = FN(X, GRAPH, __VA_ARGS__);                               \
		if (r_ == CUDA_SUCCESS)                                                \
			rt_graph_ev_instantiated(*(X), GRAPH);                         \
		return r_;                                                             \
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


/* The program's update, then (it succeeded) the graph followed. */
#define UPDATE(FN, X, GRAPH, ...)                                  \
	do {                                                       \
		if (!FN)                                           \
			return NO_CUDA;                            \
		if (!rt_live())                                    \
			return FN(X, GRAPH, __VA_ARGS__);          \
		pthread_mutex_lock(&rt_lg_lock);                   \
		CUresult rc_ = FN(X, GRAPH, __VA_ARGS__);          \
		if (rc_ == CUDA_SUCCESS)                           \
			rt_lg_updated(X, GRAPH);                   \
		pthread_mutex_unlock(&rt_lg_lock);                 \
		return rc_;                                        \
	} while (0)

CUresult gpux_cuGraphExecUpdate(CUgraphExec x, CUgraph graph, CUgraphNode *bad,
				CUgraphExecUpdateResult *r) __asm__("cuGraphExecUpdate");
CUresult gpux_cuGraphExecUpdate(CUgraphExec x, CUgraph graph, CUgraphNode *bad,
				CUgraphExecUpdateResult *r)
{
	typedef CUresult (*fn_t)(CUgraphExec, CUgraph, CUgraphNode *, CUgraphExecUpdateResult *);
	fn_t fn = REAL(H_G_UPDATE, "cuGraphExecUpdate", fn_t);
	UPDATE(fn, x, graph, bad, r);
}

CUresult cuGraphExecUpdate_v2(CUgraphExec x, CUgraph graph, CUgraphExecUpdateResultInfo *info)
{
	typedef CUresult (*fn_t)(CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo *);
	fn_t fn = REAL(H_G_UPDATE2, "cuGraphExecUpdate_v2", fn_t);
	UPDATE(fn, x, graph, info);
}

CUresult cuGraphExecDestroy(CUgraphExec x)
{
	typedef CUresult (*fn_t)(CUgraphExec);
	fn_t fn = REAL(H_G_EXEC_DESTROY, "cuGraphExecDestroy", fn_t);
	if (!fn)
		return NO_CUDA;
	struct gexec *e = rt_live() ? rt_lg_take(x) : NULL;
	rt_graph_ev_destroyed(x);
	CUresult rc = fn(x);
	if (e)
		rt_lg_forget(e);
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

#define NODE_HOOK(NAME, ID, PARAMS, ARGS, ENABLING)                                     \
	CUresult NAME PARAMS                                                           \
	{                                                                              \
		typedef CUresult(*fn_t) PARAMS;                                        \
		fn_t fn = REAL(ID, #NAME, fn_t);                                       \
		if (!fn)                                                               \
			return NO_CUDA;                                                \
		if (!rt_live())                                                        \
			return fn ARGS;                                                \
		pthread_mutex_lock(&rt_lg_lock);                                            \
		rt_lg_node_call(x, &n, ENABLING);                                            \
		CUresult rc = fn ARGS;                                                 \
		pthread_mutex_unlock(&rt_lg_lock);                                          \
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
	pthread_mutex_lock(&rt_lg_lock);
	struct gexec *e = rt_lg_node_call(x, &n, true);
	CUresult rc = fn(x, n, on);
	if (rc == CUDA_SUCCESS)
		rt_lg_set_enabled(e, n, on);
	pthread_mutex_unlock(&rt_lg_lock);
	return rc;
}

/* A kernel node set by the program: MIRROR sets it on the clone (only
 * on a node of the runtime's own clone, never on the program's graph). */
#define KERNEL_HOOK(NAME, ID, SYM, PTYPE, MIRROR)                                    \
	CUresult NAME(CUgraphExec x, CUgraphNode n, PTYPE *p)                        \
	{                                                                            \
		typedef CUresult (*fn_t)(CUgraphExec, CUgraphNode, PTYPE *);         \
		fn_t fn = REAL(ID, SYM, fn_t);                                       \
		if (!fn)                                                             \
			return NO_CUDA;                                              \
		if (!rt_live())                                                      \
			return fn(x, n, p);                                          \
		pthread_mutex_lock(&rt_lg_lock);                                     \
		struct gexec *e = rt_lg_node_call(x, &n, false);                     \
		bool ours_ = rt_lg_followed(e, n);                                   \
		CUresult rc = fn(x, n, p);                                           \
		if (ours_)                                                           \
			rt_lg_kernel_set(e, n, rc, rc == CUDA_SUCCESS && (MIRROR));  \
		pthread_mutex_unlock(&rt_lg_lock);                                   \
		return rc;                                                           \
	}

CUresult gpux_cuGraphExecKernelNodeSetParams(CUgraphExec x, CUgraphNode n,
					     const CUDA_KERNEL_NODE_PARAMS_v1 *p)
	__asm__("cuGraphExecKernelNodeSetParams");
KERNEL_HOOK(gpux_cuGraphExecKernelNodeSetParams, H_G_KSET, "cuGraphExecKernelNodeSetParams",
	    const CUDA_KERNEL_NODE_PARAMS_v1, rt_graph_cu.KSet1 && rt_graph_cu.KSet1(n, p) == CUDA_SUCCESS)
KERNEL_HOOK(cuGraphExecKernelNodeSetParams_v2, H_G_KSET2, "cuGraphExecKernelNodeSetParams_v2",
	    const kparams, rt_graph_cu.KSet(n, p) == CUDA_SUCCESS)
/* a generic set: a kernel's is followed, any other only passed on */
KERNEL_HOOK(cuGraphExecNodeSetParams, H_G_NSET, "cuGraphExecNodeSetParams", CUgraphNodeParams,
	    !p || p->type != CU_GRAPH_NODE_TYPE_KERNEL || (rt_graph_cu.NSet && rt_graph_cu.NSet(n, p) == CUDA_SUCCESS))

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
