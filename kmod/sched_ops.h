/* gpu_ext's scheduling struct_ops (struct nv_gpu_sched_ops, in the
 * nvidia module), its contexts as the newest gpu_ext defines them, and
 * the calls the runner makes into the attached policy. */
#ifndef GPUX_KMOD_SCHED_OPS_H
#define GPUX_KMOD_SCHED_OPS_H

#include <linux/types.h>

struct nv_gpu_task_init_ctx {
	__u64 tsg_id;
	__u32 engine_type;
	__u64 default_timeslice;  /* us; the policy may change it */
	__u32 default_interleave; /* 0 low, 1 medium, 2 high */
	__u32 runlist_id;
};

struct nv_gpu_bind_ctx {
	__u64 tsg_id;
	__u32 runlist_id;
	__u32 channel_count;
	__u64 timeslice_us;
	__u32 interleave_level;
	__u32 allow;              /* 0 after bpf_nv_gpu_reject_bind */
};

struct nv_gpu_task_destroy_ctx {
	__u64 tsg_id;
	__u32 runlist_id;
	__u32 engine_type;
};

struct nv_gpu_timeslice_control_ctx {
	__u64 tsg_id;
	__u64 requested_timeslice_us;
	__u32 engine_type;
};

struct nv_gpu_sched_ops {
	int (*on_task_init)(struct nv_gpu_task_init_ctx *ctx);
	int (*on_bind)(struct nv_gpu_bind_ctx *ctx);
	int (*on_task_destroy)(struct nv_gpu_task_destroy_ctx *ctx);
	int (*on_timeslice_control)(struct nv_gpu_timeslice_control_ctx *ctx);
};

/* What the kfuncs change: the TSG of the hook being run (the runner's;
 * runs are one at a time). */
struct kmod_sched_env {
	void *arg;
	bool (*set_timeslice)(void *arg, u64 us);
	bool (*set_interleave)(void *arg, u64 level);
	void (*reject)(void *arg);
};
void kmod_sched_set_env(const struct kmod_sched_env *env);

int kmod_sched_task_init(struct nv_gpu_task_init_ctx *ctx);
int kmod_sched_bind(struct nv_gpu_bind_ctx *ctx);
int kmod_sched_task_destroy(struct nv_gpu_task_destroy_ctx *ctx);
bool kmod_sched_attached(void);

int kmod_sched_ops_init(void);

#endif
