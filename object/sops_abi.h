/* The driver struct_ops ABIs a compiled program's driver probes bind to
 * (docs/ARCHITECTURE.md, "Driver policies"): each hook's fields, as read
 * from its arguments, the kfuncs its actions call, and the built-in
 * ABIs gpux knows without a driver (sops_abi.c), which the simulator
 * runs and --dry-run checks against. Binding them to a running driver's
 * BTF is codegen's (llvm_host.h, host_bind.c). */
#ifndef GPUX_SOPS_ABI_H
#define GPUX_SOPS_ABI_H

#include <stdbool.h>

#include "ast.h"

/* How a catalog field of a hook is read from the struct_ops context, an
 * array of u64 arguments: v = ctx[arg]; then for each of the nloads
 * offsets, v = *(u64 *)(v + off[i]), the last load reading size bytes;
 * then v += add (a container_of, as "head" from a list_head). path
 * spells the same in C from the argument's pointee ("->va_block->start",
 * "" for the argument itself) for binding by BTF (codegen/host_bind.c),
 * which recomputes off[] and size against the running driver, and add
 * from container ("STRUCT.MEMBER": add = -offsetof(STRUCT, MEMBER)). */
#define HOST_SOPS_LOADS 8
struct host_sops_field {
	const char *name; /* catalog field, "ctx" for the raw argument */
	int arg;
	const char *path;
	int nloads;
	unsigned off[HOST_SOPS_LOADS];
	unsigned size;
	long add;
	const char *container;
};

/* A field's arg when the hook's own arguments lack it and a kprobe on
 * the driver function that calls the hook reads it instead (struct
 * host_sops_capture): gpu_ext's prefetch policies learn the faulting VA
 * block the same way. */
#define HOST_SOPS_CAPTURED (-1)

struct host_sops_hook {
	const char *event;  /* "gpu_mem:access" */
	const char *member; /* "uvm_pmm_chunk_used" */
	struct host_sops_field fields[8];
	int nfields;
	int nargs;          /* the member's parameters */
};

/* A policy action as a kfunc call. Arguments name a value each: "$0",
 * "$1" for the action's arguments, "=N" for the constant N, else a
 * field of the hook. */
struct host_sops_kfunc {
	enum action_id action;
	const char *name; /* "bpf_uvm_pmm_chunk_move_tail" */
	const char *args[3];
	int nargs;
	/* non-NULL: the kfunc acts on the hook's own object, this field,
	 * which must then be the action's argument (gpu_ext's decision
	 * contexts); NULL: on the argument given */
	const char *self;
	/* Bound from BTF: the kernel's prototype, which libbpf matches the
	 * object's extern declaration against (void or an integer return;
	 * each argument an integer, ptr_to NULL, or a pointer to the struct
	 * named, "" for any other pointee). The built-ins declare
	 * long f(void *, ...). */
	bool bound;
	bool ret_void;
	const char *ptr_to[3];
};

/* The fields hooks read as HOST_SOPS_CAPTURED: the kprobe on func reads
 * each from func's arguments (arg: the parameter; paths as above, read
 * with bpf_probe_read_kernel) into slot i (its index here) of the per-CPU
 * array HOST_CAPTURE_MAP, and a hook reads the slot back. The kprobe runs
 * on the CPU, and just before, the hook does. */
#define HOST_CAPTURE_MAP "gpux_capture"
/* x86-64 struct pt_regs: the offsets of the six argument registers,
 * where the kprobe reads arg 0..5 */
#define HOST_PT_REGS_ARGS { 112, 104, 96, 88, 72, 64 }
#define HOST_PT_REGS_SIZE 168
#define HOST_CAPTURE_PROG "gpux_capture_kprobe"
struct host_sops_capture {
	const char *func; /* "uvm_perf_prefetch_get_hint_va_block" */
	struct host_sops_field fields[4];
	int nfields;
};

struct host_sops_abi {
	const char *struct_name;     /* "uvm_gpu_ext" */
	const char *provider;        /* "gpu_mem" */
	const char *const *members;  /* every function pointer, in order; NULL-ended */
	const struct host_sops_hook *hooks;
	int nhooks;
	const struct host_sops_kfunc *kfuncs;
	int nkfuncs;
	const struct host_sops_capture *capture; /* NULL: none */
	/* a struct BTF must also have for this ABI to bind (NULL: none):
	 * tells ABIs of one struct name apart */
	const char *requires;
};

/* The shapes gpux knows without a driver (sops_abi.c): what it
 * compiles against when no driver BTF is found, and what the simulator
 * runs. */
extern const struct host_sops_abi host_abi_uvm_gpu_ext;
extern const struct host_sops_abi host_abi_gpu_mem_ops;
extern const struct host_sops_abi host_abi_gpu_mem_decision;
extern const struct host_sops_abi host_abi_nv_gpu_sched;

#endif
