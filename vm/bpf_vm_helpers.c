/* Helpers of the VM, with the kernel's ids and return conventions. The
 * "current task" is the process running the VM: the controller for
 * BEGIN/END/interval, the CUDA program for cuda: probes in the preloaded
 * runtime. Pointer arguments are checked like loads and stores; a bad
 * map argument stops the program (the kernel's verifier would have
 * refused it), a failing operation returns a negative errno to it. */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bpf_vm_priv.h"
#include "driver_kfuncs.h"
#include "cuda_actions.h"

static struct umap *map_arg(struct vm_exec *x, uint64_t h, int id)
{
	uint64_t i = h - VM_MAP_HANDLE_BASE;
	if (h < VM_MAP_HANDLE_BASE || i >= (uint64_t)x->vm->nmaps) {
		vm_fault(x, VM_EHELPER, "helper %d: r1 is not a map", id);
		return NULL;
	}
	struct umap *m = &x->vm->maps[i].u;
	bool ring = m->type == BPF_M_RINGBUF;
	if (ring != (id == BPF_H_RINGBUF_OUTPUT)) {
		vm_fault(x, VM_EHELPER, "helper %d: wrong kind of map (%s)", id, m->name);
		return NULL;
	}
	return m;
}

/* A value pointer handed to the program: it may now load and store in it. */
static void note_value(struct vm_exec *x, uint64_t p, uint32_t size)
{
	for (unsigned i = 0; i < x->nval && i < VM_LIVE_VALUES; i++)
		if (x->val[i] == p)
			return;
	unsigned slot = x->nval++ % VM_LIVE_VALUES;
	x->val[slot] = p;
	x->val_size[slot] = size;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t next_rand(struct vm *vm)
{
	uint64_t s = vm->rand_state;
	while (!s && getrandom(&s, sizeof(s), 0) != (ssize_t)sizeof(s))
		s = (uint64_t)clock_ns(CLOCK_MONOTONIC) ^ (uint64_t)getpid() << 32;
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	vm->rand_state = s;
	return (uint32_t)(s >> 32);
}

/* The cgroup v2 id of this process, as bpf_get_current_cgroup_id gives
 * it: the inode of its folder under /sys/fs/cgroup (0 where there is
 * none, as on a cgroup v1 system). */
static uint64_t own_cgroup(void)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	if (!f)
		return 0;
	char line[PATH_MAX], path[PATH_MAX + 32];
	uint64_t id = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, sizeof(path), "/sys/fs/cgroup%s", line + 3);
		struct stat st;
		if (!stat(path, &st))
			id = (uint64_t)st.st_ino;
		break;
	}
	fclose(f);
	return id;
}

/* Reads the process's own memory through the kernel, so that a bad
 * address is -EFAULT rather than a crash of the host. */
static long read_self(void *dst, uint64_t src, size_t n)
{
	struct iovec local = { dst, n };
	struct iovec remote = { (void *)(uintptr_t)src, n };
	ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	return got < 0 ? -errno : (long)got;
}

static int64_t read_user_str(char *dst, uint32_t size, uint64_t src)
{
	/* byte-wise after a short read: a string may end just before an
	 * unmapped page */
	long got = read_self(dst, src, size);
	if (got < (long)size) {
		for (got = 0; got < (long)size && read_self(dst + got, src + (uint64_t)got, 1) == 1; got++)
			if (!dst[got])
				break;
		if (got == 0)
			return -EFAULT;
	}
	for (uint32_t i = 0; i < size; i++)
		if (i < (uint32_t)got && !dst[i])
			return i + 1;
	dst[size - 1] = 0;
	return size;
}

int vm_helper(struct vm_exec *x, int32_t id)
{
	uint64_t *r = x->reg;
	struct umap *m;
	void *k, *v;
	switch (id) {
	case BPF_H_MAP_LOOKUP:
	case BPF_H_MAP_UPDATE:
	case BPF_H_MAP_DELETE:
		if (!(m = map_arg(x, r[1], id)))
			return VM_EHELPER;
		if (!(k = vm_mem(x, r[2], m->key_size, false)))
			return VM_EFAULT;
		if (id == BPF_H_MAP_LOOKUP) {
			r[0] = (uint64_t)(uintptr_t)umap_lookup(m, k);
			if (r[0])
				note_value(x, r[0], m->value_size);
		} else if (id == BPF_H_MAP_DELETE) {
			r[0] = (uint64_t)(int64_t)umap_delete(m, k);
		} else {
			if (!(v = vm_mem(x, r[3], m->value_size, false)))
				return VM_EFAULT;
			r[0] = (uint64_t)(int64_t)umap_update(m, k, v, r[4]);
		}
		return 0;
	case BPF_H_TRACE_PRINTK:
		r[0] = (uint64_t)vm_trace_printk(x, r);
		return 0;
	case BPF_H_RINGBUF_OUTPUT:
		if (!(m = map_arg(x, r[1], id)))
			return VM_EHELPER;
		if (!(v = vm_mem(x, r[2], r[3], false)))
			return VM_EFAULT;
		r[0] = (uint64_t)(int64_t)umap_ring_output(m, v, r[3]);
		return 0;
	case BPF_H_KTIME_GET_NS:
		r[0] = x->vm->clock ? x->vm->clock(x->vm->clock_arg) : clock_ns(CLOCK_MONOTONIC);
		return 0;
	case BPF_H_KTIME_GET_BOOT_NS:
		r[0] = x->vm->clock ? x->vm->clock(x->vm->clock_arg) : clock_ns(CLOCK_BOOTTIME);
		return 0;
	case BPF_H_GET_SMP_PROCESSOR_ID: {
		int cpu = sched_getcpu();
		r[0] = cpu < 0 ? 0 : (uint64_t)cpu;
		return 0;
	}
	case BPF_H_GET_CURRENT_PID_TGID:
		r[0] = x->vm->task_set ? (uint64_t)x->vm->task_pid << 32 | x->vm->task_pid
				       : vm_task_pid_tgid();
		return 0;
	case BPF_H_GET_PRANDOM_U32:
		r[0] = next_rand(x->vm);
		return 0;
	case BPF_H_GET_NUMA_NODE_ID: {
		unsigned cpu, node;
		r[0] = getcpu(&cpu, &node) ? 0 : node;
		return 0;
	}
	case BPF_H_GET_CURRENT_CGROUP_ID:
		if (!x->vm->cgroup_read) {
			x->vm->cgroup_id = own_cgroup();
			x->vm->cgroup_read = true;
		}
		r[0] = x->vm->cgroup_id;
		return 0;
	case BPF_H_GET_CURRENT_UID_GID:
		r[0] = (uint64_t)getgid() << 32 | (uint32_t)getuid();
		return 0;
	case BPF_H_GET_CURRENT_COMM: {
		char comm[17] = { 0 };
		if (!(v = vm_mem(x, r[1], (uint32_t)r[2], true)))
			return VM_EFAULT;
		if (x->vm->task_set)
			memcpy(comm, x->vm->task_comm, 16);
		else
			vm_task_comm(comm);
		size_t n = (uint32_t)r[2];
		memset(v, 0, n);
		memcpy(v, comm, n - 1 < 16 ? n - 1 : 16);
		r[0] = 0;
		return 0;
	}
	case BPF_H_PROBE_READ: /* either address space: a driver program's
				* the embedder's, as a kernel read; else gpux's own */
		return vm_helper(x, x->vm->driver ? BPF_H_PROBE_READ_KERNEL : BPF_H_PROBE_READ_USER);
	case BPF_H_PROBE_READ_USER:
	case BPF_H_PROBE_READ_USER_STR: {
		uint32_t n = (uint32_t)r[2];
		if (!(v = vm_mem(x, r[1], n, true)))
			return VM_EFAULT;
		if (id == BPF_H_PROBE_READ_USER_STR) {
			r[0] = (uint64_t)read_user_str(v, n, r[3]);
			return 0;
		}
		long got = read_self(v, r[3], n);
		if (got != (long)n)
			memset(v, 0, n);
		r[0] = got == (long)n ? 0 : (uint64_t)(int64_t)-EFAULT;
		return 0;
	}
	case BPF_H_PROBE_READ_KERNEL: {
		/* kernel memory, to a driver program in the VM, is what the
		 * embedder lays out in the context: elsewhere the read fails
		 * and zeroes, as in the kernel */
		uint32_t n = (uint32_t)r[2];
		if (!(v = vm_mem(x, r[1], n, true)))
			return VM_EFAULT;
		const void *src = vm_reach(x, r[3], n, false);
		if (src)
			memmove(v, src, n);
		else
			memset(v, 0, n);
		r[0] = src ? 0 : (uint64_t)(int64_t)-EFAULT;
		return 0;
	}
	default:
		if ((id >= GPUX_H_FIRST && id < GPUX_H_END) ||
		    (x->vm->driver && id >= GPUX_K_FIRST && id < GPUX_K_END)) {
			if (!x->vm->ext)
				return vm_fault(x, VM_EHELPER, "helper %d is served only in the "
					       "traced program or the simulator", id);
			r[0] = x->vm->ext(x->vm->ext_arg, id, &r[1]);
			return 0;
		}
		return vm_fault(x, VM_EHELPER, "unknown helper %d", id);
	}
}
