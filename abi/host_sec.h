/* Contract between host lowering and the userspace VMs that run its
 * programs: the ELF sections of the programs that do not go to the
 * kernel.
 *   Writer: codegen/host_probe.c names each program's section.
 *   Readers: the VM (vm/bpf_vm_elf.c) loads every HOST_SEC_PREFIX
 *   program; the controller (cli/) runs BEGIN, END and interval ones;
 *   the runtime in the traced process (runtime/rt_host.c) the cuda: ones.
 * Kernel programs keep libbpf's names (uprobe/, tracepoint/, struct_ops/). */
#ifndef GPUX_HOST_SEC_H
#define GPUX_HOST_SEC_H

#define HOST_SEC_PREFIX "gpux/"
#define HOST_SEC_BEGIN "gpux/begin"
#define HOST_SEC_END "gpux/end"
/* then the period in ns, in decimal: "gpux/interval/1000000" */
#define HOST_SEC_INTERVAL "gpux/interval/"
/* then the event's catalog name (GPUX_CEV_NAMES), and ":GLOB" if the
 * probe has a filter: "gpux/cuda/launch:*gemm*" */
#define HOST_SEC_CUDA "gpux/cuda/"

#endif
