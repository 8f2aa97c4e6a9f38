/* Module BTF as gpu_ext drivers expose it, written with libbpf's BTF
 * writer, so that binding (codegen/host_bind.c) is tested without the
 * driver. Each variant is a directory for GPUX_BTF_DIR:
 *   genb/    vmlinux + nvidia_uvm split over it: struct uvm_gpu_ext, bpf_uvm_* kfuncs
 *   genc/    nvidia_uvm alone: struct gpu_mem_ops, bpf_gpu_* kfuncs
 *   kmod/    genc and kmod/'s own bpf_gpu_list_move_first
 *   gend/    gpu_mem_ops with decision contexts: bpf_gpu_request_reorder
 *   layout/  gpu_mem_ops over other offsets (list, va_block->start, u32
 *            regions), no prefetch_iter member, no move_head kfunc, no
 *            managed_range (so no owner); nvidia: old sched contexts
 *   sched/   nvidia: nv_gpu_sched_ops with on_timeslice_control
 *   stock/   nvidia_uvm and nvidia of a stock driver: the types, no hooks
 *   kernel/  vmlinux: records for a script's kernel types (bit-fields,
 *            anonymous members, an enum), read through GPUX_BTF
 * With --struct-ops OBJ, prints what a BPF object's BTF says of its
 * struct_ops variables and extern kfuncs instead.
 *   btf_gen DIR | btf_gen --struct-ops OBJ.bpf.o */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/btf.h>

/* a test tool: any failure of the writer ends it */
static int ck(int id, const char *what)
{
	if (id < 0) {
		fprintf(stderr, "btf_gen: %s: %s\n", what, strerror(-id));
		exit(1);
	}
	return id;
}
#define CK(x) ck((x), #x)

/* The layout a variant gives the driver's types. */
struct layout {
	const char *ops;          /* the memory struct_ops, NULL for none */
	const char *members[6];   /* NULL: the member is left out */
	const char *kf_head, *kf_tail, *kf_region; /* NULL: not in BTF */
	unsigned list_off, va_block_off, chunk_size;
	unsigned managed_off, start_off; /* managed_off 0: no managed_range */
	bool region_u32;
	unsigned owner_off, tgid_off, vsmm_off;
	bool decision; /* contexts in place of the list and the region */
	bool move_first; /* kmod/'s bpf_gpu_list_move_first too */
};

static const struct layout gen_b = {
	"uvm_gpu_ext",
	{ "uvm_bpf_test_trigger_kfunc", "uvm_prefetch_before_compute", "uvm_prefetch_on_tree_iter",
	  "uvm_pmm_chunk_activate", "uvm_pmm_chunk_used", "uvm_pmm_eviction_prepare" },
	"bpf_uvm_pmm_chunk_move_head", "bpf_uvm_pmm_chunk_move_tail", "bpf_uvm_set_va_block_region",
	16, 32, 56, 40, 48, false, 904, 2460, 1704, false, false,
};

static const struct layout gen_c = {
	"gpu_mem_ops",
	{ "gpu_test_trigger", "gpu_page_prefetch", "gpu_page_prefetch_iter", "gpu_block_activate",
	  "gpu_block_access", "gpu_evict_prepare" },
	"bpf_gpu_block_move_head", "bpf_gpu_block_move_tail", "bpf_gpu_set_prefetch_region",
	16, 32, 56, 40, 48, false, 904, 2460, 1704, false, false,
};

static const struct layout gen_kmod = {
	"gpu_mem_ops",
	{ "gpu_test_trigger", "gpu_page_prefetch", "gpu_page_prefetch_iter", "gpu_block_activate",
	  "gpu_block_access", "gpu_evict_prepare" },
	"bpf_gpu_block_move_head", "bpf_gpu_block_move_tail", "bpf_gpu_set_prefetch_region",
	16, 32, 56, 40, 48, false, 904, 2460, 1704, false, true,
};

static const struct layout gen_d = {
	"gpu_mem_ops",
	{ "gpu_test_trigger", "gpu_page_prefetch", "gpu_page_prefetch_iter", "gpu_block_activate",
	  "gpu_block_access", "gpu_evict_prepare" },
	NULL, NULL, "bpf_gpu_set_prefetch_region",
	16, 32, 56, 40, 48, false, 904, 2460, 1704, true, false,
};

static const struct layout other = {
	"gpu_mem_ops",
	{ "gpu_test_trigger", "gpu_page_prefetch", NULL, "gpu_block_activate", "gpu_block_access",
	  "gpu_evict_prepare" },
	NULL, "bpf_gpu_block_move_tail", "bpf_gpu_set_prefetch_region",
	8, 40, 64, 0, 24, true, 912, 2468, 1712, false, false,
};

static const struct layout stock = {
	NULL, { NULL }, NULL, NULL, NULL, 16, 32, 56, 40, 48, false, 904, 2460, 1704, false, false,
};

/* What the kernel's own BTF (vmlinux) has that the driver's refers to. */
struct base {
	int chr, u8, u16, u32, u64, s32, ulong, voidp, list, listp, mmp, pid;
};

static int add_struct_field(struct btf *btf, const char *name, int type, unsigned byte_off)
{
	return CK(btf__add_field(btf, name, type, byte_off * 8, 0));
}

static void add_base(struct btf *btf, struct base *b, const struct layout *L)
{
	b->chr = CK(btf__add_int(btf, "char", 1, BTF_INT_SIGNED | BTF_INT_CHAR));
	b->u8 = CK(btf__add_int(btf, "unsigned char", 1, 0));
	b->u16 = CK(btf__add_int(btf, "short unsigned int", 2, 0));
	b->u32 = CK(btf__add_int(btf, "unsigned int", 4, 0));
	b->u64 = CK(btf__add_int(btf, "long long unsigned int", 8, 0));
	b->s32 = CK(btf__add_int(btf, "int", 4, BTF_INT_SIGNED));
	b->ulong = CK(btf__add_int(btf, "long unsigned int", 8, 0));
	b->voidp = CK(btf__add_ptr(btf, 0));
	b->pid = CK(btf__add_typedef(btf, "pid_t", b->s32));
	/* struct list_head { struct list_head *next, *prev; } */
	int self = (int)btf__type_cnt(btf) + 1;
	b->listp = CK(btf__add_ptr(btf, self));
	b->list = CK(btf__add_struct(btf, "list_head", 16));
	add_struct_field(btf, "next", b->listp, 0);
	add_struct_field(btf, "prev", b->listp, 8);
	int task = CK(btf__add_struct(btf, "task_struct", L->tgid_off + 64));
	add_struct_field(btf, "__state", b->u32, 24);
	add_struct_field(btf, "pid", b->pid, L->tgid_off - 4);
	add_struct_field(btf, "tgid", b->pid, L->tgid_off);
	/* mm_struct keeps its members in an anonymous struct */
	int taskp = CK(btf__add_ptr(btf, task));
	int inner = CK(btf__add_struct(btf, NULL, L->owner_off + 64));
	add_struct_field(btf, "mmap_base", b->ulong, 8);
	add_struct_field(btf, "owner", taskp, L->owner_off);
	int mm = CK(btf__add_struct(btf, "mm_struct", L->owner_off + 64));
	add_struct_field(btf, NULL, inner, 0);
	b->mmp = CK(btf__add_ptr(btf, mm));
}

static int typedef_struct(struct btf *btf, const char *tname, int sid)
{
	return CK(btf__add_typedef(btf, tname, sid));
}

static int proto(struct btf *btf, int ret, int n, const char *const *names, const int *types)
{
	int id = CK(btf__add_func_proto(btf, ret));
	for (int i = 0; i < n; i++)
		CK(btf__add_func_param(btf, names[i], types[i]));
	return id;
}

static void kfunc(struct btf *btf, const char *name, int ret, int n, const char *const *names,
		  const int *types)
{
	if (name)
		CK(btf__add_func(btf, name, BTF_FUNC_GLOBAL, proto(btf, ret, n, names, types)));
}

/* nvidia_uvm's types, its struct_ops and kfuncs as L lays them out. */
static void add_uvm(struct btf *btf, const struct base *b, const struct layout *L)
{
	int nvu16 = CK(btf__add_typedef(btf, "NvU16", b->u16));
	int nvu8 = CK(btf__add_typedef(btf, "NvU8", b->u8));
	int nvu64 = CK(btf__add_typedef(btf, "NvU64", b->u64));
	int page = CK(btf__add_typedef(btf, "uvm_page_index_t", nvu16));
	int rfield = L->region_u32 ? b->u32 : page, rsize = L->region_u32 ? 4 : 2;
	int reg = CK(btf__add_struct(btf, "uvm_va_block_region", 2 * (unsigned)rsize));
	add_struct_field(btf, "first", rfield, 0);
	add_struct_field(btf, "outer", rfield, (unsigned)rsize);
	int regp = CK(btf__add_ptr(btf, typedef_struct(btf, "uvm_va_block_region_t", reg)));
	int bits = CK(btf__add_array(btf, b->u32, b->ulong, 8));
	int mask = CK(btf__add_struct(btf, NULL, 64));
	add_struct_field(btf, "bitmap", bits, 0);
	int maskt = typedef_struct(btf, "uvm_page_mask_t", mask);
	int tree = CK(btf__add_struct(btf, "uvm_perf_prefetch_bitmap_tree", 72));
	add_struct_field(btf, "pages", maskt, 0);
	add_struct_field(btf, "offset", page, 64);
	add_struct_field(btf, "leaf_count", nvu16, 66);
	add_struct_field(btf, "level_count", nvu8, 68);
	int treep = CK(btf__add_ptr(btf, typedef_struct(btf, "uvm_perf_prefetch_bitmap_tree_t", tree)));
	/* chunk -> va_block -> managed_range -> va_range.va_space -> va_space_mm.mm */
	int vsmm = CK(btf__add_struct(btf, "uvm_va_space_mm_struct", 48));
	add_struct_field(btf, "mm", b->mmp, 0);
	int vsmmt = typedef_struct(btf, "uvm_va_space_mm_t", vsmm);
	int vs = CK(btf__add_struct(btf, "uvm_va_space_struct", L->vsmm_off + 48));
	add_struct_field(btf, "initialization_flags", nvu64, 0);
	add_struct_field(btf, "va_space_mm", vsmmt, L->vsmm_off);
	int vsp = CK(btf__add_ptr(btf, typedef_struct(btf, "uvm_va_space_t", vs)));
	int vr = CK(btf__add_struct(btf, "uvm_va_range_struct", 64));
	add_struct_field(btf, "va_space", vsp, 0);
	add_struct_field(btf, "start", nvu64, 40);
	int vrt = typedef_struct(btf, "uvm_va_range_t", vr);
	int mr = CK(btf__add_struct(btf, "uvm_va_range_managed_struct", 128));
	add_struct_field(btf, "va_range", vrt, 0);
	int mrp = CK(btf__add_ptr(btf, typedef_struct(btf, "uvm_va_range_managed_t", mr)));
	int vb = CK(btf__add_struct(btf, "uvm_va_block_struct", L->start_off + 64));
	add_struct_field(btf, "kref", nvu64, 0);
	if (L->managed_off)
		add_struct_field(btf, "managed_range", mrp, L->managed_off);
	add_struct_field(btf, "start", nvu64, L->start_off);
	add_struct_field(btf, "end", nvu64, L->start_off + 8);
	int vbp = CK(btf__add_ptr(btf, typedef_struct(btf, "uvm_va_block_t", vb)));
	/* in offset order, as the kernel wants: type:2 in_eviction:1 ...
	 * gpu_index:7 in one word before the list (gpu_ext's) or last */
	int ch = CK(btf__add_struct(btf, "uvm_gpu_chunk_struct", L->chunk_size));
	bool gpu_ext = L->list_off == 16;
	add_struct_field(btf, "address", nvu64, 0);
	static const char *const bf[] = { "type", "in_eviction", "inject_split_error", "is_zero",
					  "is_referenced", "state", "log2_size",
					  "va_block_page_index", "gpu_index" };
	static const int bf_bits[] = { 2, 1, 1, 1, 1, 3, 6, 10, 7 };
	unsigned bw = gpu_ext ? 8 : L->chunk_size - 8;
	for (unsigned i = 0, at = bw * 8; gpu_ext && i < 9; at += (unsigned)bf_bits[i++])
		CK(btf__add_field(btf, bf[i], b->u32, at, bf_bits[i]));
	add_struct_field(btf, "list", b->list, L->list_off);
	if (gpu_ext)
		add_struct_field(btf, "va_block", vbp, L->va_block_off);
	add_struct_field(btf, "parent", b->voidp, gpu_ext ? 40 : 24);
	if (!gpu_ext)
		add_struct_field(btf, "va_block", vbp, L->va_block_off);
	add_struct_field(btf, "suballoc", b->voidp, 48);
	for (unsigned i = 0, at = bw * 8; !gpu_ext && i < 9; at += (unsigned)bf_bits[i++])
		CK(btf__add_field(btf, bf[i], b->u32, at, bf_bits[i]));
	int chp = CK(btf__add_ptr(btf, typedef_struct(btf, "uvm_gpu_chunk_t", ch)));
	int pmm = CK(btf__add_struct(btf, "uvm_pmm_gpu_struct", 64));
	add_struct_field(btf, "chunk_size", nvu64, 0);
	add_struct_field(btf, "va_block_used", b->list, 8);
	add_struct_field(btf, "va_block_unused", b->list, 24);
	int pmmp = CK(btf__add_ptr(btf, typedef_struct(btf, "uvm_pmm_gpu_t", pmm)));
	/* the function whose kprobe captures the prefetch hooks' block: in
	 * every driver, the stock one too */
	static const char *const n_hint[] = { "va_block", "va_block_context", "new_residency",
					      "faulted_pages", "faulted_region", "bitmap_tree" };
	int t_hint[] = { vbp, b->voidp, b->u32, b->voidp, b->u32, treep };
	CK(btf__add_func(btf, "uvm_perf_prefetch_get_hint_va_block", BTF_FUNC_STATIC,
			 proto(btf, 0, 6, n_hint, t_hint)));
	if (!L->ops)
		return;

	int cchp = CK(btf__add_ptr(btf, CK(btf__add_const(btf, b->chr))));
	static const char *const n_trig[] = { "buf", "len" };
	static const char *const n_pf[] = { "page_index", "bitmap_tree", "max_prefetch_region",
					    "result_region" };
	static const char *const n_it[] = { "bitmap_tree", "max_prefetch_region", "current_region",
					    "counter", "prefetch_region" };
	static const char *const n_ch[] = { "pmm", "chunk", "list" };
	static const char *const n_ev[] = { "pmm", "va_block_used", "va_block_unused" };
	/* decision contexts (gpu_ext's newest): the prefetch one, and the
	 * chunk hooks' { pmm; root_chunk; observed; request } */
	int pfd = regp, pmd = b->listp;
	if (L->decision) {
		int d = CK(btf__add_struct(btf, "uvm_bpf_prefetch_decision", 24));
		add_struct_field(btf, "attempted", b->u8, 0);
		add_struct_field(btf, "conflict", b->u8, 1);
		add_struct_field(btf, "first", b->u64, 8);
		add_struct_field(btf, "outer", b->u64, 16);
		pfd = CK(btf__add_ptr(btf, typedef_struct(btf, "uvm_bpf_prefetch_decision_t", d)));
		int c = CK(btf__add_struct(btf, "uvm_bpf_pmm_decision_ctx", 72));
		add_struct_field(btf, "pmm", pmmp, 0);
		add_struct_field(btf, "root_chunk", b->voidp, 8);
		pmd = CK(btf__add_ptr(btf, typedef_struct(btf, "uvm_bpf_pmm_decision_ctx_t", c)));
	}
	int t_trig[] = { cchp, b->s32 }, t_pf[] = { page, treep, regp, pfd },
	    t_it[] = { treep, regp, regp, b->u32, pfd }, t_ch[] = { pmmp, chp, pmd },
	    t_ev[] = { pmmp, b->listp, b->listp };
	int fp[6] = {
		CK(btf__add_ptr(btf, proto(btf, b->s32, 2, n_trig, t_trig))),
		CK(btf__add_ptr(btf, proto(btf, b->s32, 4, n_pf, t_pf))),
		CK(btf__add_ptr(btf, proto(btf, b->s32, 5, n_it, t_it))),
		CK(btf__add_ptr(btf, proto(btf, b->s32, 3, n_ch, t_ch))),
		CK(btf__add_ptr(btf, proto(btf, b->s32, 3, n_ch, t_ch))),
		CK(btf__add_ptr(btf, proto(btf, b->s32, 3, n_ev, t_ev))),
	};
	unsigned n = 0;
	for (int i = 0; i < 6; i++)
		n += L->members[i] != NULL;
	CK(btf__add_struct(btf, L->ops, 8 * n));
	for (unsigned i = 0, at = 0; i < 6; i++)
		if (L->members[i])
			add_struct_field(btf, L->members[i], fp[i], 8 * at++);

	static const char *const n_mv[] = { "chunk", "list" };
	static const char *const n_rg[] = { "region", "first", "outer" };
	int t_mv[] = { chp, b->listp }, t_rg[] = { regp, page, page };
	kfunc(btf, L->kf_head, 0, 2, n_mv, t_mv);
	kfunc(btf, L->kf_tail, 0, 2, n_mv, t_mv);
	if (L->move_first) {
		static const char *const n_mf[] = { "list", "tail" };
		int t_mf[] = { b->listp, b->u64 };
		kfunc(btf, "bpf_gpu_list_move_first", 0, 2, n_mf, t_mf);
	}
	if (!L->decision) {
		kfunc(btf, L->kf_region, 0, 3, n_rg, t_rg);
		return;
	}
	static const char *const n_rd[] = { "decision_ctx", "first", "outer" };
	static const char *const n_ro[] = { "decision_ctx", "destination", "position" };
	int t_rd[] = { pfd, b->u64, b->u64 }, t_ro[] = { pmd, b->u64, b->u64 };
	kfunc(btf, L->kf_region, b->s32, 3, n_rd, t_rd);
	kfunc(btf, "bpf_gpu_request_reorder", b->s32, 3, n_ro, t_ro);
}

/* nvidia's scheduling contexts and struct_ops: gpu_ext's newest (with
 * on_timeslice_control), or (old) the first, whose task_init context
 * has other offsets and whose kfuncs return void. */
static void add_sched(struct btf *btf, const struct base *b, bool old)
{
	int u64 = CK(btf__add_typedef(btf, "__u64", b->u64));
	int u32 = CK(btf__add_typedef(btf, "__u32", b->u32));
	int ti = CK(btf__add_struct(btf, "nv_gpu_task_init_ctx", old ? 48 : 32));
	add_struct_field(btf, "tsg_id", u64, 0);
	add_struct_field(btf, "engine_type", u32, old ? 16 : 8);
	add_struct_field(btf, "default_timeslice", u64, old ? 8 : 16);
	add_struct_field(btf, "default_interleave", u32, old ? 20 : 24);
	add_struct_field(btf, "runlist_id", u32, old ? 24 : 28);
	if (old) {
		add_struct_field(btf, "timeslice", u64, 32);
		add_struct_field(btf, "interleave_level", u32, 40);
	}
	int bi = CK(btf__add_struct(btf, "nv_gpu_bind_ctx", 32));
	add_struct_field(btf, "tsg_id", u64, 0);
	add_struct_field(btf, "runlist_id", u32, 8);
	add_struct_field(btf, "channel_count", u32, 12);
	add_struct_field(btf, "timeslice_us", u64, 16);
	add_struct_field(btf, "interleave_level", u32, 24);
	add_struct_field(btf, "allow", u32, 28);
	int de = CK(btf__add_struct(btf, "nv_gpu_task_destroy_ctx", old ? 8 : 16));
	add_struct_field(btf, "tsg_id", u64, 0);
	if (!old) {
		add_struct_field(btf, "runlist_id", u32, 8);
		add_struct_field(btf, "engine_type", u32, 12);
	}
	int tc = CK(btf__add_struct(btf, "nv_gpu_timeslice_control_ctx", 40));
	add_struct_field(btf, "tsg_id", u64, 0);
	add_struct_field(btf, "requested_timeslice_us", u64, 8);
	add_struct_field(btf, "engine_type", u32, 16);
	int tip = CK(btf__add_ptr(btf, ti)), bip = CK(btf__add_ptr(btf, bi));
	int dep = CK(btf__add_ptr(btf, de)), tcp = CK(btf__add_ptr(btf, tc));
	static const char *const n_ctx[] = { "ctx", "value" };
	int fps[4];
	int ctxs[4] = { tip, bip, dep, tcp };
	for (int i = 0; i < 4; i++)
		fps[i] = CK(btf__add_ptr(btf, proto(btf, b->s32, 1, n_ctx, &ctxs[i])));
	static const char *const members[] = { "on_task_init", "on_bind", "on_task_destroy",
					       "on_timeslice_control" };
	int n = old ? 3 : 4;
	CK(btf__add_struct(btf, "nv_gpu_sched_ops", 8 * (unsigned)n));
	for (int i = 0; i < n; i++)
		add_struct_field(btf, members[i], fps[i], 8 * (unsigned)i);
	int ret = old ? 0 : b->s32;
	int t_ts[] = { tip, u64 }, t_il[] = { tip, u32 }, t_rj[] = { bip }, t_ov[] = { tcp, u64 };
	kfunc(btf, "bpf_nv_gpu_set_timeslice", ret, 2, n_ctx, t_ts);
	kfunc(btf, "bpf_nv_gpu_set_interleave", ret, 2, n_ctx, t_il);
	kfunc(btf, "bpf_nv_gpu_reject_bind", 0, 1, n_ctx, t_rj);
	if (!old)
		kfunc(btf, "bpf_nv_gpu_override_timeslice", b->s32, 2, n_ctx, t_ov);
}

static void write_btf(const struct btf *btf, const char *dir, const char *name)
{
	char path[4096];
	__u32 size;
	const void *data = btf__raw_data(btf, &size);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!data || !f || fwrite(data, 1, size, f) != size || fclose(f)) {
		fprintf(stderr, "btf_gen: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void subdir(char *out, size_t len, const char *dir, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
	if (mkdir(out, 0755) && errno != EEXIST) {
		fprintf(stderr, "btf_gen: cannot create %s: %s\n", out, strerror(errno));
		exit(1);
	}
}

/* One standalone module: the kernel's types, then what adds the rest. */
static void standalone(const char *dir, const char *name, const struct layout *L,
		       int sched)
{
	struct btf *btf = btf__new_empty();
	struct base b;
	if (!btf)
		exit(1);
	add_base(btf, &b, L);
	if (sched < 0)
		add_uvm(btf, &b, L);
	else if (sched < 2)
		add_sched(btf, &b, sched == 1);
	write_btf(btf, dir, name);
	btf__free(btf);
}

/* kernel/vmlinux: records as a kernel's BTF has them, for the script's
 * kernel types (cli/kernel_types.c): bit-fields (signed, across bytes),
 * an anonymous union holding an anonymous struct, a byte array, a
 * pointer to itself, typedefs and an enum. */
static void kernel_types(const char *dir)
{
	struct btf *btf = btf__new_empty();
	if (!btf)
		exit(1);
	int u32 = CK(btf__add_int(btf, "unsigned int", 4, 0));
	int s32 = CK(btf__add_int(btf, "int", 4, BTF_INT_SIGNED));
	int s16 = CK(btf__add_int(btf, "short", 2, BTF_INT_SIGNED));
	int u8 = CK(btf__add_int(btf, "unsigned char", 1, 0));
	int s64 = CK(btf__add_int(btf, "long", 8, BTF_INT_SIGNED));
	int ku8 = CK(btf__add_typedef(btf, "gpux_ku8", u8));
	int en = CK(btf__add_enum(btf, "gpux_kenum", 4));
	CK(btf__add_enum_value(btf, "GPUX_KE_A", 7));
	CK(btf__add_enum_value(btf, "GPUX_KE_B", -2));
	int idx = CK(btf__add_int(btf, "__ARRAY_SIZE_TYPE__", 4, 0));
	int arr = CK(btf__add_array(btf, idx, u8, 16));
	int fwd = CK(btf__add_fwd(btf, "gpux_kbits", BTF_FWD_STRUCT));
	int ptr = CK(btf__add_ptr(btf, fwd));
	int in = CK(btf__add_struct(btf, NULL, 4));
	CK(btf__add_field(btf, "s1", s16, 0, 0));
	CK(btf__add_field(btf, "s2", s16, 16, 0));
	int un = CK(btf__add_union(btf, NULL, 4));
	CK(btf__add_field(btf, "u1", s32, 0, 0));
	CK(btf__add_field(btf, NULL, in, 0, 0));
	CK(btf__add_struct(btf, "gpux_kbits", 40));
	CK(btf__add_field(btf, "a", u32, 0, 3));
	CK(btf__add_field(btf, "b", s32, 3, 5));
	CK(btf__add_field(btf, "c", s32, 12, 3));
	CK(btf__add_field(btf, "d", u32, 15, 9));
	CK(btf__add_field(btf, "e", ku8, 24, 0));
	CK(btf__add_field(btf, NULL, un, 32, 0));
	CK(btf__add_field(btf, "addr", arr, 64, 0));
	CK(btf__add_field(btf, "next", ptr, 192, 0));
	CK(btf__add_field(btf, "kind", en, 256, 0));
	CK(btf__add_union(btf, "gpux_ku", 8));
	CK(btf__add_field(btf, "x", s32, 0, 0));
	CK(btf__add_field(btf, "y", s64, 0, 0));
	write_btf(btf, dir, "vmlinux");
	btf__free(btf);
}

static int generate(const char *dir)
{
	char d[4096];
	if (mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "btf_gen: cannot create %s: %s\n", dir, strerror(errno));
		return 1;
	}
	/* genb: split BTF, as /sys/kernel/btf has it */
	subdir(d, sizeof(d), dir, "genb");
	struct btf *base = btf__new_empty();
	struct base b;
	add_base(base, &b, &gen_b);
	write_btf(base, d, "vmlinux");
	struct btf *mod = btf__new_empty_split(base);
	if (!mod)
		return 1;
	add_uvm(mod, &b, &gen_b);
	write_btf(mod, d, "nvidia_uvm");
	btf__free(mod);
	btf__free(base);
	subdir(d, sizeof(d), dir, "genc");
	standalone(d, "nvidia_uvm", &gen_c, -1);
	subdir(d, sizeof(d), dir, "kmod");
	standalone(d, "nvidia_uvm", &gen_kmod, -1);
	subdir(d, sizeof(d), dir, "gend");
	standalone(d, "nvidia_uvm", &gen_d, -1);
	subdir(d, sizeof(d), dir, "layout");
	standalone(d, "nvidia_uvm", &other, -1);
	standalone(d, "nvidia", &other, 1);
	subdir(d, sizeof(d), dir, "sched");
	standalone(d, "nvidia", &gen_c, 0);
	subdir(d, sizeof(d), dir, "kernel");
	kernel_types(d);
	subdir(d, sizeof(d), dir, "stock");
	standalone(d, "nvidia_uvm", &stock, -1);
	standalone(d, "nvidia", &stock, 2);
	return 0;
}

/* ---- --struct-ops: what libbpf will match against the driver ---- */

static void type_name(const struct btf *btf, __u32 id, char *out, size_t len)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	if (!id || !t) {
		snprintf(out, len, "void");
	} else if (btf_is_ptr(t)) {
		const struct btf_type *p = btf__type_by_id(btf, t->type);
		const char *n = p && t->type ? btf__name_by_offset(btf, p->name_off) : "";
		snprintf(out, len, "%s%s *", p && btf_is_composite(p) ? "struct " : "",
			 n && *n ? n : "void");
	} else {
		snprintf(out, len, "%s", btf__name_by_offset(btf, t->name_off));
	}
}

static int dump_object(const char *path)
{
	struct btf *btf = btf__parse_elf(path, NULL);
	if (!btf) {
		fprintf(stderr, "btf_gen: cannot read the BTF of %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (__u32 id = 1; id < btf__type_cnt(btf); id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name = btf__name_by_offset(btf, t->name_off);
		if (btf_is_datasec(t) && !strcmp(name, ".struct_ops")) {
			const struct btf_var_secinfo *v = btf_var_secinfos(t);
			for (int i = 0; i < btf_vlen(t); i++, v++) {
				const struct btf_type *var = btf__type_by_id(btf, v->type);
				const struct btf_type *st = btf__type_by_id(btf, var->type);
				printf("struct_ops %s: struct %s, %d members:",
				       btf__name_by_offset(btf, var->name_off),
				       btf__name_by_offset(btf, st->name_off), btf_vlen(st));
				const struct btf_member *m = btf_members(st);
				for (int k = 0; k < btf_vlen(st); k++, m++)
					printf(" %s", btf__name_by_offset(btf, m->name_off));
				putchar('\n');
			}
		} else if (btf_is_func(t) && btf_vlen(t) == BTF_FUNC_EXTERN) { /* vlen: linkage */
			const struct btf_type *fp = btf__type_by_id(btf, t->type);
			char tn[256];
			type_name(btf, fp->type, tn, sizeof(tn));
			printf("kfunc %s %s(", tn, name);
			const struct btf_param *p = btf_params(fp);
			for (int k = 0; k < btf_vlen(fp); k++, p++) {
				type_name(btf, p->type, tn, sizeof(tn));
				printf("%s%s", k ? ", " : "", tn);
			}
			printf(")\n");
		}
	}
	btf__free(btf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--struct-ops"))
		return dump_object(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: btf_gen DIR | btf_gen --struct-ops OBJ.bpf.o\n");
		return 2;
	}
	return generate(argv[1]);
}
