/* The PTX JIT's driver: checks the shape of the program, finds jump
 * targets, writes the function's prologue and walks the instructions,
 * handing each class to its translator. */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>

#include "bpf_asm.h"
#include "ptx_emit.h"
#include "ptx_jit.h"

int ptx_fail(struct ptx_fn *f, int i, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (f->prog->spans)
		diag_error(f->diags, f->prog->spans[i], "PTX JIT: %s", msg);
	else
		diag_error_nospan(f->diags, "PTX JIT: instruction %d: %s", i, msg);
	return -1;
}

void ptx_line(struct ptx_fn *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputc('\t', f->out);
	vfprintf(f->out, fmt, ap);
	fputc('\n', f->out);
	va_end(ap);
}

static bool valid_symbol(const char *s)
{
	if (!s || !(isalpha((unsigned char)*s) || *s == '_' || *s == '$'))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '$')
			return false;
	return true;
}

bool ptx_is_jump(const struct bpf_insn *in)
{
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
	return (cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_CALL &&
	       op != BPF_EXIT;
}

/* Mark jump targets; a jump outside the program or into the second
 * half of a lddw has no PTX label to go to. */
static int find_targets(struct ptx_fn *f)
{
	const struct dev_prog *p = f->prog;
	bool *second = calloc((size_t)p->ninsns, sizeof(*second));
	if (!second)
		return ptx_fail(f, 0, "out of memory");
	int rc = 0;
	for (int i = 0; i < p->ninsns; i++)
		if (bpf_is_lddw(&p->insns[i]) && i + 1 < p->ninsns)
			second[++i] = true;
	for (int i = 0; i < p->ninsns; i++) {
		if (second[i] || !ptx_is_jump(&p->insns[i]))
			continue;
		int t = i + 1 + p->insns[i].off;
		if (t < 0 || t >= p->ninsns || second[t])
			rc = ptx_fail(f, i, "jump to %d is outside the program", t);
		else
			f->is_target[t] = true;
	}
	free(second);
	return rc;
}

int ptx_r1_map_after(const struct bpf_insn *in, int r1_map)
{
	uint8_t cls = BPF_CLASS(in->code);
	if (in->dst != 1 || !(cls == BPF_ALU || cls == BPF_ALU64 || cls == BPF_LDX ||
			      cls == BPF_LD))
		return r1_map;
	return bpf_is_lddw(in) && in->src == BPF_PSEUDO_MAP_IDX ? in->imm : -1;
}

static void forget(struct ptx_fn *f)
{
	f->r1_known = false;
	f->r1_map = -1;
	f->r2_fp_known = false;
	for (int r = 0; r < BPF_NREGS; r++)
		f->lk_at[r] = -1;
}

/* Keep track, within a basic block, of a constant in r1 (the builtin
 * ids the verifier requires to be constants), of the map r1 points at
 * and of r2 as an offset from r10 (a key on the stack), which pick the
 * array maps' by-value helpers. */
static void track_regs(struct ptx_fn *f, const struct bpf_insn *in)
{
	uint8_t cls = BPF_CLASS(in->code);
	if (cls == BPF_JMP && BPF_OP(in->code) == BPF_CALL) {
		forget(f);
		return;
	}
	bool alu64 = cls == BPF_ALU64;
	if (in->dst == 2 && (cls == BPF_ALU || alu64 || cls == BPF_LDX || cls == BPF_LD)) {
		uint8_t op = BPF_OP(in->code);
		if (alu64 && op == BPF_MOV && (in->code & BPF_X) && in->src == BPF_REG_FP &&
		    in->off == 0) {
			f->r2_fp_known = true;
			f->r2_fp = 0;
		} else if (alu64 && op == BPF_ADD && !(in->code & BPF_X) && f->r2_fp_known) {
			f->r2_fp += in->imm;
		} else {
			f->r2_fp_known = false;
		}
	}
	f->r1_map = ptx_r1_map_after(in, f->r1_map);
	bool writes = in->dst == 1 &&
		      (cls == BPF_ALU || cls == BPF_ALU64 || cls == BPF_LDX ||
		       cls == BPF_LD);
	if (!writes)
		return;
	f->r1_known = BPF_OP(in->code) == (BPF_MOV | BPF_K) &&
		      BPF_SRC(in->code) == BPF_K && in->off == 0 &&
		      (cls == BPF_ALU || cls == BPF_ALU64);
	if (f->r1_known)
		f->r1_value = cls == BPF_ALU ? (int64_t)(uint32_t)in->imm : in->imm;
}

static bool writes_reg(const struct bpf_insn *in, int r)
{
	uint8_t cls = BPF_CLASS(in->code);
	if (cls == BPF_JMP && BPF_OP(in->code) == BPF_CALL)
		return r <= 5;
	return in->dst == r && (cls == BPF_ALU || cls == BPF_ALU64 || cls == BPF_LDX ||
				cls == BPF_LD);
}

static bool reads_reg(const struct bpf_insn *in, int r)
{
	uint8_t cls = BPF_CLASS(in->code);
	bool x = (in->code & BPF_X) != 0;
	switch (cls) {
	case BPF_LDX:
		return in->src == r;
	case BPF_ST:
		return in->dst == r;
	case BPF_STX:
		return in->dst == r || in->src == r;
	case BPF_ALU: case BPF_ALU64:
		return (BPF_OP(in->code) != BPF_MOV && in->dst == r) || (x && in->src == r);
	case BPF_JMP: case BPF_JMP32:
		if (BPF_OP(in->code) == BPF_CALL)
			return r >= 1 && r <= 5;
		if (BPF_OP(in->code) == BPF_EXIT)
			return r == 0;
		return BPF_OP(in->code) != BPF_JA && (in->dst == r || (x && in->src == r));
	default:
		return false;
	}
}

/* Whether r1 may still hold the context (the value it enters with)
 * where some instruction reads it: a forward pass over the jumps, to a
 * fixed point (a bit per instruction: "r1 may be the entry value"). */
static bool entry_r1_read(const struct dev_prog *p, int from)
{
	bool *live = calloc((size_t)p->ninsns, sizeof(*live));
	if (!live)
		return true;
	live[0] = true;
	bool read = false, changed = true;
	while (changed && !read) {
		changed = false;
		for (int i = 0; i < p->ninsns && !read; i++) {
			const struct bpf_insn *x = &p->insns[i];
			int next = i + (bpf_is_lddw(x) ? 2 : 1);
			if (!live[i])
				continue;
			if (i >= from && reads_reg(x, 1)) {
				read = true;
				break;
			}
			if (writes_reg(x, 1))
				continue;
			uint8_t cls = BPF_CLASS(x->code), op = BPF_OP(x->code);
			bool jmp = (cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_CALL;
			int to[2] = { -1, -1 };
			if (!jmp || op != BPF_JA)
				to[0] = op == BPF_EXIT && jmp ? -1 : next;
			if (jmp && op != BPF_EXIT)
				to[1] = i + 1 + x->off;
			for (int k = 0; k < 2; k++)
				if (to[k] >= 0 && to[k] < p->ninsns && !live[to[k]])
					changed = live[to[k]] = true;
		}
	}
	free(live);
	return read;
}

/* The register that holds the context for the whole program, if the
 * program's first instruction copies r1 into a callee-saved register
 * that nothing writes again and that only loads read (what device
 * lowering emits), else -1. */
static int find_ctx_reg(const struct dev_prog *p)
{
	const struct bpf_insn *in = &p->insns[0];
	if (in->code != (BPF_ALU64 | BPF_MOV | BPF_X) || in->src != 1 || in->dst < 6 ||
	    in->dst > 9 || in->off != 0)
		return -1;
	int r = in->dst;
	for (int i = 1; i < p->ninsns; i++) {
		const struct bpf_insn *x = &p->insns[i];
		if (writes_reg(x, r))
			return -1;
		if (reads_reg(x, r) && !(BPF_CLASS(x->code) == BPF_LDX && x->src == r &&
					 BPF_MODE(x->code) == BPF_MEM))
			return -1;
		if (bpf_is_lddw(x))
			i++;
	}
	return r;
}

/* Whether a looked-up value's first word may live in a register: the
 * program has a lookup and stores through no pointer but the stack. */
static bool value_regs(const struct dev_prog *p)
{
	bool lookup = false;
	for (int i = 0; i < p->ninsns; i++) {
		const struct bpf_insn *in = &p->insns[i];
		uint8_t cls = BPF_CLASS(in->code);
		if ((cls == BPF_ST || cls == BPF_STX) && in->dst != BPF_REG_FP)
			return false;
		lookup |= in->code == (BPF_JMP | BPF_CALL) && in->imm == DH_MAP_LOOKUP;
		if (bpf_is_lddw(in))
			i++;
	}
	return lookup;
}

static void prologue(struct ptx_fn *f, const char *name)
{
	fprintf(f->out,
		".visible .func (.param .b64 gpux_ret) %s(.param .b64 gpux_c0, "
		".param .b64 gpux_c1, .param .b64 gpux_c2)\n"
		"{\n", name);
	ptx_line(f, ".reg .b64 %%r<%d>;", BPF_NREGS);
	ptx_line(f, ".reg .b64 %%c<3>, %%ctx, %%t<2>;");
	ptx_line(f, ".reg .b32 %%w<4>;");
	ptx_line(f, ".reg .pred %%p;");
	/* The lanes taking part: those that called together, narrowed by
	 * lane_filter. Helpers are warp-collective; every call is preceded
	 * by a bar.warp.sync on this mask, so they start converged and
	 * agree on __activemask(). */
	ptx_line(f, ".reg .b32 %%gpux_m;");
	if (f->stack_regs)
		ptx_line(f, ".reg .b64 %%s<%d>;", BPF_STACK_SIZE / 8);
	else
		ptx_line(f, ".local .align 8 .b8 gpux_stack[%d];", BPF_STACK_SIZE);
	for (int i = 0; i < f->prog->ninsns; i++) {
		const struct bpf_insn *in = &f->prog->insns[i];
		if (in->code == (BPF_JMP | BPF_CALL) && in->imm == DH_PREFETCH) {
			/* prefetch's address (ptx_call.c) */
			ptx_line(f, ".local .align 8 .b64 gpux_pf;");
			break;
		}
	}
	if (f->ctx_mem)
		ptx_line(f, ".local .align 8 .b64 gpux_ctxbuf[3];");
	if (f->value_regs)
		ptx_line(f, ".reg .b64 %%lv<%d>;", f->prog->ninsns);
	ptx_desc_decls(f);
	ptx_line(f, "activemask.b32 %%gpux_m;");
	for (int w = 0; w < 3; w++)
		ptx_line(f, "ld.param.u64 %%c%d, [gpux_c%d];", w, w);
	if (f->ctx_mem) {
		/* r1 may be used as a pointer: give it one to a copy, generic
		 * like r10, so pointers to the stack and to the context are
		 * loaded with the same ld */
		for (int w = 0; w < 3; w++)
			ptx_line(f, "st.local.u64 [gpux_ctxbuf+%d], %%c%d;", 8 * w, w);
		ptx_line(f, "cvta.local.u64 %%ctx, gpux_ctxbuf;");
		ptx_line(f, "mov.b64 %%r1, %%ctx;");
	} else {
		ptx_line(f, "mov.b64 %%r1, 0; // the context is %%c0..%%c2");
	}
	if (f->stack_regs) {
		ptx_line(f, "mov.b64 %%r10, 0; // the stack is %%s0..%%s%d", BPF_STACK_SIZE / 8 - 1);
		return;
	}
	ptx_line(f, "cvta.local.u64 %%r10, gpux_stack;");
	ptx_line(f, "add.s64 %%r10, %%r10, %d;", BPF_STACK_SIZE);
}

static int emit_insn(struct ptx_fn *f, int i)
{
	const struct bpf_insn *in = &f->prog->insns[i];
	if (in->dst >= BPF_NREGS || in->src >= BPF_NREGS)
		return ptx_fail(f, i, "no register r%d", in->dst >= BPF_NREGS ?
				in->dst : in->src);
	switch (BPF_CLASS(in->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		return ptx_emit_alu(f, i);
	case BPF_LD:
	case BPF_LDX:
	case BPF_ST:
	case BPF_STX:
		return ptx_emit_mem(f, i);
	default:
		if (BPF_OP(in->code) == BPF_CALL && BPF_CLASS(in->code) == BPF_JMP)
			return ptx_emit_call(f, i);
		return ptx_emit_jmp(f, i);
	}
}

int ptx_jit(const struct dev_prog *prog, const char *func_name, FILE *out,
	    struct diags *diags)
{
	struct ptx_fn f = { .prog = prog, .out = out, .diags = diags };
	if (!valid_symbol(func_name)) {
		diag_error_nospan(diags, "PTX JIT: '%s' is not a PTX function name",
				  func_name ? func_name : "(null)");
		return -1;
	}
	if (prog->ninsns <= 0) {
		diag_error_nospan(diags, "PTX JIT: %s has no instructions", prog->name);
		return -1;
	}
	f.ctx_reg = find_ctx_reg(prog);
	/* past the copy (if any), r1 must not be read as the context */
	f.ctx_mem = entry_r1_read(prog, f.ctx_reg >= 0 ? 1 : 0);
	f.r1_map = -1;
	f.is_target = calloc((size_t)prog->ninsns, sizeof(*f.is_target));
	if (!f.is_target) {
		diag_error_nospan(diags, "PTX JIT: out of memory");
		return -1;
	}
	int rc = find_targets(&f);
	if (rc == 0)
		ptx_stack_plan(&f);
	if (rc == 0)
		rc = ptx_desc_plan(&f);
	f.value_regs = value_regs(prog);
	forget(&f);
	f.lk_done = -1;
	/* The verifier rejects falling off the end; PTX would run into
	 * whatever follows, so refuse it here too. */
	const struct bpf_insn *last = &prog->insns[prog->ninsns - 1];
	if (last->code != (BPF_JMP | BPF_EXIT) && last->code != (BPF_JMP | BPF_JA))
		rc = ptx_fail(&f, prog->ninsns - 1,
			      "the program must end with exit or goto");
	fprintf(out, "// %s\n", prog->name ? prog->name : "probe");
	prologue(&f, func_name);
	for (int i = 0; i < prog->ninsns; i++) {
		const struct bpf_insn *in = &prog->insns[i];
		if (f.is_target[i]) {
			fprintf(out, "$L%d:\n", i);
			forget(&f);
		}
		/* The eBPF instruction as a comment keeps the PTX readable. */
		fprintf(out, "\t// %d: ", i);
		bpf_disasm_insn(out, prog->insns, i, prog->ninsns, prog->maps,
				prog->nmaps);
		fputc('\n', out);
		ptx_desc_hoist(&f, i);
		if (emit_insn(&f, i))
			rc = -1;
		track_regs(&f, in);
		ptx_lookup_track(&f, in, i);
		if (bpf_is_lddw(in))
			i++;
	}
	if (f.needs_leave) {
		fputs("$Lgpux_leave:\n", out);
		ptx_line(&f, "mov.b64 %%r0, 0;");
		ptx_line(&f, "st.param.b64 [gpux_ret], %%r0;");
		ptx_line(&f, "ret;");
	}
	fputs("}\n", out);
	free(f.is_target);
	free(f.desc_words);
	return rc;
}
