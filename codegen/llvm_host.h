/* Host-side lowering: the host and driver probes of a checked program go
 * through the LLVM C API and LLVM's BPF backend into one BPF ELF object
 * that libbpf opens (docs/ARCHITECTURE.md). What comes out is described
 * in object/host_obj.h, the driver ABIs it binds to in object/sops_abi.h. */
#ifndef GPUX_LLVM_HOST_H
#define GPUX_LLVM_HOST_H

#include <stdbool.h>
#include <stdio.h>

#include "diag.h"
#include "host_obj.h"
#include "sops_abi.h"

/* ---- binding to the running driver (codegen/host_bind.c, needs libbpf) ---- */

/* tmpl bound to the struct of its name in btf (libbpf's struct btf):
 * members as BTF orders them, hooks whose member BTF lacks dropped,
 * field paths resolved against the members' prototypes (a field that
 * cannot be is dropped), kfuncs kept where BTF has the FUNC (with as
 * many parameters), their prototypes taken from it. 0 with *out
 * (NULL when btf has no such struct; free with host_abi_free), or -1
 * when out of memory. */
struct btf;
int host_bind_abi(const struct host_sops_abi *tmpl, const struct btf *btf,
		  struct host_sops_abi **out);
void host_abi_free(struct host_sops_abi *abi);

/* Driver providers: gpu_mem (struct gpu_mem_ops, else uvm_gpu_ext, in
 * module nvidia_uvm) and gpu_sched (nv_gpu_sched_ops, in nvidia). */
enum { HOST_DRV_MEM, HOST_DRV_SCHED, HOST_DRV_N };

struct host_binding {
	struct host_sops_abi *abi[HOST_DRV_N]; /* NULL: the driver lacks it */
	char why[HOST_DRV_N][512];             /* then what is missing */
};

/* The ABIs of the running driver, from module BTF: $GPUX_BTF_DIR's raw
 * BTF files nvidia_uvm and nvidia (split over its vmlinux when there,
 * else standalone), else /sys/kernel/btf's (over its vmlinux). 0, or -1
 * when out of memory; b is always safe to pass to host_binding_free. */
int host_bind_driver(struct host_binding *b);
void host_binding_free(struct host_binding *b);

struct host_opts {
	/* One ABI per driver provider; NULL means the two built-ins. */
	const struct host_sops_abi *const *abis;
	int nabis;
	bool keep_ir;  /* fill host_obj.ir with the module's text (-d ir) */
	bool optimize; /* run LLVM's O2 pipeline (what the kernel wants) */
	/* cpid: the command's pid when running one; 0 when only compiling
	 * (it reads 0); -1 when running without a command (an error). */
	long cpid;
	/* the process whose mappings resolve uprobe library names (-p), as
	 * when attaching; 0 for none */
	int lib_pid;
	/* the command's program as written (-c's first word, or -- CMD's),
	 * whose functions watchpoint:FUNC+argN names; NULL for none */
	const char *cmd;
	/* where elapsed counts from (CLOCK_MONOTONIC ns, nsecs' clock):
	 * when gpux started compiling; 0 in the simulator, whose clock
	 * starts there */
	uint64_t start_ns;
	/* -k (1): map updates and deletes that fail are reported where
	 * the program makes them; -kk (2): memory reads too */
	int helper_check;
};

/* Lower every PLACE_HOST and PLACE_DRIVER probe of prog (checked by
 * frontend_check) into obj. A program with no such probe yields obj with
 * no ELF (size 0) and returns 0. Constructs gpux cannot lower yet are
 * errors at their span. 0 if clean, -1 with diagnostics; obj is always
 * safe to pass to host_obj_free afterwards. */
int host_compile(struct program *prog, const struct host_opts *opts,
		 struct host_obj *obj, struct diags *diags);

/* -d ir: the LLVM module as text (needs opts.keep_ir at compile). */
void host_print_ir(const struct host_obj *obj, FILE *out);
/* -d bpf: each program's instructions, with the source line of each
 * stretch interleaved as a "; " comment (from .BTF.ext line info).
 * 0, or -1 if the object cannot be read. */
int host_print_bpf(const struct host_obj *obj, const struct source *src,
		   FILE *out);
/* --emit DIR: writes DIR/BASE.bpf.o. 0, or -1 with a diagnostic. */
int host_emit(const struct host_obj *obj, const char *dir, const char *base,
	      struct diags *diags);

#endif
