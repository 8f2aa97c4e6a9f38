/* The userspace BPF VM: runs the gpux/ programs of a host object
 * (object/host_obj.h: BEGIN, END, interval and cuda: probes) outside
 * the kernel, in the controller or in the preloaded runtime.
 *
 * vm_load reads the ELF (its own small ELF64 reader: no libelf, so the
 * preloaded runtime can carry it), makes a userspace map for every BTF
 * map definition in ".maps" (umaps.h), takes each function of each
 * "gpux/..." section as a program, resolves its map references and
 * checks it before anything runs: known opcodes, registers in range, r10
 * never written, jumps inside the program and never into the middle of
 * a 64-bit load, no fall-through past the end, and calls only to the
 * helpers the VM implements. Kfunc calls, bpf-to-bpf calls and data
 * relocations (.rodata) are refused.
 *
 * vm_run bounds what it cannot check ahead: every run has an instruction
 * budget (loops), and every load, store and helper pointer is checked
 * against the 512-byte stack, the context (read-only) and the value
 * slots of the maps. A violation stops the program with a negative
 * status and a message (vm_last_error), never touches other memory.
 *
 * Thread-safe: one recursive mutex per VM serialises runs and map
 * access. */
#ifndef GPUX_BPF_VM_H
#define GPUX_BPF_VM_H

#include <stddef.h>
#include <stdint.h>

struct vm;
struct vm_map;

#define VM_DEFAULT_BUDGET 1000000ull /* instructions per program run */

/* vm_run's failures (the program's own r0 comes back through *ret). */
enum {
	VM_ENOPROG = -1, /* no program in that section */
	VM_EFAULT = -2,  /* out-of-bounds or misused memory */
	VM_EBUDGET = -3, /* instruction budget exhausted */
	VM_EHELPER = -4, /* a helper was called with bad arguments */
	VM_EINSN = -5,   /* an instruction the checks should have refused */
};

/* 0, or -1 with a message in err; *out is NULL on failure. */
int vm_load(const void *elf, size_t len, struct vm **out, char *err, size_t errlen);
/* VM_LOAD_DRIVER: the driver hooks' "struct_ops/..." programs and the
 * "kprobe/..." captures load too, to run off the driver: their calls of
 * gpu_ext kfuncs become calls of the ids of abi/driver_kfuncs.h, served
 * by the extension hook, and bpf_probe_read_kernel reads the context
 * (anything else fails, zeroed, as in the kernel). */
#define VM_LOAD_DRIVER 1u
int vm_load_flags(const void *elf, size_t len, unsigned flags, struct vm **out, char *err,
		  size_t errlen);
void vm_free(struct vm *vm);

/* Runs every program of section (e.g. "gpux/begin": several BEGIN
 * probes run in program order) with r1 = ctx. The context is read-only
 * and ctx_size bytes long (0 with ctx NULL for BEGIN/END/interval).
 * 0 with the last program's r0 in *ret (ret may be NULL), or a VM_E*
 * status; the programs after a failing one do not run. */
int vm_run(struct vm *vm, const char *section, const void *ctx, size_t ctx_size,
	   uint64_t *ret);
/* Runs program i alone (vm_prog_section order), as vm_run does: the
 * fast path for events that fire often (no lookup by name, no
 * allocation after the first run). */
int vm_run_prog(struct vm *vm, int i, const void *ctx, size_t ctx_size, uint64_t *ret);
/* The message of the last failed vm_run ("" after a clean one); valid
 * until the next vm_run. */
const char *vm_last_error(const struct vm *vm);
/* Instructions per program run (default VM_DEFAULT_BUDGET). */
void vm_set_budget(struct vm *vm, uint64_t insns);
/* Instructions executed by the last vm_run, all programs together. */
uint64_t vm_last_insns(const struct vm *vm);

/* Programs, in ELF order: their section names. */
int vm_prog_count(const struct vm *vm);
const char *vm_prog_section(const struct vm *vm, int i);

/* Helpers the embedder serves (abi/cuda_actions.h: GPUX_H_FIRST up to
 * GPUX_H_END): the runtime in the traced process, for cuda: probes.
 * They take integers only (r1..r5) and give r0; a program calling one
 * in a VM without them stops with VM_EHELPER. Set before any run. */
typedef uint64_t (*vm_ext_fn)(void *arg, int32_t id, const uint64_t *args);
void vm_set_ext(struct vm *vm, vm_ext_fn fn, void *arg);
/* What bpf_get_current_pid_tgid/comm return (a simulated process), and
 * the clock bpf_ktime_get_ns reads (simulated time): before any run. */
void vm_set_task(struct vm *vm, uint32_t pid, const char *comm);
void vm_set_clock(struct vm *vm, uint64_t (*clock)(void *arg), void *arg);
/* The current task as the helpers read it in this process, kept per
 * process and thread (bpf_vm_task.c): pid << 32 | tid, and the thread's
 * name; vm_task_renamed: a thread of this process was renamed, the name
 * is read again. */
uint64_t vm_task_pid_tgid(void);
void vm_task_comm(char out[16]);
void vm_task_renamed(void);

/* ---- maps: for printing and for the controller's clear()/zero() ---- */

struct vm_map_info {
	const char *name; /* the ELF symbol: "AT_x", "gpux_events" */
	uint32_t type;    /* BPF_MAP_TYPE_*: 1 hash, 2 array, 5/6 per-CPU, 27 ring */
	uint32_t key_size, value_size, max_entries;
	uint32_t count;   /* live elements (arrays: max_entries) */
	uint64_t drops;   /* inserts or ring records refused: map full */
};

struct vm_map *vm_map_by_name(struct vm *vm, const char *name);
void vm_map_info(struct vm *vm, const struct vm_map *m, struct vm_map_info *info);
/* Per-CPU maps hold one value per element (the VM is one CPU). */
/* Calls cb(arg, key, value) for each element, under the VM's lock
 * (recursive: cb may read other maps, but must not change this one). A
 * nonzero return stops and is returned. */
int vm_map_foreach(struct vm *vm, struct vm_map *m,
		   int (*cb)(void *arg, const void *key, const void *value), void *arg);
/* Copies the value of key into value; 0 or -ENOENT. */
int vm_map_lookup(struct vm *vm, struct vm_map *m, const void *key, void *value);
/* 0 or a negative errno, as bpf_map_update_elem. */
int vm_map_update(struct vm *vm, struct vm_map *m, const void *key, const void *value,
		  uint64_t flags);
void vm_map_clear(struct vm *vm, struct vm_map *m); /* clear(@m) */
void vm_map_zero(struct vm *vm, struct vm_map *m);  /* zero(@m) */
/* The VM's own (recursive) lock, held across several map reads that
 * must see no program run in between. */
void vm_lock(struct vm *vm);
void vm_unlock(struct vm *vm);
/* Sets m's touch callback (umaps.h) before any program runs. */
void vm_map_on_touch(struct vm *vm, struct vm_map *m, void (*touch)(void *, uint32_t),
		     void *arg);
/* Backs hash map m with a device map's table (umap_bind_dev): before
 * any program runs. 0, or -1 with a message in err. */
int vm_map_bind_dev(struct vm *vm, struct vm_map *m, void *table, uint32_t key_size,
		    uint32_t value_size, uint32_t max_entries, char *err, size_t errlen);

/* Consumes the records of every ring buffer map in order, calling
 * cb(arg, data, len) on each under the VM's recursive lock: cb may call
 * vm_map_* (a print record reads its map). A nonzero return stops after
 * that record. Returns the count of records seen. */
int vm_ring_drain(struct vm *vm, int (*cb)(void *arg, const void *data, size_t len),
		  void *arg);

#endif
