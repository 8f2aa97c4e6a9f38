/* Where each map of a host object is used, by runner (llvm_host.h:
 * host_map.use_at): the facts the controller places maps by. A data use
 * is any reference but the map argument of print(), clear() and zero(),
 * which the controller carries out wherever the map lives. */
#include <stdint.h>
#include <string.h>

#include "host_priv.h"

struct scan {
	struct host_obj *obj;
	enum runner rn;
	struct hindex ix; /* map name -> index + 1 */
};

static int map_index(const struct scan *sc, const char *name)
{
	return (int)(intptr_t)hl_index_get(&sc->ix, name) - 1;
}

static bool map_action(const char *fn)
{
	return !strcmp(fn, "print") || !strcmp(fn, "clear") || !strcmp(fn, "zero");
}

static void visit(struct node *n, void *arg)
{
	struct scan *sc = arg;
	if (n->kind == N_CALL && map_action(n->u.call.name) && n->u.call.args &&
	    n->u.call.args->kind == N_MAP) {
		for (struct node *a = n->u.call.args->next; a; a = a->next)
			visit(a, arg);
		return;
	}
	if (n->kind == N_MAP) {
		int i = map_index(sc, n->u.map.name);
		if (i >= 0 && !sc->obj->maps[i].use_at[sc->rn])
			sc->obj->maps[i].use_at[sc->rn] = n;
	}
	const struct node *w = n->kind == N_ASSIGN ? n->u.assign.target
			     : n->kind == N_INCDEC ? n->u.incdec.target
			     : n->kind == N_CALL && !strcmp(n->u.call.name, "delete") ? n->u.call.args
			     : NULL;
	if (w && w->kind == N_MAP) {
		int i = map_index(sc, w->u.map.name);
		if (i >= 0 && !sc->obj->maps[i].write_at[sc->rn])
			sc->obj->maps[i].write_at[sc->rn] = w;
	}
	ast_visit_children(n, visit, arg);
}

void hl_map_uses(struct program *prog, struct host_obj *obj)
{
	struct scan sc = { .obj = obj, .ix = { .str = true } };
	for (int i = 0; i < obj->nmaps; i++)
		hl_index_put(&sc.ix, &obj->arena, obj->maps[i].name, (void *)(intptr_t)(i + 1));
	for (struct node *p = prog->probes; p; p = p->next) {
		const struct attach *at = &p->u.probe.attach->u.attach;
		sc.rn = at->prov ? at->prov->runner : RUNNER_GPUX;
		ast_visit_children(p, visit, &sc);
	}
}
