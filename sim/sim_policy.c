/* Driver policies as the simulator's hooks (sim_policy.h).
 *
 * A hook's context is what the kernel would pass: an array of u64
 * arguments, pointers among them leading to structs the program reads
 * through the loads its ABI describes (struct host_sops_field). Those
 * structs live inside the one context buffer the VM may read: a chunk's
 * in a replica per chunk (so `chunk` is a stable key and names the chunk
 * for move_head/move_tail), the others in nodes shared by all calls. */
#include "sim_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_vm.h"
#include "driver_kfuncs.h"
#include "host_sec.h"

#define NODE 64
#define SHARED_NODES 16
#define CHUNK_NODES 8
#define CHUNK_BYTES (CHUNK_NODES * NODE)
#define ARGS_BYTES 192 /* a kprobe's: struct pt_regs */
#define SHARED_BASE ARGS_BYTES
#define CHUNK_BASE (SHARED_BASE + SHARED_NODES * NODE)
#define MAX_INTERVALS 8

const struct host_sops_abi *const sim_abis[] = { &host_abi_uvm_gpu_ext,
						 &host_abi_nv_gpu_sched };
const int sim_nabis = 2;

/* EV_CAPTURE: the kprobe that captures the prefetch hooks' block
 * (struct host_sops_capture), run before them as in the driver */
enum hook_ev { EV_PREFETCH, EV_ITER, EV_ACTIVATE, EV_ACCESS, EV_EVICT, EV_TASK_INIT,
	       EV_BIND, EV_DESTROY, EV_CAPTURE, EV_COUNT };
static const char *const ev_names[EV_COUNT] = {
	"gpu_mem:prefetch", "gpu_mem:prefetch_iter", "gpu_mem:activate", "gpu_mem:access",
	"gpu_mem:evict_prepare", "gpu_sched:task_init", "gpu_sched:bind",
	"gpu_sched:task_destroy", "kprobe",
};
static const unsigned regs_arg[6] = HOST_PT_REGS_ARGS;
_Static_assert(HOST_PT_REGS_SIZE <= ARGS_BYTES, "a kprobe's registers fit the arguments' area");

struct slot {
	const char *name;
	bool per_chunk;
	uint32_t pos;  /* in the buffer, or in the chunk's replica */
	unsigned size;
	long add;
};

struct link {
	uint32_t pos, target; /* shared: *(u64 *)(ctx + pos) = ctx + target */
};

struct hook_rt {
	int prog; /* -1: none */
	const struct host_sops_hook *hook;
	bool regs; /* arguments in struct pt_regs (a kprobe), not an array */
	int nargs;
	int root[8];       /* shared root node of argument a, -1: a value */
	int chunk_arg;
	struct slot slots[8];
	int nslots;
	struct link links[16];
	int nlinks;
};

struct trie {
	int parent[CHUNK_NODES > SHARED_NODES ? CHUNK_NODES : SHARED_NODES];
	unsigned off[SHARED_NODES];
	int n, max;
};

struct sim_policy {
	struct vm *vm;
	unsigned char *ctx;
	size_t ctx_size;
	uint32_t chunks;
	struct hook_rt hooks[EV_COUNT];
	struct trie chunk_trie;          /* shared by every chunk-rooted path */
	struct uvm *u;
	struct sched *s;
	struct sched_tsg *tsg;
	const struct uvm_prefetch_call *pc;
	const struct uvm_iter_call *ic;
	uint32_t chunk;                  /* the hook's chunk */
	const struct hook_rt *cur;       /* the hook running */
	struct host_sops_hook capture;   /* EV_CAPTURE's, as a hook */
	const struct wl_tenant *tenants;
	int ntenants;
	struct { int prog; uint64_t period, due; } iv[MAX_INTERVALS];
	int niv;
	uint64_t failures;
	char first_err[256];
	sim_rec_fn rec;                  /* drop_record until set */
	void *rec_arg;
};

/* ---- layout ---- */

static int trie_node(struct trie *t, int parent, unsigned off)
{
	for (int i = 1; i < t->n; i++)
		if (t->parent[i] == parent && t->off[i] == off)
			return i;
	if (t->n == t->max)
		return -1;
	t->parent[t->n] = parent;
	t->off[t->n] = off;
	return t->n++;
}

static uint64_t chunk_addr(const struct sim_policy *p, uint32_t c)
{
	return (uint64_t)(uintptr_t)p->ctx + CHUNK_BASE + (uint64_t)c * CHUNK_BYTES;
}

static int layout(struct sim_policy *p, struct hook_rt *h, char *err, size_t errlen)
{
	const struct host_sops_hook *hk = h->hook;
	struct trie shared = { .n = 0, .max = SHARED_NODES };
	h->nargs = hk->nargs;
	h->chunk_arg = -1;
	for (int a = 0; a < 8; a++)
		h->root[a] = -1;
	for (int i = 0; i < hk->nfields; i++)
		if (!strcmp(hk->fields[i].name, "chunk") && !hk->fields[i].nloads)
			h->chunk_arg = hk->fields[i].arg;
	for (int i = 0; i < hk->nfields; i++) {
		const struct host_sops_field *f = &hk->fields[i];
		if (!f->nloads)
			continue;
		bool pc = f->arg == h->chunk_arg;
		struct trie *t = pc ? &p->chunk_trie : &shared;
		int node;
		if (pc) {
			node = 0;
			if (!t->n)
				t->n = 1;
		} else {
			if (h->root[f->arg] < 0) {
				if (t->n == t->max)
					goto big;
				h->root[f->arg] = t->n;
				t->parent[t->n] = -1;
				t->off[t->n++] = 0;
			}
			node = h->root[f->arg];
		}
		for (int k = 0; k < f->nloads; k++) {
			if (f->off[k] + 8 > NODE)
				goto big;
			if (k == f->nloads - 1)
				break;
			int child = trie_node(t, node, f->off[k]);
			if (child < 0)
				goto big;
			if (!pc && h->nlinks < 16)
				h->links[h->nlinks++] = (struct link){
					SHARED_BASE + (uint32_t)node * NODE + f->off[k],
					SHARED_BASE + (uint32_t)child * NODE };
			node = child;
		}
		if (h->nslots == 8)
			goto big;
		uint32_t base = pc ? 0 : SHARED_BASE;
		h->slots[h->nslots++] = (struct slot){ f->name, pc,
			base + (uint32_t)node * NODE + f->off[f->nloads - 1], f->size, f->add };
	}
	return 0;
big:
	snprintf(err, errlen, "%s: its context does not fit the simulator's layout", hk->event);
	return -1;
}

/* every chunk replica's internal pointers */
static void chunk_links(struct sim_policy *p)
{
	const struct trie *t = &p->chunk_trie;
	for (uint32_t c = 0; c < p->chunks; c++)
		for (int n = 1; n < t->n; n++) {
			uint64_t where = CHUNK_BASE + (uint64_t)c * CHUNK_BYTES +
					 (uint64_t)t->parent[n] * NODE + t->off[n];
			uint64_t to = chunk_addr(p, c) + (uint64_t)n * NODE;
			memcpy(p->ctx + where, &to, 8);
		}
}

/* ---- values ---- */

static uint64_t value(struct sim_policy *p, const char *name)
{
	struct uvm *u = p->u;
	bool fault = p->cur == &p->hooks[EV_CAPTURE] && p->pc; /* the faulting block's */
	if (!strcmp(name, "va"))
		return fault ? p->pc->block << 21 : u ? uvm_chunk_block(u, p->chunk) << 21 : 0;
	if (!strcmp(name, "owner"))
		return fault ? p->pc->tenant : u ? uvm_chunk_tenant(u, p->chunk) : 0;
	if (!strcmp(name, "head")) {
		uint32_t h;
		return u && uvm_list_chunks(u, UVM_LIST_USED, &h, 1) ? chunk_addr(p, h) : 0;
	}
	if (p->pc) {
		if (!strcmp(name, "page_index")) return p->pc->page_index;
		if (!strcmp(name, "max_first")) return p->pc->max_first;
		if (!strcmp(name, "max_outer")) return p->pc->max_outer;
	}
	if (p->ic) {
		if (!strcmp(name, "first")) return p->ic->first;
		if (!strcmp(name, "outer")) return p->ic->outer;
		if (!strcmp(name, "counter")) return p->ic->counter;
	}
	if (p->tsg) {
		if (!strcmp(name, "tsg_id")) return p->tsg->tsg_id;
		if (!strcmp(name, "timeslice")) return p->tsg->timeslice_us;
		if (!strcmp(name, "interleave")) return p->tsg->interleave;
		if (!strcmp(name, "channels")) return 1;
	}
	return 0; /* engine, runlist: 0 */
}

static const struct wl_tenant *tenant_of(const struct sim_policy *p, uint32_t pid)
{
	for (int i = 0; i < p->ntenants; i++)
		if (p->tenants[i].pid == pid)
			return &p->tenants[i];
	return NULL;
}

/* The values h's fields read, from the model's state now: before the
 * hook runs, and again after a kfunc changed that state (a move makes
 * another chunk the used list's head, as in the driver's own list). */
static void fill_slots(struct sim_policy *p, const struct hook_rt *h)
{
	for (int i = 0; i < h->nslots; i++) {
		const struct slot *s = &h->slots[i];
		uint64_t v = value(p, s->name) - (uint64_t)s->add;
		size_t pos = s->per_chunk ? CHUNK_BASE + (size_t)p->chunk * CHUNK_BYTES + s->pos : s->pos;
		memcpy(p->ctx + pos, &v, s->size > 8 ? 8 : s->size); /* little-endian */
	}
}

static int run_hook(struct sim_policy *p, enum hook_ev ev, uint32_t tenant)
{
	struct hook_rt *h = &p->hooks[ev];
	uint64_t args[8] = { 0 };
	for (int i = 0; i < h->nlinks; i++) {
		uint64_t to = (uint64_t)(uintptr_t)p->ctx + h->links[i].target;
		memcpy(p->ctx + h->links[i].pos, &to, 8);
	}
	for (int a = 0; a < h->nargs && a < 8; a++)
		if (a == h->chunk_arg)
			args[a] = chunk_addr(p, p->chunk);
		else if (h->root[a] >= 0)
			args[a] = (uint64_t)(uintptr_t)p->ctx + SHARED_BASE + (uint64_t)h->root[a] * NODE;
	for (int i = 0; i < h->hook->nfields; i++) {
		const struct host_sops_field *f = &h->hook->fields[i];
		if (f->arg < 0 || f->nloads || f->arg == h->chunk_arg || h->root[f->arg] >= 0)
			continue;
		/* lists and regions: the shared area stands in for them */
		bool ptr = strstr(f->name, "list") || !strcmp(f->name, "result_region");
		args[f->arg] = ptr ? (uint64_t)(uintptr_t)p->ctx + SHARED_BASE : value(p, f->name);
	}
	memset(p->ctx, 0, ARGS_BYTES);
	for (int a = 0; a < (h->regs ? 6 : 8); a++)
		memcpy(p->ctx + (h->regs ? regs_arg[a] : 8 * (unsigned)a), &args[a], 8);
	p->cur = h;
	fill_slots(p, h);
	const struct wl_tenant *t = tenant_of(p, tenant);
	vm_set_task(p->vm, tenant, t ? t->comm : "");
	uint64_t r0 = 0;
	int rc = vm_run_prog(p->vm, h->prog, p->ctx, p->ctx_size, &r0);
	p->cur = NULL;
	if (rc) {
		if (!p->failures++)
			snprintf(p->first_err, sizeof(p->first_err), "%s: %s", ev_names[ev],
				 vm_last_error(p->vm));
		if (p->u)
			uvm_policy_error(p->u);
		return UVM_DEFAULT;
	}
	return r0 <= UVM_ENTER_LOOP ? (int)r0 : UVM_DEFAULT;
}

/* ---- kfuncs ---- */

static uint64_t kfunc(void *arg, int32_t id, const uint64_t *a)
{
	struct sim_policy *p = arg;
	uint64_t base = chunk_addr(p, 0);
	uint32_t c = UINT32_MAX;
	switch (id) {
	case GPUX_K_MOVE_HEAD:
	case GPUX_K_MOVE_TAIL:
		if (a[0] >= base && (a[0] - base) % CHUNK_BYTES == 0 &&
		    (a[0] - base) / CHUNK_BYTES < p->chunks)
			c = (uint32_t)((a[0] - base) / CHUNK_BYTES);
		if (!p->u)
			return 0;
		if (c == UINT32_MAX)
			uvm_policy_error(p->u);
		else if (id == GPUX_K_MOVE_HEAD)
			uvm_move_head(p->u, c);
		else
			uvm_move_tail(p->u, c);
		if (p->cur)
			fill_slots(p, p->cur);
		return 0;
	case GPUX_K_SET_PREFETCH_REGION:
		if (p->u)
			uvm_set_prefetch_region(p->u, (uint32_t)a[1], (uint32_t)a[2]);
		return 0;
	case GPUX_K_SET_TIMESLICE:
		return p->s && sched_set_timeslice(p->s, a[1]) ? 0 : (uint64_t)-22;
	case GPUX_K_SET_INTERLEAVE:
		return p->s && sched_set_interleave(p->s, a[1]) ? 0 : (uint64_t)-22;
	case GPUX_K_REJECT_BIND:
		if (p->s)
			sched_reject_bind(p->s);
		return 0;
	default:
		if (p->u)
			uvm_policy_error(p->u);
		return 0;
	}
}

static uint64_t clock_ns(void *arg)
{
	struct sim_policy *p = arg;
	return p->u ? uvm_now_ns(p->u) : 0;
}

/* ---- the model's hooks ---- */

static int h_activate(void *arg, struct uvm *u, uint32_t chunk, uint32_t tenant)
{
	struct sim_policy *p = arg;
	p->u = u;
	p->chunk = chunk;
	return run_hook(p, EV_ACTIVATE, tenant);
}

static int h_access(void *arg, struct uvm *u, uint32_t chunk, uint32_t tenant)
{
	struct sim_policy *p = arg;
	p->u = u;
	p->chunk = chunk;
	return run_hook(p, EV_ACCESS, tenant);
}

static void h_evict(void *arg, struct uvm *u, uint32_t tenant)
{
	struct sim_policy *p = arg;
	p->u = u;
	run_hook(p, EV_EVICT, tenant);
}

static int h_prefetch(void *arg, struct uvm *u, const struct uvm_prefetch_call *c)
{
	struct sim_policy *p = arg;
	p->u = u;
	p->pc = c;
	if (p->hooks[EV_CAPTURE].prog >= 0)
		run_hook(p, EV_CAPTURE, c->tenant);
	int d = run_hook(p, EV_PREFETCH, c->tenant);
	if (d != UVM_ENTER_LOOP)
		p->pc = NULL;
	return d;
}

static int h_iter(void *arg, struct uvm *u, const struct uvm_iter_call *c)
{
	struct sim_policy *p = arg;
	p->u = u;
	p->ic = c;
	int d = run_hook(p, EV_ITER, c->tenant);
	p->ic = NULL;
	if (c->level == 9)
		p->pc = NULL;
	return d;
}

static void h_tick(void *arg, struct uvm *u)
{
	struct sim_policy *p = arg;
	p->u = u;
	sim_policy_tick(p, uvm_now_ns(u));
}

void sim_policy_uvm_hooks(struct sim_policy *p, struct uvm_policy *hk)
{
	memset(hk, 0, sizeof(*hk));
	hk->arg = p;
	if (p->hooks[EV_ACTIVATE].prog >= 0)
		hk->activate = h_activate;
	if (p->hooks[EV_ACCESS].prog >= 0)
		hk->access = h_access;
	if (p->hooks[EV_EVICT].prog >= 0)
		hk->evict_prepare = h_evict;
	if (p->hooks[EV_PREFETCH].prog >= 0)
		hk->prefetch = h_prefetch;
	if (p->hooks[EV_ITER].prog >= 0)
		hk->prefetch_iter = h_iter;
	hk->tick = h_tick;
}

void sim_policy_set_model(struct sim_policy *p, struct uvm *u) { p->u = u; }

static void s_hook(struct sim_policy *p, enum hook_ev ev, struct sched *s, struct sched_tsg *t)
{
	p->s = s;
	p->tsg = t;
	run_hook(p, ev, t->tenant);
	p->s = NULL;
	p->tsg = NULL;
}

static void s_init(void *a, struct sched *s, struct sched_tsg *t) { s_hook(a, EV_TASK_INIT, s, t); }
static void s_bind(void *a, struct sched *s, struct sched_tsg *t) { s_hook(a, EV_BIND, s, t); }
static void s_destroy(void *a, struct sched *s, struct sched_tsg *t) { s_hook(a, EV_DESTROY, s, t); }

void sim_policy_sched_hooks(struct sim_policy *p, struct sched_policy *hk)
{
	memset(hk, 0, sizeof(*hk));
	hk->arg = p;
	if (p->hooks[EV_TASK_INIT].prog >= 0)
		hk->task_init = s_init;
	if (p->hooks[EV_BIND].prog >= 0)
		hk->bind = s_bind;
	if (p->hooks[EV_DESTROY].prog >= 0)
		hk->task_destroy = s_destroy;
}

bool sim_policy_has_sched(const struct sim_policy *p)
{
	return p->hooks[EV_TASK_INIT].prog >= 0 || p->hooks[EV_BIND].prog >= 0 ||
	       p->hooks[EV_DESTROY].prog >= 0;
}

/* ---- lifetime ---- */

static const struct host_sops_hook *hook_by_member(const char *member)
{
	for (int a = 0; a < sim_nabis; a++)
		for (int i = 0; i < sim_abis[a]->nhooks; i++)
			if (!strcmp(sim_abis[a]->hooks[i].member, member))
				return &sim_abis[a]->hooks[i];
	return NULL;
}

/* The capture of func as a hook: its fields, rooted at its arguments. */
static bool capture_hook(const char *func, struct host_sops_hook *out)
{
	for (int a = 0; a < sim_nabis; a++) {
		const struct host_sops_capture *c = sim_abis[a]->capture;
		if (!c || strcmp(c->func, func))
			continue;
		memset(out, 0, sizeof(*out));
		out->event = "kprobe";
		out->member = c->func;
		out->nargs = 6;
		for (int i = 0; i < c->nfields && i < 8; i++)
			out->fields[out->nfields++] = c->fields[i];
		return true;
	}
	return false;
}

static int drop_record(void *arg, const void *data, size_t len)
{
	(void)arg, (void)data, (void)len;
	return 0;
}

/* The object's table entry of the VM's program in section sec (programs
 * that share a section are of one kind). */
static const struct host_prog *prog_in(const struct host_obj *obj, const char *sec)
{
	for (int i = 0; i < obj->nprogs; i++)
		if (!strcmp(obj->progs[i].section, sec))
			return &obj->progs[i];
	return NULL;
}

int sim_policy_new(const struct host_obj *obj, uint32_t chunks,
		   const struct wl_tenant *tenants, int ntenants,
		   struct sim_policy **out, char *err, size_t errlen)
{
	*out = NULL;
	struct sim_policy *p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	p->chunks = chunks;
	p->rec = drop_record;
	p->tenants = tenants;
	p->ntenants = ntenants;
	p->chunk_trie.max = CHUNK_NODES;
	for (int e = 0; e < EV_COUNT; e++)
		p->hooks[e].prog = -1;
	p->ctx_size = CHUNK_BASE + (size_t)chunks * CHUNK_BYTES;
	p->ctx = calloc(1, p->ctx_size);
	if (!p->ctx) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (obj->size && vm_load_flags(obj->elf, obj->size, VM_LOAD_DRIVER, &p->vm, err, errlen))
		goto fail;
	if (!p->vm) {
		snprintf(err, errlen, "the policy has no driver probe");
		goto fail;
	}
	vm_set_ext(p->vm, kfunc, p);
	vm_set_clock(p->vm, clock_ns, p);
	for (int i = 0; i < vm_prog_count(p->vm); i++) {
		const char *sec = vm_prog_section(p->vm, i);
		const struct host_prog *hp = prog_in(obj, sec);
		const struct host_sops_hook *hk = NULL;
		int ev = -1;
		switch (hp ? hp->attach : ATTACH_DEVICE) {
		case ATTACH_VM: /* BEGIN and END run by their sections */
			if (!hp->at.interval_ns)
				continue;
			if (p->niv == MAX_INTERVALS) {
				snprintf(err, errlen, "more than %d interval probes", MAX_INTERVALS);
				goto fail;
			}
			p->iv[p->niv].prog = i;
			p->iv[p->niv].period = hp->at.interval_ns;
			p->iv[p->niv++].due = hp->at.interval_ns;
			continue;
		case ATTACH_KPROBE: /* "kprobe/FUNC": the driver's captures; a
				     * kernel probe is not the simulator's */
			if (hp->run != HOST_RUN_DRIVER)
				continue;
			if (capture_hook(strchr(sec, '/') + 1, &p->capture)) {
				hk = &p->capture;
				ev = EV_CAPTURE;
				p->hooks[ev].regs = true;
			}
			break;
		case ATTACH_STRUCT_OPS: /* "struct_ops/MEMBER" */
			hk = hook_by_member(strchr(sec, '/') + 1);
			for (int e = 0; hk && e < EV_CAPTURE; e++)
				if (!strcmp(ev_names[e], hk->event))
					ev = e;
			break;
		default:
			continue;
		}
		if (ev < 0) {
			snprintf(err, errlen, "%s: a hook the simulator does not model", sec);
			goto fail;
		}
		p->hooks[ev].prog = i;
		p->hooks[ev].hook = hk;
		if (layout(p, &p->hooks[ev], err, errlen))
			goto fail;
	}
	chunk_links(p);
	*out = p;
	return 0;
fail:
	sim_policy_free(p);
	return -1;
}

void sim_policy_free(struct sim_policy *p)
{
	if (!p)
		return;
	vm_free(p->vm);
	free(p->ctx);
	free(p);
}

static int run_section(struct sim_policy *p, const char *sec, char *err, size_t errlen)
{
	int rc = vm_run(p->vm, sec, NULL, 0, NULL);
	vm_ring_drain(p->vm, p->rec, p->rec_arg);
	if (rc && rc != VM_ENOPROG) {
		snprintf(err, errlen, "%s: %s", sec, vm_last_error(p->vm));
		return -1;
	}
	return 0;
}

int sim_policy_begin(struct sim_policy *p, char *err, size_t errlen)
{
	vm_set_task(p->vm, 0, "gpux");
	return run_section(p, HOST_SEC_BEGIN, err, errlen);
}

int sim_policy_end(struct sim_policy *p, char *err, size_t errlen)
{
	vm_set_task(p->vm, 0, "gpux");
	return run_section(p, HOST_SEC_END, err, errlen);
}

void sim_policy_tick(struct sim_policy *p, uint64_t now)
{
	for (int i = 0; i < p->niv; i++)
		for (int k = 0; k < 1000 && p->iv[i].due <= now; k++) {
			p->iv[i].due += p->iv[i].period;
			vm_set_task(p->vm, 0, "gpux");
			if (vm_run_prog(p->vm, p->iv[i].prog, NULL, 0, NULL) && !p->failures++)
				snprintf(p->first_err, sizeof(p->first_err), "interval: %s",
					 vm_last_error(p->vm));
		}
	vm_ring_drain(p->vm, p->rec, p->rec_arg);
}

uint64_t sim_policy_failures(const struct sim_policy *p, const char **first)
{
	*first = p->first_err;
	return p->failures;
}

void sim_policy_set_output(struct sim_policy *p, sim_rec_fn fn, void *arg)
{
	p->rec = fn ? fn : drop_record;
	p->rec_arg = arg;
}

struct vm *sim_policy_vm(struct sim_policy *p)
{
	return p->vm;
}
