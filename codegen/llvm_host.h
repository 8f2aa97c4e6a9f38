/* Host-side lowering: the host and driver probes of a checked program go
 * through the LLVM C API and LLVM's BPF backend into one BPF ELF object
 * that libbpf opens (docs/ARCHITECTURE.md).
 *
 * What lands in the object:
 *   uprobe:T:S      section "uprobe/T:S"        kernel, pt_regs context
 *   uretprobe:T:S   section "uretprobe/T:S"     kernel, retval = ax
 *   tracepoint:C:N  section "tracepoint/C/N"    kernel, tracefs record
 *   BEGIN, END      section "gpux/begin", "gpux/end"
 *   interval:U:N    section "gpux/interval/NS"  (period in ns)
 *   cuda:EVENT      section "gpux/cuda/EVENT"
 *   gpu_mem:, gpu_sched:  section "struct_ops/NAME", plus one variable
 *                   per struct_ops type in ".struct_ops"
 * The gpux/ programs (abi/host_sec.h) run in the userspace BPF VM, not
 * in the kernel: libbpf opens them (unknown section, no program type) and the loader
 * must bpf_program__set_autoload(p, false) them before bpf_object__load.
 * They share the object so that they reference the same maps. Likewise a
 * struct_ops map only loads where its driver is: without it, the loader
 * sets bpf_map__set_autocreate(m, false) and autoload off on its programs.
 *
 * Context of gpux/cuda/ programs (the VM builds it): the catalog's fields
 * in order, each at an 8-byte aligned offset: integers as u64, strings
 * inline as char[HOST_STR_MAX], dim3 as three u32 (16 bytes); cuda:launch
 * and cuda:kernel_end then have the kernel's u64 id (abi/cuda_events.h),
 * the key word of 'kernel' in maps gdev: probes use too.
 *
 * Output records: printf, exit and the map actions a probe cannot do in
 * BPF (print, clear, zero, time) are written to the ring buffer map
 * "gpux_events" as a struct host_rec_hdr followed by 8-byte aligned
 * arguments (abi/host_rec.h); the host formats them with the tables in
 * struct host_obj. */
#ifndef GPUX_LLVM_HOST_H
#define GPUX_LLVM_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ast.h"
#include "diag.h"
#include "host_rec.h"
#include "host_sec.h"

#define HOST_STR_MAX 64        /* strings of unknown length */
#define HOST_MAP_ENTRIES 4096  /* max_entries of every keyed map */
#define HOST_RINGBUF_BYTES (256 * 1024)
/* Globbed uprobes: each function attached gets a BPF cookie, its index in
 * this array map of { char func[HOST_SYM_STR]; char probe[]; }, the probe
 * string filling the rest of the value (sized to fit the longest name),
 * which the loader fills; func and probe are read from it. */
#define HOST_SYMS_MAP "gpux_syms"
#define HOST_SYM_STR 64
#define HOST_SYMS_MAX 4096
/* ustack/kstack: a BPF_MAP_TYPE_STACK_TRACE map per frame limit N, named
 * HOST_STACK_MAP "N", whose values are N u64 addresses (zeros after the
 * last frame); a stack value is (pid << 32) | its id there. */
#define HOST_STACK_MAP "gpux_stack"

/* ---- driver struct_ops ABI descriptions (docs/ARCHITECTURE.md, "Driver policies") ---- */

/* How a catalog field of a hook is read from the struct_ops context, an
 * array of u64 arguments: v = ctx[arg]; then for each of the nloads
 * offsets, v = *(u64 *)(v + off[i]), the last load reading size bytes;
 * then v += add (a container_of, as "head" from a list_head). path
 * spells the same in C from the argument's pointee ("->va_block->start",
 * "" for the argument itself) for binding by BTF (codegen/host_bind.c),
 * which recomputes off[] and size against the running driver, and add
 * from container ("STRUCT.MEMBER": add = -offsetof(STRUCT, MEMBER)). */
#define HOST_SOPS_LOADS 8
struct host_sops_field {
	const char *name; /* catalog field, "ctx" for the raw argument */
	int arg;
	const char *path;
	int nloads;
	unsigned off[HOST_SOPS_LOADS];
	unsigned size;
	long add;
	const char *container;
};

/* A field's arg when the hook's own arguments lack it and a kprobe on
 * the driver function that calls the hook reads it instead (struct
 * host_sops_capture): gpu_ext's prefetch policies learn the faulting VA
 * block the same way. */
#define HOST_SOPS_CAPTURED (-1)

struct host_sops_hook {
	const char *event;  /* "gpu_mem:access" */
	const char *member; /* "uvm_pmm_chunk_used" */
	struct host_sops_field fields[8];
	int nfields;
	int nargs;          /* the member's parameters */
};

/* A policy action as a kfunc call. Arguments name a value each: "$0",
 * "$1" for the action's arguments, "=N" for the constant N, else a
 * field of the hook. */
struct host_sops_kfunc {
	enum action_id action;
	const char *name; /* "bpf_uvm_pmm_chunk_move_tail" */
	const char *args[3];
	int nargs;
	/* non-NULL: the kfunc acts on the hook's own object, this field,
	 * which must then be the action's argument (gpu_ext's decision
	 * contexts); NULL: on the argument given */
	const char *self;
	/* Bound from BTF: the kernel's prototype, which libbpf matches the
	 * object's extern declaration against (void or an integer return;
	 * each argument an integer, ptr_to NULL, or a pointer to the struct
	 * named, "" for any other pointee). The built-ins declare
	 * long f(void *, ...). */
	bool bound;
	bool ret_void;
	const char *ptr_to[3];
};

/* The fields hooks read as HOST_SOPS_CAPTURED: the kprobe on func reads
 * each from func's arguments (arg: the parameter; paths as above, read
 * with bpf_probe_read_kernel) into slot i (its index here) of the per-CPU
 * array HOST_CAPTURE_MAP, and a hook reads the slot back. The kprobe runs
 * on the CPU, and just before, the hook does. */
#define HOST_CAPTURE_MAP "gpux_capture"
/* x86-64 struct pt_regs: the offsets of the six argument registers,
 * where the kprobe reads arg 0..5 */
#define HOST_PT_REGS_ARGS { 112, 104, 96, 88, 72, 64 }
#define HOST_PT_REGS_SIZE 168
#define HOST_CAPTURE_PROG "gpux_capture_kprobe"
struct host_sops_capture {
	const char *func; /* "uvm_perf_prefetch_get_hint_va_block" */
	struct host_sops_field fields[4];
	int nfields;
};

struct host_sops_abi {
	const char *struct_name;     /* "uvm_gpu_ext" */
	const char *provider;        /* "gpu_mem" */
	const char *const *members;  /* every function pointer, in order; NULL-ended */
	const struct host_sops_hook *hooks;
	int nhooks;
	const struct host_sops_kfunc *kfuncs;
	int nkfuncs;
	const struct host_sops_capture *capture; /* NULL: none */
	/* a struct BTF must also have for this ABI to bind (NULL: none):
	 * tells ABIs of one struct name apart */
	const char *requires;
};

/* The shapes gpux knows without a driver (codegen/host_abi.c): what it
 * compiles against when no driver BTF is found, and what the simulator
 * runs. */
extern const struct host_sops_abi host_abi_uvm_gpu_ext;
extern const struct host_sops_abi host_abi_gpu_mem_ops;
extern const struct host_sops_abi host_abi_gpu_mem_decision;
extern const struct host_sops_abi host_abi_nv_gpu_sched;

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
};

/* ---- what comes out ---- */

enum host_run {
	HOST_RUN_KERNEL, /* uprobe, uretprobe, tracepoint: libbpf attaches */
	HOST_RUN_VM,     /* gpux/ sections: the userspace BPF VM */
	HOST_RUN_DRIVER, /* struct_ops programs */
};

struct host_prog {
	const char *func;    /* ELF symbol, libbpf program name */
	const char *section;
	const char *probe;   /* the attach point as written */
	enum host_run run;
	uint64_t interval_ns;
	struct span span;
	/* uprobe:T:FUNC+OFFSET (ufunc, uoffset) and uprobe:T:ADDRESS (uaddr,
	 * the address in uoffset); uname is the symbol as the probe string
	 * names it (struct attach) */
	const char *ufunc;
	uint64_t uoffset;
	bool uaddr;
	const char *uname;
	/* usdt: one program per site: the file, the uprobe's offset in it
	 * and the semaphore's (0: none) */
	const char *usdt_path;
	uint64_t usdt_off, usdt_sema;
	/* watchpoint (a perf_event program on a hardware breakpoint): wp_len
	 * bytes, wp_type the HW_BREAKPOINT_* bits, in process wp_pid (-1:
	 * every CPU, a kernel address); at wp_addr, set when attaching, or
	 * (wp_deferred) at the addresses its setup uprobe hands over,
	 * stopping the process meanwhile unless wp_async */
	bool watch, wp_deferred, wp_async;
	uint64_t wp_addr;
	unsigned wp_len, wp_type;
	int wp_pid;
};

/* One component of a map key. */
struct host_key {
	struct type type;
	unsigned offset, size; /* bytes in the packed key */
};

struct host_map {
	const char *name; /* "freq", "" for @ */
	const char *sym;  /* ELF symbol and libbpf map name: "AT_freq" */
	uint32_t type;    /* BPF_MAP_TYPE_* */
	uint32_t key_size, value_size, max_entries;
	struct type value; /* TY_AGG with .agg, or the stored type */
	struct host_key *keys;
	int nkeys;
	bool bucket;           /* hist/lhist: a u64 bucket index ends the key */
	/* Bit i: key i is 'kernel' of cuda:launch / cuda:kernel_end, stored
	 * as its name-table id (8 bytes, cheap to hash) and printed as its
	 * whole name, as gdev: keys are (cli/sess_host_maps.c re-keys it). */
	uint32_t kernel_id_keys;
	int64_t lhist[3];      /* lhist min, max, step */
	unsigned value_str;    /* string values: bytes */
	/* Also a gdev: map: laid out as the device's (8 bytes per key,
	 * 'kernel' as its id, integer values), run on its table. */
	bool device;
	/* ... which cuda: probes only read: the device's values, merged
	 * from its snapshots by the runtime */
	bool mirror;
	/* The first data use and the first write of it by each runner's
	 * probes (host_uses.c; NULL: none), device probes included: where
	 * the controller keeps it and what it refuses. */
	const struct node *use_at[RUNNER_DRIVER + 1];
	const struct node *write_at[RUNNER_DRIVER + 1];
};

struct host_fmt_arg {
	struct type type;
	unsigned offset, size; /* bytes from the record's start */
};

/* What a record formatted with a host_fmt is for. */
enum host_fmt_kind {
	HOST_FMT_PRINTF,
	HOST_FMT_VALUE,  /* print(value): one argument, a "value" record in json */
	HOST_FMT_CAT,    /* cat(): the text names a file to print */
	HOST_FMT_SYSTEM, /* system(): the text is a shell command to run */
	HOST_FMT_TIMELINE, /* a printf of a timeline probe (struct probe):
			    * its values, for the timeline, not printed */
};

struct host_fmt {
	const char *fmt; /* as written, escapes resolved by the front end */
	struct host_fmt_arg *args;
	int nargs;
	unsigned size; /* the whole record */
	enum host_fmt_kind kind;
};

struct host_obj {
	struct arena arena; /* tables below */
	unsigned char *elf; /* the object (malloc'd) */
	size_t size;
	struct host_prog *progs;
	int nprogs;
	struct host_map *maps; /* maps[i] has record id i */
	int nmaps;
	struct host_fmt *fmts;
	int nfmts;
	char *ir; /* LLVM IR text when opts.keep_ir (malloc'd) */
	/* cuda: probes call memory actions or alloc_base/alloc_size: the
	 * runtime must track the program's allocations */
	bool tracks_allocs;
};

/* Lower every PLACE_HOST and PLACE_DRIVER probe of prog (checked by
 * frontend_check) into obj. A program with no such probe yields obj with
 * no ELF (size 0) and returns 0. Constructs gpux cannot lower yet are
 * errors at their span. 0 if clean, -1 with diagnostics; obj is always
 * safe to pass to host_obj_free afterwards. */
int host_compile(struct program *prog, const struct host_opts *opts,
		 struct host_obj *obj, struct diags *diags);
void host_obj_free(struct host_obj *obj);

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
