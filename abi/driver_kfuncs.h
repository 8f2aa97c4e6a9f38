/* Contract between driver-probe lowering, the userspace VM and the
 * policy simulator: the gpu_ext driver's kfuncs, by the names each of
 * its ABIs gives them, and the ids the VM serves them under.
 *   Writers: codegen's host lowering calls the kfuncs by name (extern
 *   symbols in ".ksyms", resolved by the kernel at load).
 *   Readers: the VM (vm/bpf_vm_elf.c), when it loads driver programs
 *   to run off the driver, turns a call of one of these names into a
 *   call of its id; the simulator (sim/) serves the ids through the
 *   VM's extension hook. Arguments keep the kernel's order. */
#ifndef GPUX_DRIVER_KFUNCS_H
#define GPUX_DRIVER_KFUNCS_H

#include <stddef.h>
#include <string.h>

/* Ids above the cuda: helpers' (abi/cuda_actions.h). */
enum gpux_kfunc {
	GPUX_K_FIRST = 0x47600,
	GPUX_K_MOVE_HEAD = GPUX_K_FIRST, /* (chunk, list): evicted next */
	GPUX_K_MOVE_TAIL,                /* (chunk, list): evicted last */
	GPUX_K_SET_PREFETCH_REGION,      /* (result_region, first, outer) */
	GPUX_K_SET_TIMESLICE,            /* (ctx, microseconds) */
	GPUX_K_SET_INTERLEAVE,           /* (ctx, level) */
	GPUX_K_REJECT_BIND,              /* (ctx) */
	GPUX_K_END
};

struct gpux_kfunc_name {
	const char *name;
	enum gpux_kfunc id;
};

/* Every spelling of every ABI; a name not here is not a gpu_ext kfunc. */
static const struct gpux_kfunc_name gpux_kfunc_names[] = {
	{ "bpf_uvm_pmm_chunk_move_head", GPUX_K_MOVE_HEAD },
	{ "bpf_uvm_pmm_chunk_move_tail", GPUX_K_MOVE_TAIL },
	{ "bpf_uvm_set_va_block_region", GPUX_K_SET_PREFETCH_REGION },
	{ "bpf_gpu_block_move_head", GPUX_K_MOVE_HEAD },
	{ "bpf_gpu_block_move_tail", GPUX_K_MOVE_TAIL },
	{ "bpf_gpu_set_prefetch_region", GPUX_K_SET_PREFETCH_REGION },
	{ "bpf_nv_gpu_set_timeslice", GPUX_K_SET_TIMESLICE },
	{ "bpf_nv_gpu_set_interleave", GPUX_K_SET_INTERLEAVE },
	{ "bpf_nv_gpu_reject_bind", GPUX_K_REJECT_BIND },
};

/* The id of kfunc name, or -1. */
static inline int gpux_kfunc_id(const char *name)
{
	for (size_t i = 0; i < sizeof(gpux_kfunc_names) / sizeof(gpux_kfunc_names[0]); i++)
		if (!strcmp(gpux_kfunc_names[i].name, name))
			return (int)gpux_kfunc_names[i].id;
	return -1;
}

#endif
