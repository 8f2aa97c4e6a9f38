/* The compiled program: what codegen's host lowering (codegen/llvm_host.h)
 * hands the rest of gpux, one BPF ELF object that libbpf opens and the
 * userspace VM runs (docs/ARCHITECTURE.md), with the tables that say
 * what is in it: its programs, maps and output formats.
 *
 * What lands in the object:
 *   uprobe:T:S      section "uprobe/T:S"        kernel, pt_regs context
 *   uretprobe:T:S   section "uretprobe/T:S"     kernel, retval = ax
 *   tracepoint:C:N  section "tracepoint/C/N"    kernel, tracefs record
 *   BEGIN, END      section "gpux/begin", "gpux/end"
 *   interval:U:N    section "gpux/interval/NS"  (period in ns)
 *   profile:U:N     section "perf_event"        kernel, on every CPU
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
#ifndef GPUX_HOST_OBJ_H
#define GPUX_HOST_OBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ast.h"
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

enum host_run {
	HOST_RUN_KERNEL, /* uprobe, uretprobe, tracepoint: libbpf attaches */
	HOST_RUN_VM,     /* gpux/ sections: the userspace BPF VM */
	HOST_RUN_DRIVER, /* struct_ops programs */
};

struct host_prog {
	const char *func;    /* ELF symbol, libbpf program name */
	const char *section;
	const char *probe;   /* the attach point as written */
	enum attach_kind attach; /* how it attaches (the provider's) */
	enum host_run run;
	struct span span;
	/* the function its attach point names, as its unit read it (struct
	 * attach): FUNC+OFFSET (func, offset) or an ADDRESS (addr, the
	 * address in offset), name the symbol as the probe string names it,
	 * module a kernel module; all 0 where there is none */
	struct {
		const char *func;
		uint64_t offset;
		bool addr;
		const char *name;
		const char *module;
	} site;
	/* what its kind needs to attach (attach says which member) */
	union {
		/* ATTACH_VM: an interval probe's period (0: BEGIN, END, cuda:) */
		uint64_t interval_ns;
		/* ATTACH_USDT: one program per site: the file, the uprobe's
		 * offset in it and the semaphore's (0: none) */
		struct {
			const char *path;
			uint64_t off, sema;
		} usdt;
		/* ATTACH_WATCHPOINT (a perf_event program on a hardware
		 * breakpoint): len bytes, type the HW_BREAKPOINT_* bits, in
		 * process pid (-1: every CPU, a kernel address); at addr, set
		 * when attaching, or (deferred) at the addresses its setup
		 * uprobe hands over, stopping the process meanwhile unless
		 * async */
		struct {
			bool deferred, async;
			uint64_t addr;
			unsigned len, type;
			int pid;
		} watch;
		/* ATTACH_PERF_EVENT: perf_event_attr's type and config,
		 * sampled every period events (freq 0) or freq times a
		 * second */
		struct {
			unsigned type;
			uint64_t config, period, freq;
		} perf;
		/* ATTACH_ITER: where its link is pinned (an absolute path),
		 * or NULL: gpux runs it once and reads what it writes */
		struct {
			const char *pin;
		} iter;
	} at;
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
};

struct host_fmt {
	const char *fmt; /* as written, escapes resolved by the front end */
	struct host_fmt_arg *args;
	int nargs;
	unsigned size; /* the whole record */
	enum host_fmt_kind kind;
};

/* A checked helper call: the helper as bpftrace names it in its
 * warning ("map_update_elem") and where the program makes it. */
struct host_site {
	const char *helper;
	struct span span;
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
	/* -k, -kk: each helper call checked, by HOST_REC_HELPER_ERR's id */
	struct host_site *sites;
	int nsites;
	char *ir; /* LLVM IR text when opts.keep_ir (malloc'd) */
	/* cuda: probes call memory actions or alloc_base/alloc_size: the
	 * runtime must track the program's allocations */
	bool tracks_allocs;
};

/* Frees what obj holds (its ELF, IR text and tables); obj is left empty. */
void host_obj_free(struct host_obj *obj);

#endif
