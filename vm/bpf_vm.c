/* The VM's API (bpf_vm.h): loading, running a section's programs, and
 * map and ring access for the controller, all under one recursive lock
 * (a ring callback prints a map; cuda: events come from any thread). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_vm_priv.h"

#define LOCK(vm) pthread_mutex_lock(&(vm)->lock)
#define UNLOCK(vm) pthread_mutex_unlock(&(vm)->lock)

int vm_load(const void *elf, size_t len, struct vm **out, char *err, size_t errlen)
{
	return vm_load_flags(elf, len, 0, out, err, errlen);
}

int vm_load_flags(const void *elf, size_t len, unsigned flags, struct vm **out, char *err,
		  size_t errlen)
{
	*out = NULL;
	struct vm *vm = calloc(1, sizeof(*vm));
	/* an aligned private copy: the ELF reader casts into it */
	unsigned char *copy = malloc(len ? len : 1);
	if (!vm || !copy) {
		free(vm);
		free(copy);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (len)
		memcpy(copy, elf, len);
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&vm->lock, &a);
	pthread_mutexattr_destroy(&a);
	vm->budget = VM_DEFAULT_BUDGET;
	int rc = vm_elf_load(vm, copy, len, flags, err, errlen);
	free(copy);
	if (rc) {
		vm_free(vm);
		return -1;
	}
	*out = vm;
	return 0;
}

void vm_free(struct vm *vm)
{
	if (!vm)
		return;
	for (int i = 0; vm->progs && i < vm->nprogs; i++) {
		free(vm->progs[i].section);
		free(vm->progs[i].name);
		free(vm->progs[i].insns);
	}
	for (int i = 0; i < vm->nmaps; i++)
		umap_destroy(&vm->maps[i].u);
	/* a failed load may have left one map half made */
	if (vm->maps)
		umap_destroy(&vm->maps[vm->nmaps].u);
	free(vm->progs);
	free(vm->maps);
	free(vm->x);
	pthread_mutex_destroy(&vm->lock);
	free(vm);
}

int vm_run(struct vm *vm, const char *section, const void *ctx, size_t ctx_size,
	   uint64_t *ret)
{
	LOCK(vm);
	vm->err[0] = 0;
	vm->last_insns = 0;
	int rc = VM_ENOPROG, found = 0;
	struct vm_exec *x = malloc(sizeof(*x)); /* the stack is 512 bytes: not ours */
	for (int i = 0; x && i < vm->nprogs; i++) {
		if (strcmp(vm->progs[i].section, section))
			continue;
		found++;
		memset(x, 0, sizeof(*x)); /* a fresh stack: nothing leaks between runs */
		x->vm = vm;
		x->prog = &vm->progs[i];
		x->ctx = ctx;
		x->ctx_size = ctx ? ctx_size : 0;
		x->reg[1] = (uint64_t)(uintptr_t)ctx;
		x->reg[BPF_REG_FP] = (uint64_t)(uintptr_t)(x->stack + BPF_STACK_SIZE);
		rc = vm_exec(x, ret);
		vm->last_insns += x->insns;
		if (rc)
			break;
	}
	if (!x) {
		snprintf(vm->err, sizeof(vm->err), "out of memory");
		rc = VM_EFAULT;
	} else if (!found) {
		snprintf(vm->err, sizeof(vm->err), "no program in section %s", section);
	}
	free(x);
	UNLOCK(vm);
	return rc;
}

int vm_run_prog(struct vm *vm, int i, const void *ctx, size_t ctx_size, uint64_t *ret)
{
	if (i < 0 || i >= vm->nprogs)
		return VM_ENOPROG;
	LOCK(vm);
	vm->err[0] = 0;
	if (!vm->x && !(vm->x = calloc(1, sizeof(*vm->x)))) {
		snprintf(vm->err, sizeof(vm->err), "out of memory");
		UNLOCK(vm);
		return VM_EFAULT;
	}
	struct vm_exec *x = vm->x;
	/* fresh registers and the stack the program reaches: nothing leaks
	 * between runs */
	const struct vm_prog *p = &vm->progs[i];
	static const uint64_t zero_regs[BPF_NREGS];
	memcpy(x->reg, zero_regs, sizeof(x->reg)); /* moves, not rep stos: this runs per event */
	memset(x->stack + BPF_STACK_SIZE - p->stack, 0, (size_t)p->stack);
	x->insns = 0;
	x->pc = 0;
	x->nval = 0;
	x->vm = vm;
	x->prog = p;
	x->ctx = ctx;
	x->ctx_size = ctx ? ctx_size : 0;
	x->reg[1] = (uint64_t)(uintptr_t)ctx;
	x->reg[BPF_REG_FP] = (uint64_t)(uintptr_t)(x->stack + BPF_STACK_SIZE);
	int rc = vm_exec(x, ret);
	vm->last_insns = x->insns;
	UNLOCK(vm);
	return rc;
}

const char *vm_last_error(const struct vm *vm)
{
	return vm->err;
}

void vm_set_budget(struct vm *vm, uint64_t insns)
{
	vm->budget = insns;
}

void vm_set_ext(struct vm *vm, vm_ext_fn fn, void *arg)
{
	vm->ext = fn;
	vm->ext_arg = arg;
}

void vm_set_task(struct vm *vm, uint32_t pid, const char *comm)
{
	vm->task_set = true;
	vm->task_pid = pid;
	memset(vm->task_comm, 0, sizeof(vm->task_comm));
	strncpy(vm->task_comm, comm ? comm : "", sizeof(vm->task_comm) - 1);
}

void vm_set_clock(struct vm *vm, uint64_t (*clock)(void *arg), void *arg)
{
	vm->clock = clock;
	vm->clock_arg = arg;
}

uint64_t vm_last_insns(const struct vm *vm)
{
	return vm->last_insns;
}

int vm_prog_count(const struct vm *vm)
{
	return vm->nprogs;
}

const char *vm_prog_section(const struct vm *vm, int i)
{
	return i >= 0 && i < vm->nprogs ? vm->progs[i].section : NULL;
}

/* ---- maps ---- */

struct vm_map *vm_map_by_name(struct vm *vm, const char *name)
{
	for (int i = 0; i < vm->nmaps; i++)
		if (!strcmp(vm->maps[i].u.name, name))
			return &vm->maps[i];
	return NULL;
}

void vm_map_info(struct vm *vm, const struct vm_map *m, struct vm_map_info *info)
{
	LOCK(vm);
	*info = (struct vm_map_info){ m->u.name, m->u.type, m->u.key_size, m->u.value_size,
				      m->u.max_entries, m->u.count, m->u.drops };
	UNLOCK(vm);
}

int vm_map_foreach(struct vm *vm, struct vm_map *m,
		   int (*cb)(void *arg, const void *key, const void *value), void *arg)
{
	LOCK(vm);
	int rc = umap_foreach(&m->u, cb, arg);
	UNLOCK(vm);
	return rc;
}

int vm_map_lookup(struct vm *vm, struct vm_map *m, const void *key, void *value)
{
	LOCK(vm);
	const void *v = umap_lookup(&m->u, key);
	if (v)
		memcpy(value, v, m->u.value_size);
	UNLOCK(vm);
	return v ? 0 : -ENOENT;
}

int vm_map_update(struct vm *vm, struct vm_map *m, const void *key, const void *value,
		  uint64_t flags)
{
	LOCK(vm);
	int rc = umap_update(&m->u, key, value, flags);
	UNLOCK(vm);
	return rc;
}

void vm_map_clear(struct vm *vm, struct vm_map *m)
{
	LOCK(vm);
	umap_clear(&m->u);
	UNLOCK(vm);
}

void vm_map_zero(struct vm *vm, struct vm_map *m)
{
	LOCK(vm);
	umap_zero(&m->u);
	UNLOCK(vm);
}

void vm_lock(struct vm *vm)
{
	LOCK(vm);
}

void vm_unlock(struct vm *vm)
{
	UNLOCK(vm);
}

void vm_map_on_touch(struct vm *vm, struct vm_map *m, void (*touch)(void *, uint32_t),
		     void *arg)
{
	LOCK(vm);
	m->u.touch = touch;
	m->u.touch_arg = arg;
	UNLOCK(vm);
}

int vm_map_bind_dev(struct vm *vm, struct vm_map *m, void *table, uint32_t key_size,
		    uint32_t value_size, uint32_t max_entries, char *err, size_t errlen)
{
	LOCK(vm);
	int rc = umap_bind_dev(&m->u, table, key_size, value_size, max_entries, err, errlen);
	UNLOCK(vm);
	return rc;
}

int vm_ring_drain(struct vm *vm, int (*cb)(void *arg, const void *data, size_t len),
		  void *arg)
{
	LOCK(vm);
	int n = 0;
	for (int i = 0; i < vm->nmaps; i++)
		if (vm->maps[i].u.type == BPF_M_RINGBUF)
			n += umap_ring_drain(&vm->maps[i].u, cb, arg);
	UNLOCK(vm);
	return n;
}
