/* Map placement for kernel probes beside BEGIN/END/interval (map_place.h). */
#include "map_place.h"

#include <stdlib.h>
#include <string.h>

bool map_place_vm_probe(const struct node *probe)
{
	const char *pv = probe->u.probe.attach->u.attach.provider;
	return !strcmp(pv, "BEGIN") || !strcmp(pv, "END") || !strcmp(pv, "interval");
}

struct scan {
	const struct host_obj *obj;
	bool *use;               /* per obj map: used (data) on this side */
	const struct node **at;  /* the first such use, for the message */
	bool *write;             /* per obj map: written on this side */
	const struct node **wat; /* the first write */
};

static int map_index(const struct host_obj *obj, const char *name)
{
	for (int i = 0; i < obj->nmaps; i++)
		if (!strcmp(obj->maps[i].name, name))
			return i;
	return -1;
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
		/* print(@m, ...): the controller's work, not a data use */
		for (struct node *a = n->u.call.args->next; a; a = a->next)
			visit(a, arg);
		return;
	}
	if (n->kind == N_MAP) {
		int i = map_index(sc->obj, n->u.map.name);
		if (i >= 0 && !sc->use[i]) {
			sc->use[i] = true;
			sc->at[i] = n;
		}
	}
	const struct node *w = n->kind == N_ASSIGN ? n->u.assign.target
			     : n->kind == N_INCDEC ? n->u.incdec.target
			     : n->kind == N_CALL && !strcmp(n->u.call.name, "delete") ? n->u.call.args
			     : NULL;
	if (w && w->kind == N_MAP && sc->write) {
		int i = map_index(sc->obj, w->u.map.name);
		if (i >= 0 && !sc->write[i]) {
			sc->write[i] = true;
			sc->wat[i] = w;
		}
	}
	ast_visit_children(n, visit, arg);
}

int map_place(struct program *prog, const struct host_obj *obj, bool *in_kernel,
	      bool *vm_reads, const char *where, struct diags *diags)
{
	size_t n = (size_t)obj->nmaps;
	bool *vm_use = calloc(n + 1, sizeof(*vm_use)), *vm_write = calloc(n + 1, sizeof(*vm_write));
	const struct node **vm_at = calloc(n + 1, sizeof(*vm_at));
	const struct node **vm_wat = calloc(n + 1, sizeof(*vm_wat));
	const struct node **k_at = calloc(n + 1, sizeof(*k_at));
	int rc = 0;
	if (!vm_use || !vm_write || !vm_at || !vm_wat || !k_at) {
		diag_error_nospan(diags, "out of memory");
		rc = -1;
		goto out;
	}
	memset(in_kernel, 0, sizeof(*in_kernel) * n);
	struct scan vm = { obj, vm_use, vm_at, vm_write, vm_wat }, kern = { obj, in_kernel, k_at, NULL, NULL };
	for (struct node *p = prog->probes; p; p = p->next)
		ast_visit_children(p, visit, map_place_vm_probe(p) ? &vm : &kern);
	for (size_t i = 0; i < n; i++) {
		if (vm_reads)
			vm_reads[i] = vm_use[i] && in_kernel[i];
		if (!vm_use[i] || !in_kernel[i] || (vm_reads && !vm_write[i]))
			continue;
		diag_error(diags, (vm_reads ? vm_wat[i] : vm_at[i])->span,
			   vm_reads ? "@%s is used by %s; BEGIN, END and interval probes can "
				      "read, print, clear and zero it but not write it yet"
				    : "@%s is used by %s; BEGIN, END and interval probes can print, "
				      "clear and zero it but not read or write it yet",
			   obj->maps[i].name, where);
		rc = -1;
	}
out:
	free(vm_use);
	free(vm_write);
	free(vm_at);
	free(vm_wat);
	free(k_at);
	return rc;
}
