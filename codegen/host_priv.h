/* Internals of the host lowering (llvm_host.h), shared by its files:
 * host_module.c (driver, target, output), host_btf.c (debug info that
 * becomes BTF), host_maps.c (map layout and map operations),
 * host_probe.c (one function per probe, contexts, struct_ops),
 * host_expr.c (expressions), host_stmt.c (statements, aggregations,
 * output records). */
#ifndef GPUX_HOST_PRIV_H
#define GPUX_HOST_PRIV_H

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/TargetMachine.h>

#include "bpf_ids.h"
#include "host_usdt.h"
#include "llvm_host.h"
#include "cuda_actions.h"
#include "tracepoint.h"

/* A lowered value: an i64, or a string in a stack buffer of ssize bytes. */
struct hval {
	LLVMValueRef v;
	unsigned ssize; /* 0 for integers */
};

struct hslot {
	struct hslot *next;
	LLVMValueRef a;
	unsigned size;
	bool busy;
};

struct hvar {
	struct hvar *next;
	const char *name;
	LLVMValueRef slot;
	unsigned ssize;
};

/* host_index.c: a table keyed by pointer, or by C string when str. */
struct hindex_ent {
	const void *key;
	void *val;
};
struct hindex {
	struct hindex_ent *e;
	unsigned cap, n;
	bool str;
};
void *hl_index_get(const struct hindex *ix, const void *key);
void hl_index_put(struct hindex *ix, struct arena *a, const void *key, void *val);

/* Per map: the public layout and the global that names it. */
struct hmap {
	struct map_info *info;
	struct host_map *pub;
	int index;
	LLVMValueRef global;
};

struct hctx {
	struct program *prog;
	const struct host_opts *opts;
	struct diags *diags;
	struct host_obj *obj;
	int errors;
	char *backend_err; /* the BPF backend's first error (malloc'd) */
	bool backend_failed;

	LLVMContextRef ctx;
	LLVMModuleRef mod;
	LLVMBuilderRef b;
	LLVMDIBuilderRef di;
	bool di_done; /* finalized */
	LLVMMetadataRef di_file, di_cu, di_long, di_voidp;
	LLVMMetadataRef di_lines; /* the programs' file: di_file, "" when big */
	bool big;                 /* hl_big_program: lighter debug info */
	LLVMTypeRef i1, i8, i32, i64, ptr;

	struct hmap *maps;
	int nmaps;
	struct hindex map_ix;    /* map_info -> struct hmap */
	struct hbtf_map *btf_maps, *btf_maps_tail; /* hl_btf_map_note */
	LLVMValueRef events; /* the ring buffer */
	LLVMValueRef join;   /* HOST_JOIN_MAP, when join() is called */
	bool need_join;
	LLVMValueRef syms;   /* HOST_SYMS_MAP, made on first use */
	LLVMValueRef capture_map; /* HOST_CAPTURE_MAP, made on first use */
	const struct host_sops_capture *capture; /* ... for this capture */
	unsigned probe_str;  /* the size of probe strings (host_syms.c) */
	bool need_events;

	/* the function being built */
	struct node *probe;
	const struct attach *at;
	enum host_run run;
	LLVMValueRef fn, ctxarg;
	LLVMMetadataRef sp;
	LLVMBasicBlockRef entry; /* allocas go at its top */
	/* the context's words this function read, each loaded once at the
	 * top of entry: the kernel refuses a load through a context pointer
	 * the program moved, and LLVM would otherwise share ctx + off
	 * between loads in different blocks */
	struct hctx_ctx_load { unsigned off, size; LLVMValueRef v; } ctx_loads[32];
	int nctx_loads;
	struct hvar *vars;
	struct hindex var_ix;    /* name -> struct hvar, of vars */
	struct hindex str_ix;    /* name -> longest string assigned (+1) */
	const struct node *str_probe; /* ... in this probe */
	struct hslot *slots;     /* temporaries (host_alloca) */
	/* a big probe's straight-line code is cut into blocks (host_stmt.c) */
	bool split_on;
	int split_n;             /* statements in split_bb so far */
	LLVMBasicBlockRef split_bb;
	LLVMValueRef split_flag; /* a zero only the verifier sees through */
	struct tp_field *tp;     /* tracepoint layout */
	const struct host_sops_abi *abi;
	const struct host_sops_hook *hook;
	/* a composed driver hook (host_probe.c): where a probe's `return`
	 * goes, and the decision so far */
	LLVMBasicBlockRef leave;
	LLVMValueRef decision;
	bool cuda;               /* gpux/cuda/ context layout */
	const struct hl_usdt_site *usdt; /* the usdt site being lowered */
	/* -k: where the helper calls being built are made (a call, an
	 * assignment's '=', a memory read), or none */
	bool has_site;
	struct span site;
};

/* -k: the site of what lowering e calls helpers for, saved into *was
 * (host_output.c); hl_site_end puts the outer one back. */
void hl_site_begin(struct hctx *h, const struct node *e, struct span *was, bool *had);
void hl_site_end(struct hctx *h, struct span was, bool had);
/* After helper id's call returned ret (i64): under -k/-kk, a record
 * when it failed (host_output.c). */
void hl_helper_checked(struct hctx *h, int id, LLVMValueRef ret);
/* -kk: a lookup of one of the program's maps that found nothing (p,
 * its result, NULL) is reported too, as bpftrace's -kk does. */
void hl_lookup_checked(struct hctx *h, LLVMValueRef p);

/* host_module.c */
struct diag *host_err(struct hctx *h, const struct node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void host_loc(struct hctx *h, const struct node *n);
LLVMValueRef host_alloca(struct hctx *h, unsigned bytes, const char *name);
/* Pooled temporaries, free again at the next statement. */
void host_temps_free(struct hctx *h);
LLVMValueRef host_alloca_zero(struct hctx *h, unsigned bytes, const char *name);
/* Zeroes bytes at p (align: what p is aligned to). */
void host_zero(struct hctx *h, LLVMValueRef p, unsigned bytes, unsigned align);
LLVMValueRef host_const(struct hctx *h, uint64_t v);
LLVMValueRef host_helper(struct hctx *h, int id, LLVMTypeRef ret,
			 LLVMValueRef *args, int n);
LLVMValueRef host_gep(struct hctx *h, LLVMValueRef base, unsigned off);
/* ... built by b */
LLVMValueRef host_gep_at(struct hctx *h, LLVMBuilderRef b, LLVMValueRef base, unsigned off);
bool host_const_int(const struct node *n, int64_t *out);

/* host_passes.c: O2, or for a function too big for it a light
 * pipeline; and whether prog is big enough for cheaper debug info. */
int hl_optimize(struct hctx *h, LLVMTargetMachineRef tm);
bool hl_big_program(struct program *prog);
/* A probe whose straight-line code is cut into blocks (host_stmt.c). */
bool hl_big_probe(struct node *probe);

/* host_btf.c */
void hl_btf_init(struct hctx *h);
/* host_btf_maps.c: map sym's definition, a struct of n members
 * names[i] = vals[i] (names outlive the compile), goes into the .BTF
 * that hl_btf_maps_write adds to the emitted object. */
void hl_btf_map_note(struct hctx *h, const char *sym, const uint32_t *vals,
		     const char *const *names, int n);
int hl_btf_maps_write(struct hctx *h);
LLVMMetadataRef hl_btf_func(struct hctx *h, LLVMValueRef fn, const char *name,
			 int nparams, bool definition, unsigned line);
void hl_btf_struct_ops(struct hctx *h, LLVMValueRef g, const char *var,
		    const struct host_sops_abi *abi);
/* A kfunc bound to the driver's BTF, declared with its prototype. */
void hl_btf_kfunc(struct hctx *h, LLVMValueRef fn, const struct host_sops_kfunc *k);

/* host_maps.c */
int hl_maps_layout(struct hctx *h);
struct hmap *hl_map_of(struct hctx *h, const struct node *m);
/* Pack m's keys (plus bucket when the map has one) into a zeroed stack
 * buffer; NULL after an error. */
LLVMValueRef hl_map_key(struct hctx *h, struct hmap *hm, const struct node *m,
		     LLVMValueRef bucket);
LLVMValueRef hl_map_lookup(struct hctx *h, struct hmap *hm, LLVMValueRef key);
/* A map definition in .maps, with its BTF (vals by names). */
LLVMValueRef hl_map_global(struct hctx *h, const char *sym, const uint32_t *vals,
			   const char *const *names, int n);
/* host_syms.c. In a probe with a glob of functions: the attached
 * function's name or full probe name, from HOST_SYMS_MAP by cookie. */
bool hl_site_globbed(const struct hctx *h);
/* probe names the library found (bpftrace's name) or the function
 * matched: read by cookie too (attach.by_cookie). */
bool hl_probe_by_cookie(const struct hctx *h);
/* Sets h->probe_str: the size of probe strings (before the layout). */
void hl_probe_str_size(struct hctx *h);
/* The probe string of at as bpftrace names it, when known now: by its
 * provider's full name ("u:" is "uprobe:"), a uprobe's symbol as uname. */
const char *hl_probe_text(struct hctx *h, const struct attach *at);
struct hval hl_sym_string(struct hctx *h, bool probe);
void hl_map_update(struct hctx *h, struct hmap *hm, LLVMValueRef key,
		LLVMValueRef val, uint64_t flags);
void hl_map_delete(struct hctx *h, struct hmap *hm, LLVMValueRef key);
unsigned hl_str_size(struct hctx *h, const struct node *e);

/* host_expr.c */
struct hval hl_expr(struct hctx *h, struct node *e);
/* host_probe.c: the hidden kernel id of cuda:launch and cuda:kernel_end
 * (llvm_host.h), as i64. */
LLVMValueRef hl_cuda_kernel_id(struct hctx *h);
/* An integer expression as i64, or NULL after an error. */
LLVMValueRef hl_expr_int(struct hctx *h, struct node *e);
/* l / r or l % r, signed (truncating, as C) or unsigned; x / 0 = 0 and
 * x % 0 = x, as BPF's instructions. */
LLVMValueRef hl_divmod(struct hctx *h, bool mod, LLVMValueRef l, LLVMValueRef r, bool sgn);
LLVMValueRef hl_to_bool(struct hctx *h, LLVMValueRef v);
void hl_str_copy(struct hctx *h, LLVMValueRef dst, unsigned dsize, struct hval s);
LLVMValueRef hl_str_literal(struct hctx *h, const char *s, size_t len, unsigned size);
struct hvar *hl_var_find(struct hctx *h, const char *name);

/* host_stmt.c */
void hl_stmt_list(struct hctx *h, struct node *list);
void hl_stmt_assign(struct hctx *h, struct node *s);
LLVMValueRef hl_stmt_incdec(struct hctx *h, struct node *e);
void hl_call_stmt(struct hctx *h, struct node *call);

/* host_probe.c */
extern const unsigned hl_pt_regs_arg[6]; /* HOST_PT_REGS_ARGS */
/* host_fns.c: tuples, and bpftrace's other functions with a value (true
 * when e is one, its value in *r). */
/* host_memory.c: '*p', 'p->f', 'a[i]' and what they reach */
struct hval hl_memory(struct hctx *h, struct node *e);
/* buf(): BUF_SIZE bytes, or fitted to a constant length (host_fns.c). */
struct hval hl_buf(struct hctx *h, struct node *e, bool fitted);
/* The address of e, a record in the kernel reached from ctx through
 * the kernel's pointers (ctx->file->f_path), as the kernel's own pointer
 * to it: what a helper taking a kernel object wants. NULL where e is
 * not such a chain. */
LLVMValueRef hl_kernel_object(struct hctx *h, struct node *e);
/* n elements of what ptr points to, in bytes */
LLVMValueRef hl_pointer_offset(struct hctx *h, struct node *ptr, LLVMValueRef n);
struct hval hl_tuple(struct hctx *h, struct node *e);
struct hval hl_tuple_elem(struct hctx *h, struct node *e);
bool hl_lib_call(struct hctx *h, struct node *e, struct hval *r);
/* host_stacks.c: ustack, kstack, curtask; and the calls ustack(),
 * kstack(), usym(), ksym(), uaddr(), kaddr(). false: not one of them. */
bool hl_builtin_stack(struct hctx *h, struct node *e, struct hval *r);
bool hl_stack_call(struct hctx *h, struct node *e, struct hval *r);
/* The byte at i of a buffer, for comparisons. */
LLVMValueRef hl_byte_at(struct hctx *h, LLVMValueRef buf, unsigned i);
/* The pt_regs word at off of a uprobe's context. */
LLVMValueRef hl_reg(struct hctx *h, unsigned off);

/* host_usdt_lower.c: a usdt attach point is one program per site it
 * matches, each with the site's note; strings in the object's arena */
struct hl_usdt_site {
	const char *path;  /* the file to attach to */
	const char *probe; /* the probe builtin: "usdt:TARGET:PROVIDER:NAME" */
	const char *where; /* "TARGET:PROVIDER:NAME", for messages */
	struct host_usdt_site s;
};
/* The sites of usdt attach point an (errors located at it). 0 with
 * *out (arena) and *n (at least one), or -1. */
int hl_usdt_sites(struct hctx *h, const struct node *an, struct hl_usdt_site **out, int *n);
/* argN at the site h->usdt, or NULL after an error at n */
LLVMValueRef hl_usdt_arg(struct hctx *h, const struct node *n, const char *name);
int hl_probes_lower(struct hctx *h);
/* Records program name of probe p for attach point an (section) and
 * lowers p's body into it. 0, or -1 after an error. */
int hl_add_prog(struct hctx *h, struct node *p, const struct node *an, const char *name,
		const char *section, LLVMValueRef *fn);

/* host_watch.c: a watchpoint attach point's programs (the body; at
 * FUNC+argN its setup uprobe too). */
void hl_lower_watchpoint(struct hctx *h, struct node *p, const struct node *an,
			 const char *name);
/* The file FUNC+argN names a function of: the command's program as
 * written, else "/proc/PID/exe" of -p; NULL without either. */
const char *hl_watch_target(struct hctx *h);
/* The probe builtin, as bpftrace names the probe: PROV:ADDRESS:LEN:MODE
 * (the address in decimal), or PROV:TARGET:FUNC:LEN:MODE. */
const char *hl_watch_name(struct hctx *h, const struct attach *at);
/* A program's function (i64 f(ptr ctx)) in section, the builder at its
 * entry; line for its BTF (0: none). */
LLVMValueRef hl_begin_fn(struct hctx *h, unsigned line, const char *name,
			 const char *section);
/* Records a program of the object (host_obj.progs). */
void hl_prog_append(struct hctx *h, const struct host_prog *p);
/* The tracepoint layout of probe's attach point into h->tp (NULL for
 * other probes); -1 with a diagnostic when tracefs cannot say. */
int hl_probe_tp(struct hctx *h, struct node *probe);
LLVMValueRef hl_ctx_field(struct hctx *h, const struct node *n, unsigned *ssize);
/* Where an iter: probe's iterator is pinned (/sys/fs/bpf/PIN for a
 * relative PIN), or NULL: gpux runs it. Its printf() is the kernel's
 * seq_printf then, and nothing else writes records. */
const char *hl_iter_pin(struct hctx *h, const struct attach *at);
/* The context's 8 bytes at off, loaded directly at the top of the
 * program (what the kernel checks as a context access). */
LLVMValueRef hl_ctx_word(struct hctx *h, unsigned off);
/* args.F[i] of a tracepoint's array of integers F (e an OP_INDEX whose
 * lhs is that field), or NULL when e is not one. *err: it is one, and
 * an error was reported. */
LLVMValueRef hl_tp_index(struct hctx *h, struct node *e, bool *err);
LLVMValueRef hl_kfunc_call(struct hctx *h, struct node *call);
/* Leaves the probe with decision v: the function's return, or in a
 * composed hook, on to the next probe. */
void hl_leave(struct hctx *h, LLVMValueRef v);
bool hl_block_open(struct hctx *h); /* false after a terminator */

/* host_capture.c: a HOST_SOPS_CAPTURED field in a driver hook (0 until
 * the kprobe stored one), and after the hooks, the kprobe program that
 * stores them, when a hook read one. */
LLVMValueRef hl_capture_read(struct hctx *h, const struct node *n, const char *name);
void hl_capture_prog(struct hctx *h);

/* The i64 a map lookup's result v points to, or 0 when v is NULL. */
LLVMValueRef hl_load_or_zero(struct hctx *h, LLVMValueRef v);
/* ... the i64 at byte off of what v points to */
LLVMValueRef hl_load_or_zero_at(struct hctx *h, LLVMValueRef v, unsigned off);
/* Fills host_map.use_at and write_at (host_uses.c). */
void hl_map_uses(struct program *prog, struct host_obj *obj);

#endif
