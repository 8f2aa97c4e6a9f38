/* Internals of the userspace BPF VM (bpf_vm.h), shared by bpf_vm.c (API,
 * locking), bpf_vm_elf.c (ELF, BTF maps, relocations), bpf_vm_check.c
 * (checks before running), bpf_vm_exec.c (interpreter) and
 * bpf_vm_helpers.c (helpers). */
#ifndef GPUX_BPF_VM_PRIV_H
#define GPUX_BPF_VM_PRIV_H

#include <pthread.h>
#include <stdbool.h>

#include "bpf_insn.h"
#include "bpf_vm.h"
#include "umaps.h"

/* A resolved map reference: lddw with src = BPF_PSEUDO_MAP_IDX and imm =
 * map index loads this handle, an address no real pointer can have
 * (non-canonical), so a dereference of it fails the bounds check. */
#define VM_MAP_HANDLE_BASE 0xdead6d6170000000ull
#define VM_MAP_HANDLE(i) (VM_MAP_HANDLE_BASE | (uint64_t)(i))

struct vm_prog {
	char *section, *name;
	struct bpf_insn *insns;
	int n;
	uint64_t off; /* in its section: programs run in this order */
	int stack;    /* bytes below r10 it reaches (vm_stack_depth) */
};

struct vm_map {
	struct umap u;
};

struct vm {
	pthread_mutex_t lock;
	struct vm_prog *progs;
	int nprogs;
	struct vm_map *maps;
	int nmaps;
	uint64_t budget, last_insns;
	char err[256];
	struct vm_exec *x; /* vm_run_prog's, reused under the lock */
	vm_ext_fn ext;     /* vm_set_ext */
	void *ext_arg;
	bool driver;       /* VM_LOAD_DRIVER: kfunc ids are helpers too */
	/* vm_set_task, vm_set_clock: what a simulated process sees */
	bool task_set;
	uint32_t task_pid;
	char task_comm[16];
	uint64_t (*clock)(void *arg);
	void *clock_arg;
	uint64_t rand_state; /* rand: xorshift64, seeded at its first use */
	uint64_t cgroup_id;  /* cgroup: read at its first use */
	bool cgroup_read;
};

#define VM_LIVE_VALUES 64

/* One program invocation. */
struct vm_exec {
	struct vm *vm;
	const struct vm_prog *prog;
	uint64_t reg[BPF_NREGS];
	unsigned char stack[BPF_STACK_SIZE] __attribute__((aligned(16)));
	const unsigned char *ctx;
	size_t ctx_size;
	uint64_t insns;
	int pc; /* of the current instruction, for messages */
	/* map values this run got from lookups: the only map memory it may
	 * touch (the newest VM_LIVE_VALUES; older ones fault if reused) */
	uint64_t val[VM_LIVE_VALUES];
	uint32_t val_size[VM_LIVE_VALUES];
	unsigned nval;
};

/* bpf_vm_elf.c: maps and programs of the object into vm. */
int vm_elf_load(struct vm *vm, const unsigned char *elf, size_t len, unsigned flags,
		char *err, size_t errlen);

/* bpf_vm_check.c: 0, or -1 with a message naming the instruction. */
int vm_check_prog(const struct vm *vm, const struct vm_prog *p, char *err, size_t errlen);
int vm_stack_depth(const struct vm_prog *p);
bool vm_helper_known(const struct vm *vm, int32_t id);

/* bpf_vm_exec.c */
int vm_exec(struct vm_exec *x, uint64_t *ret);
/* Host address of [addr, addr+size) if the program may read (or write)
 * it, else NULL (vm_mem: with the fault reported in vm->err). */
void *vm_reach(struct vm_exec *x, uint64_t addr, uint64_t size, bool write);
void *vm_mem(struct vm_exec *x, uint64_t addr, uint64_t size, bool write);
/* bpf_trace_printk(fmt r[1], size r[2], up to three args r[3..5]):
 * bytes written, or a negative errno (bpf_vm_printk.c). */
int64_t vm_trace_printk(struct vm_exec *x, const uint64_t *r);
int vm_fault(struct vm_exec *x, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* bpf_vm_helpers.c: runs helper id with r1..r5, result in r0; 0 or a
 * VM_E* status (already reported). */
int vm_helper(struct vm_exec *x, int32_t id);

#endif
