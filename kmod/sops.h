/* What each of the module's struct_ops types does the same way: one
 * policy attached at a time (a second gets -EBUSY, as the driver),
 * RCU so that a detached policy is never called once unreg returns, and
 * the verifier's view of the programs (their context: the hook's
 * arguments, typed by BTF; the base helpers, and the current task's
 * comm and pid as the driver's hooks have them). Header-only, for each
 * module's *_ops.c: the two modules (nvidia_uvm, nvidia) each build it
 * in. */
#ifndef GPUX_KMOD_SOPS_H
#define GPUX_KMOD_SOPS_H

#include <linux/bpf.h>
#include <linux/bpf_verifier.h>
#include <linux/btf.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "hook_status.h"

struct kmod_sops_slot {
	void __rcu *attached;
	struct mutex lock;
};

static inline int kmod_sops_reg(struct kmod_sops_slot *s, void *kdata)
{
	int rc = 0;

	mutex_lock(&s->lock);
	if (rcu_access_pointer(s->attached))
		rc = -EBUSY;
	else
		rcu_assign_pointer(s->attached, kdata);
	mutex_unlock(&s->lock);
	return rc;
}

static inline void kmod_sops_unreg(struct kmod_sops_slot *s, void *kdata)
{
	mutex_lock(&s->lock);
	if (rcu_access_pointer(s->attached) == kdata)
		RCU_INIT_POINTER(s->attached, NULL);
	mutex_unlock(&s->lock);
	synchronize_rcu(); /* no hook runs the detached programs after this */
}

static inline bool kmod_sops_valid_access(int off, int size, enum bpf_access_type type,
					  const struct bpf_prog *prog,
					  struct bpf_insn_access_aux *info)
{
	return bpf_tracing_btf_ctx_access(off, size, type, prog, info);
}

/* bpf_get_current_comm and bpf_get_current_pid_tgid, which the kernel
 * gives tracing programs but not struct_ops' base set (policies key
 * tenants by comm) */
static u64 kmod_current_comm(u64 buf, u64 size, u64 r3, u64 r4, u64 r5)
{
	strscpy_pad((char *)(unsigned long)buf, current->comm, (size_t)size);
	return 0;
}

static u64 kmod_current_pid_tgid(u64 r1, u64 r2, u64 r3, u64 r4, u64 r5)
{
	return (u64)current->tgid << 32 | (u32)current->pid;
}

static const struct bpf_func_proto kmod_comm_proto = {
	.func = kmod_current_comm,
	.ret_type = RET_INTEGER,
	.arg1_type = ARG_PTR_TO_UNINIT_MEM,
	.arg2_type = ARG_CONST_SIZE,
};

static const struct bpf_func_proto kmod_pid_tgid_proto = {
	.func = kmod_current_pid_tgid,
	.ret_type = RET_INTEGER,
};

static const struct bpf_func_proto *kmod_sops_func_proto(enum bpf_func_id id,
							const struct bpf_prog *prog)
{
	switch (id) {
	case BPF_FUNC_get_current_comm:
		return &kmod_comm_proto;
	case BPF_FUNC_get_current_pid_tgid:
		return &kmod_pid_tgid_proto;
	default:
		return bpf_base_func_proto(id, prog);
	}
}

static const struct bpf_verifier_ops kmod_sops_verifier = {
	.get_func_proto = kmod_sops_func_proto,
	.is_valid_access = kmod_sops_valid_access,
};

/* ops_reg and ops_unreg of a struct_ops type whose policy slot holds */
#define KMOD_SOPS_REG(slot)                                                    \
	static int ops_reg(void *kdata, struct bpf_link *link)                 \
	{                                                                      \
		return kmod_sops_reg(&(slot), kdata);                          \
	}                                                                      \
	static void ops_unreg(void *kdata, struct bpf_link *link)              \
	{                                                                      \
		kmod_sops_unreg(&(slot), kdata);                               \
	}

static inline int kmod_sops_init(struct btf *btf)
{
	return 0;
}

static inline int kmod_sops_init_member(const struct btf_type *t, const struct btf_member *member,
					void *kdata, const void *udata)
{
	return 0; /* function pointers only: the kernel fills them */
}

/* s's policy's member called with the arguments, under RCU: what it
 * returned, KMOD_NO_POLICY or KMOD_NO_HOOK */
#define KMOD_SOPS_CALL(s, type, member, ...)                                   \
	({                                                                     \
		int r_ = KMOD_NO_POLICY;                                       \
		type *o_;                                                      \
		rcu_read_lock();                                               \
		o_ = rcu_dereference((s)->attached);                           \
		if (o_)                                                        \
			r_ = o_->member ? o_->member(__VA_ARGS__) : KMOD_NO_HOOK; \
		rcu_read_unlock();                                             \
		r_;                                                            \
	})

#endif
