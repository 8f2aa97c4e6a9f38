/* What a call into an attached policy's hook returns when the policy
 * did not run. */
#ifndef GPUX_KMOD_HOOK_STATUS_H
#define GPUX_KMOD_HOOK_STATUS_H

#define KMOD_NO_POLICY (-1) /* none attached (or detached since the run began) */
#define KMOD_NO_HOOK (-2)   /* the attached policy has no such member */

#endif
