/* Contract between the host lowering and the userspace VM: the kernel's
 * BPF helper ids and map types (include/uapi/linux/bpf.h) that gpux's
 * host objects use.
 *   Writers: codegen's host lowering calls these helpers and declares
 *   maps of these types.
 *   Readers: the VM (vm/), which serves the helpers it implements and
 *   holds the map types it knows when it runs an object off the kernel;
 *   the kernel reads the same numbers. */
#ifndef GPUX_BPF_IDS_H
#define GPUX_BPF_IDS_H

enum bpf_helper_id {
	BPF_H_MAP_LOOKUP = 1,
	BPF_H_MAP_UPDATE = 2,
	BPF_H_MAP_DELETE = 3,
	BPF_H_PROBE_READ = 4, /* either address space (x86-64) */
	BPF_H_KTIME_GET_NS = 5,
	BPF_H_TRACE_PRINTK = 6,
	BPF_H_GET_PRANDOM_U32 = 7,
	BPF_H_GET_SMP_PROCESSOR_ID = 8,
	BPF_H_GET_CURRENT_PID_TGID = 14,
	BPF_H_GET_CURRENT_UID_GID = 15,
	BPF_H_GET_CURRENT_COMM = 16,
	BPF_H_GET_STACKID = 27,
	BPF_H_GET_CURRENT_TASK = 35,
	BPF_H_GET_NUMA_NODE_ID = 42,
	BPF_H_GET_CURRENT_CGROUP_ID = 80,
	BPF_H_SEND_SIGNAL = 109,
	BPF_H_PROBE_READ_USER = 112,
	BPF_H_PROBE_READ_KERNEL = 113,
	BPF_H_PROBE_READ_USER_STR = 114,
	BPF_H_PROBE_READ_KERNEL_STR = 115,
	BPF_H_JIFFIES64 = 118,
	BPF_H_KTIME_GET_BOOT_NS = 125,
	BPF_H_SEQ_PRINTF = 126,
	BPF_H_SEQ_WRITE = 127,
	BPF_H_RINGBUF_OUTPUT = 130,
	BPF_H_RINGBUF_RESERVE = 131,
	BPF_H_RINGBUF_SUBMIT = 132,
	BPF_H_D_PATH = 147,
	BPF_H_GET_ATTACH_COOKIE = 174,
};

enum bpf_map_type_id {
	BPF_M_HASH = 1,
	BPF_M_ARRAY = 2,
	BPF_M_PERCPU_HASH = 5,
	BPF_M_PERCPU_ARRAY = 6,
	/* stack traces: only the kernel fills them (ustack, kstack) */
	BPF_M_STACK_TRACE = 7,
	BPF_M_RINGBUF = 27,
};

#endif
