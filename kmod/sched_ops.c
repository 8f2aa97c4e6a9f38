// SPDX-License-Identifier: GPL-2.0
/* struct nv_gpu_sched_ops registered with BPF as gpu_ext's nvidia module
 * does, its kfuncs, and the runner's calls into the attached policy. */
#include <linux/btf_ids.h>
#include <linux/module.h>

#include "sched_ops.h"
#include "sops.h"

static struct kmod_sops_slot slot = { .lock = __MUTEX_INITIALIZER(slot.lock) };
static const struct kmod_sched_env *env;

void kmod_sched_set_env(const struct kmod_sched_env *e)
{
	WRITE_ONCE(env, e);
}

bool kmod_sched_attached(void)
{
	return rcu_access_pointer(slot.attached) != NULL;
}

#define CALL(member, ...) KMOD_SOPS_CALL(&slot, struct nv_gpu_sched_ops, member, __VA_ARGS__)

int kmod_sched_task_init(struct nv_gpu_task_init_ctx *ctx)
{
	return CALL(on_task_init, ctx);
}

int kmod_sched_bind(struct nv_gpu_bind_ctx *ctx)
{
	return CALL(on_bind, ctx);
}

int kmod_sched_task_destroy(struct nv_gpu_task_destroy_ctx *ctx)
{
	return CALL(on_task_destroy, ctx);
}

/* ---- kfuncs: on the TSG of the hook being run ---- */

__bpf_kfunc_start_defs();

__bpf_kfunc int bpf_nv_gpu_set_timeslice(struct nv_gpu_task_init_ctx *ctx, u64 value)
{
	const struct kmod_sched_env *e = READ_ONCE(env);

	if (!e || !e->set_timeslice(e->arg, value))
		return -EINVAL;
	ctx->default_timeslice = value;
	return 0;
}

__bpf_kfunc int bpf_nv_gpu_set_interleave(struct nv_gpu_task_init_ctx *ctx, u32 value)
{
	const struct kmod_sched_env *e = READ_ONCE(env);

	if (!e || !e->set_interleave(e->arg, value))
		return -EINVAL;
	ctx->default_interleave = value;
	return 0;
}

__bpf_kfunc void bpf_nv_gpu_reject_bind(struct nv_gpu_bind_ctx *ctx)
{
	const struct kmod_sched_env *e = READ_ONCE(env);

	if (e)
		e->reject(e->arg);
	ctx->allow = 0;
}

__bpf_kfunc int bpf_nv_gpu_override_timeslice(struct nv_gpu_timeslice_control_ctx *ctx, u64 value)
{
	return -EOPNOTSUPP; /* the model has no timeslice control point */
}

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(sched_kfunc_ids)
BTF_ID_FLAGS(func, bpf_nv_gpu_set_timeslice)
BTF_ID_FLAGS(func, bpf_nv_gpu_set_interleave)
BTF_ID_FLAGS(func, bpf_nv_gpu_reject_bind)
BTF_ID_FLAGS(func, bpf_nv_gpu_override_timeslice)
BTF_KFUNCS_END(sched_kfunc_ids)

static const struct btf_kfunc_id_set sched_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &sched_kfunc_ids,
};

/* ---- struct_ops ---- */

KMOD_SOPS_REG(slot)

static int stub_init(struct nv_gpu_task_init_ctx *ctx)
{
	return 0;
}

static int stub_bind(struct nv_gpu_bind_ctx *ctx)
{
	return 0;
}

static int stub_destroy(struct nv_gpu_task_destroy_ctx *ctx)
{
	return 0;
}

static int stub_timeslice(struct nv_gpu_timeslice_control_ctx *ctx)
{
	return 0;
}

static struct nv_gpu_sched_ops ops_stubs = {
	.on_task_init = stub_init,
	.on_bind = stub_bind,
	.on_task_destroy = stub_destroy,
	.on_timeslice_control = stub_timeslice,
};

static struct bpf_struct_ops bpf_nv_gpu_sched_ops = {
	.verifier_ops = &kmod_sops_verifier,
	.init = kmod_sops_init,
	.init_member = kmod_sops_init_member,
	.reg = ops_reg,
	.unreg = ops_unreg,
	.cfi_stubs = &ops_stubs,
	.name = "nv_gpu_sched_ops",
	.owner = THIS_MODULE,
};

int kmod_sched_ops_init(void)
{
	int rc = register_btf_kfunc_id_set(BPF_PROG_TYPE_STRUCT_OPS, &sched_kfunc_set);

	if (rc)
		return rc;
	return register_bpf_struct_ops(&bpf_nv_gpu_sched_ops, nv_gpu_sched_ops);
}
