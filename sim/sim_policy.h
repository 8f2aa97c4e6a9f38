/* A driver policy in the simulator: its struct_ops programs (the very
 * ones of its host object) run in the userspace VM as the model's hooks,
 * their contexts laid out as the ABI they were compiled against says,
 * their kfuncs served by the model (sim/uvm.h, sim/timeslice.h). */
#ifndef GPUX_SIM_POLICY_H
#define GPUX_SIM_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "host_obj.h"
#include "sops_abi.h"
#include "timeslice.h"
#include "uvm.h"
#include "workload.h"

struct sim_policy;

/* The ABIs policies are compiled against for the simulator. */
extern const struct host_sops_abi *const sim_abis[];
extern const int sim_nabis;

/* Loads obj's programs. chunks: the model's chunk count (contexts are
 * laid out per chunk). 0 with *out, or -1 with a message in err. */
int sim_policy_new(const struct host_obj *obj, uint32_t chunks,
		   const struct wl_tenant *tenants, int ntenants,
		   struct sim_policy **out, char *err, size_t errlen);
void sim_policy_free(struct sim_policy *p);

/* The model's hooks bound to this policy (NULL where it has no probe). */
void sim_policy_uvm_hooks(struct sim_policy *p, struct uvm_policy *hooks);
void sim_policy_set_model(struct sim_policy *p, struct uvm *u);
bool sim_policy_has_sched(const struct sim_policy *p);
void sim_policy_sched_hooks(struct sim_policy *p, struct sched_policy *hooks);

/* BEGIN before the workload, END after it: 0, or -1 with a message. */
int sim_policy_begin(struct sim_policy *p, char *err, size_t errlen);
int sim_policy_end(struct sim_policy *p, char *err, size_t errlen);
/* Runs the interval probes due at the model's time now_ns. */
void sim_policy_tick(struct sim_policy *p, uint64_t now_ns);
/* Programs that failed (the default then stood), and the first message. */
uint64_t sim_policy_failures(const struct sim_policy *p, const char **first);
/* Where the programs' ring records go (printf, print(), exit()...), as
 * the VM drains them; dropped until this is set. */
typedef int (*sim_rec_fn)(void *arg, const void *data, size_t len);
void sim_policy_set_output(struct sim_policy *p, sim_rec_fn fn, void *arg);
/* The VM holding the policy's maps, for printing them. */
struct vm *sim_policy_vm(struct sim_policy *p);

#endif
