/* What the running kernel lets BPF programs do, asked of the kernel
 * itself (libbpf's probes load a tiny program or map of each kind), for
 * `gpux --info`. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "kattach.h"

enum how { HELPER, MAP, PROG, LOOP, PMU, ITER, BTF_FUNC };

static const struct {
	enum kattach_group group;
	const char *name;
	enum how how;
	int id;
} checks[] = {
	{ KF_HELPER, "probe_read", HELPER, BPF_FUNC_probe_read },
	{ KF_HELPER, "probe_read_str", HELPER, BPF_FUNC_probe_read_str },
	{ KF_HELPER, "probe_read_user", HELPER, BPF_FUNC_probe_read_user },
	{ KF_HELPER, "probe_read_user_str", HELPER, BPF_FUNC_probe_read_user_str },
	{ KF_HELPER, "probe_read_kernel", HELPER, BPF_FUNC_probe_read_kernel },
	{ KF_HELPER, "probe_read_kernel_str", HELPER, BPF_FUNC_probe_read_kernel_str },
	{ KF_HELPER, "get_current_cgroup_id", HELPER, BPF_FUNC_get_current_cgroup_id },
	{ KF_HELPER, "send_signal", HELPER, BPF_FUNC_send_signal },
	{ KF_HELPER, "override_return", HELPER, BPF_FUNC_override_return },
	{ KF_HELPER, "get_boot_ns", HELPER, BPF_FUNC_ktime_get_boot_ns },
	{ KF_HELPER, "ringbuf_output", HELPER, BPF_FUNC_ringbuf_output },
	{ KF_HELPER, "dpath", BTF_FUNC, 0 }, /* path(), in iterators */
	{ KF_FEATURE, "Loop support", LOOP, 0 },
	{ KF_MAP, "hash", MAP, BPF_MAP_TYPE_HASH },
	{ KF_MAP, "percpu hash", MAP, BPF_MAP_TYPE_PERCPU_HASH },
	{ KF_MAP, "array", MAP, BPF_MAP_TYPE_ARRAY },
	{ KF_MAP, "percpu array", MAP, BPF_MAP_TYPE_PERCPU_ARRAY },
	{ KF_MAP, "stack_trace", MAP, BPF_MAP_TYPE_STACK_TRACE },
	{ KF_MAP, "perf_event_array", MAP, BPF_MAP_TYPE_PERF_EVENT_ARRAY },
	{ KF_MAP, "ringbuf", MAP, BPF_MAP_TYPE_RINGBUF },
	{ KF_PROG, "kprobe", PMU, 0 },
	{ KF_PROG, "uprobe", PMU, 1 },
	{ KF_PROG, "tracepoint", PROG, BPF_PROG_TYPE_TRACEPOINT },
	{ KF_PROG, "perf_event", PROG, BPF_PROG_TYPE_PERF_EVENT },
	{ KF_PROG, "struct_ops", PROG, BPF_PROG_TYPE_STRUCT_OPS },
	{ KF_PROG, "iter:task", ITER, 0 },
	{ KF_PROG, "iter:task_file", ITER, 0 },
	{ KF_PROG, "iter:task_vma", ITER, 0 },
};

/* kprobes and uprobes attach through the kernel's perf PMU of that name,
 * else through tracefs's <name>_events: a kernel may have neither, and
 * load kprobe programs all the same. */
static bool pmu_attach(int which)
{
	static const char *const pmu[] = { "/sys/bus/event_source/devices/kprobe/type",
					   "/sys/bus/event_source/devices/uprobe/type" };
	static const char *const events[][2] = {
		{ "/sys/kernel/tracing/kprobe_events", "/sys/kernel/debug/tracing/kprobe_events" },
		{ "/sys/kernel/tracing/uprobe_events", "/sys/kernel/debug/tracing/uprobe_events" },
	};
	if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_KPROBE, NULL) <= 0)
		return false;
	return access(pmu[which], F_OK) == 0 || access(events[which][0], F_OK) == 0 ||
	       access(events[which][1], F_OK) == 0;
}

/* Whether the kernel loads prog, a program of type t (o not const: the
 * guest's libbpf 1.4 takes it so). */
static bool loads(enum bpf_prog_type t, const struct bpf_insn *prog, size_t n,
		  struct bpf_prog_load_opts *o)
{
	int fd = bpf_prog_load(t, NULL, "GPL", prog, n, o);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* A counted loop: the verifier takes backward jumps from kernel 5.3. */
static bool loops_load(void)
{
	const struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_JLT | BPF_K, .dst_reg = BPF_REG_0, .off = -2, .imm = 4 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	return loads(BPF_PROG_TYPE_KPROBE, prog, sizeof(prog) / sizeof(prog[0]), NULL);
}

/* An iterator program of kind ("iter:KIND", bpftrace's name for it)
 * loads: the kernel has the iterator, and BTF to name it by. */
static bool iter_loads(const char *name)
{
	int id = libbpf_find_vmlinux_btf_id(name + strlen("iter:"), BPF_TRACE_ITER);
	if (id <= 0)
		return false;
	const struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_ITER,
		    .attach_btf_id = (unsigned)id);
	return loads(BPF_PROG_TYPE_TRACING, prog, sizeof(prog) / sizeof(prog[0]), &o);
}

int kattach_features(struct kattach_feature *out, int max)
{
	int n = 0;
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]) && n < max; i++) {
		int yes = 0;
		switch (checks[i].how) {
		case HELPER:
			yes = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, checks[i].id, NULL);
			break;
		case MAP:
			yes = libbpf_probe_bpf_map_type(checks[i].id, NULL);
			break;
		case PROG:
			yes = libbpf_probe_bpf_prog_type(checks[i].id, NULL);
			break;
		case LOOP:
			yes = loops_load();
			break;
		case PMU:
			yes = pmu_attach(checks[i].id);
			break;
		case ITER:
			yes = iter_loads(checks[i].name);
			break;
		case BTF_FUNC: /* the helper's function is in the kernel's BTF */
			yes = libbpf_find_vmlinux_btf_id("bpf_d_path", BPF_TRACE_FENTRY) > 0;
			break;
		}
		out[n++] = (struct kattach_feature){ checks[i].group, checks[i].name, yes > 0 };
	}
	return n;
}
