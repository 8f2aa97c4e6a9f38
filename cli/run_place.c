/* Where each map of a run lives (backend.h: run_place), from what the
 * compiler found of its uses (object/host_obj.h: host_map.use_at). A map belongs to
 * the runner whose probes use it: the kernel's (uprobes, tracepoints;
 * driver probes using it share it from there), the driver's (gpu_mem:,
 * gpu_sched:), the traced program's (gdev:, cuda:), else gpux's own VM
 * (BEGIN, END, interval). BEGIN/END/interval may print, clear and zero the others'
 * maps (the controller does that), and read and write the kernel's and
 * the driver's (copied into the VM before each run, what the run changed
 * written back after it: backend_gpux.c); the traced program's maps
 * they cannot read or write, and can clear or zero only through a
 * baseline (map_base.h). One map used by kernel probes and by the traced
 * program's is refused: it would need to live in two places. */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

#include "map_base.h"

enum runner probe_runner(const struct node *probe)
{
	const struct attach *at = &probe->u.probe.attach->u.attach;
	return at->prov ? at->prov->runner : RUNNER_GPUX;
}

int run_count_attach(const struct program *prog, enum runner rn)
{
	int n = 0;
	for (const struct node *p = prog->probes; p; p = p->next)
		for (const struct node *a = p->u.probe.attach; a; a = a->next)
			if (a->u.attach.prov && a->u.attach.prov->runner == rn)
				n++;
	return n;
}

const struct node *run_first_attach(const struct program *prog, enum runner rn)
{
	for (const struct node *p = prog->probes; p; p = p->next)
		for (const struct node *a = p->u.probe.attach; a; a = a->next)
			if (a->u.attach.prov && a->u.attach.prov->runner == rn)
				return a;
	return NULL;
}

static int map_index(const struct host_obj *obj, const char *name)
{
	for (int i = 0; i < obj->nmaps; i++)
		if (!strcmp(obj->maps[i].name, name))
			return i;
	return -1;
}

/* What placing reads and fills: a run's, or a dry run's own arrays. */
struct placing {
	const struct program *prog;
	const struct host_obj *obj;
	enum runner *owner;
	bool *vm_reads, *vm_writes;
};

struct resets {
	const struct placing *pl;
	struct diags *d;
	int bad;
};

/* clear(@m) and zero(@m) of a map the traced program holds work through
 * a baseline: only for maps whose values add up. */
static void check_reset(struct node *n, void *arg)
{
	struct resets *rs = arg;
	if (n->kind == N_CALL && (!strcmp(n->u.call.name, "clear") || !strcmp(n->u.call.name, "zero")) &&
	    n->u.call.args && n->u.call.args->kind == N_MAP) {
		const char *name = n->u.call.args->u.map.name;
		int i = map_index(rs->pl->obj, name);
		if (i >= 0 && rs->pl->owner[i] == RUNNER_TARGET &&
		    !map_base_supported(&rs->pl->obj->maps[i])) {
			diag_error(rs->d, n->span, "%s(@%s): gdev: or cuda: probes hold @%s; BEGIN, "
				   "END and interval can clear or zero only their count, sum, avg, "
				   "stats, hist and lhist maps", n->u.call.name, name, name);
			rs->bad = 1;
		}
	}
	ast_visit_children(n, check_reset, arg);
}

static const char *where_of(enum runner rn)
{
	return rn == RUNNER_KERNEL ? "uprobes or tracepoints, which keep it in the kernel"
	       : rn == RUNNER_DRIVER ? "gpu_mem: or gpu_sched: probes, which keep it in the kernel"
				     : "gdev: or cuda: probes, which keep it in the traced program";
}

/* From the compiler's facts (host_map.use_at, write_at). */
static int decide(const struct placing *r, struct diags *d)
{
	int rc = 0;
	for (int i = 0; i < r->obj->nmaps; i++) {
		const struct host_map *hm = &r->obj->maps[i];
		const struct node *k = hm->use_at[RUNNER_KERNEL], *t = hm->use_at[RUNNER_TARGET];
		const struct node *dv = hm->use_at[RUNNER_DRIVER];
		if ((k || dv) && t) {
			diag_error(d, t->span, "@%s is also used by %s (in the kernel): one map "
				   "cannot be shared between %s probes and gdev: or cuda: probes yet",
				   hm->name, k ? "uprobes or tracepoints" : "gpu_mem: or gpu_sched: probes",
				   k ? "kernel" : "driver");
			rc = -1;
			continue;
		}
		/* the driver's probes share the kernel's maps (backend_driver.c) */
		enum runner rn = k ? RUNNER_KERNEL : dv ? RUNNER_DRIVER
				 : t || hm->device ? RUNNER_TARGET : RUNNER_GPUX;
		r->owner[i] = rn;
		const struct node *vr = hm->use_at[RUNNER_GPUX], *vw = hm->write_at[RUNNER_GPUX];
		bool in_kernel = rn == RUNNER_KERNEL || rn == RUNNER_DRIVER;
		if (rn == RUNNER_GPUX || !vr)
			continue;
		if (in_kernel) {
			r->vm_reads[i] = true;
			r->vm_writes[i] = vw != NULL;
			continue;
		}
		diag_error(d, vr->span, "@%s is used by %s; BEGIN, END and interval probes can "
			   "print, clear and zero it but not read or write it yet",
			   hm->name, where_of(rn));
		rc = -1;
	}
	return rc;
}

static int place(const struct placing *pl, struct diags *d)
{
	if (decide(pl, d))
		return -1;
	struct resets rs = { pl, d, 0 };
	for (struct node *p = pl->prog->probes; p; p = p->next)
		if (probe_runner(p) == RUNNER_GPUX)
			ast_visit_children(p, check_reset, &rs);
	return rs.bad ? -1 : 0;
}

int run_place(struct run *r, struct diags *d)
{
	size_t n = (size_t)r->obj.nmaps + 1;
	r->owner = calloc(n, sizeof(*r->owner));
	r->vm_reads = calloc(n, sizeof(*r->vm_reads));
	r->vm_writes = calloc(n, sizeof(*r->vm_writes));
	if (!r->owner || !r->vm_reads || !r->vm_writes) {
		diag_error_nospan(d, "out of memory");
		return -1;
	}
	struct placing pl = { r->prog, &r->obj, r->owner, r->vm_reads, r->vm_writes };
	return place(&pl, d);
}

int run_place_check(const struct program *prog, const struct host_obj *obj, struct diags *d)
{
	size_t n = (size_t)obj->nmaps + 1;
	struct placing pl = { prog, obj, calloc(n, sizeof(*pl.owner)),
			      calloc(n, sizeof(*pl.vm_reads)), calloc(n, sizeof(*pl.vm_writes)) };
	int rc = -1;
	if (!pl.owner || !pl.vm_reads || !pl.vm_writes)
		diag_error_nospan(d, "out of memory");
	else
		rc = place(&pl, d);
	free(pl.owner);
	free(pl.vm_reads);
	free(pl.vm_writes);
	return rc;
}
