/* Trampolines. At each site every matching probe is called with the
 * lane's struct gpux_dev_ctx (abi/probe_site.h: addr @0, size @8, store
 * @12, atomic @13, kernel_id @16, site_id @20) as three 64-bit words by
 * value, so nothing is written to memory: the ABI passes them in
 * registers and the probe extracts its fields from them. The call is a
 * plain `call`, predicated like the site, so exactly the lanes executing
 * the site call the probe, together: the probe is warp-collective and
 * must not be called under `.uni` (whose promise, all lanes of the warp,
 * we cannot make). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_rw_priv.h"

const char *const rw_added_names[] = { "gpux_p0", "gpux_p1", "gpux_p2", "gpux_r",
					GPUX_SYM_OFF, NULL };

/* The function's trampoline state, and %gpux_on: whether its sites run
 * (GPUX_SYM_OFF is 0), read once on entry; each site branches over
 * itself when it is off. */
void rw_decls(struct rw *rw, size_t off)
{
	size_t t0 = rw->text.len;
	ptx_buf_printf(&rw->text,
		       "\n\t// gpux: trampoline state\n"
		       "\t.reg .b64 %%gpux_a, %%gpux_c1, %%gpux_c2;\n"
		       "\t.reg .b32 %%gpux_o;\n"
		       "\t.reg .pred %%gpux_g, %%gpux_on, %%gpux_f;\n"
		       "\tld.global.u32 %%gpux_o, [" GPUX_SYM_OFF "];\n"
		       "\tsetp.eq.u32 %%gpux_on, %%gpux_o, 0;");
	for (int i = 0; i < rw->in->nprobes && i < RW_MAX_PROBES; i++)
		if (rw->fn.counted[i])
			ptx_buf_printf(&rw->text, "\n\t.reg .b64 %%gpux_n%d;\n"
				       "\tmov.b64 %%gpux_n%d, 0;", i, i);
	rw_edit(rw, off, 0, 0, t0);
}

void ptx_call_probe(struct ptx_buf *b, const char *const words[3], const char *guard,
		    const char *func, const char *suffix)
{
	ptx_buf_printf(b,
		       "\t{\n"
		       "\t.param .b64 gpux_p0;\n"
		       "\t.param .b64 gpux_p1;\n"
		       "\t.param .b64 gpux_p2;\n"
		       "\t.param .b64 gpux_r;\n"
		       "\tst.param.b64 [gpux_p0], %s;\n"
		       "\tst.param.b64 [gpux_p1], %s;\n"
		       "\tst.param.b64 [gpux_p2], %s;\n"
		       "\t%s%scall (gpux_r), %s%s, (gpux_p0, gpux_p1, gpux_p2);\n"
		       "\t}\n",
		       words[0], words[1], words[2], guard, *guard ? " " : "", func, suffix);
}

/* One call with word0 and the site's %gpux_c1, %gpux_c2. */
static void call_probe(struct ptx_buf *b, const char *word0, const char *guard,
		       const char *func, const char *suffix)
{
	const char *const words[3] = { word0, "%gpux_c1", "%gpux_c2" };
	ptx_call_probe(b, words, guard, func, suffix);
}

void rw_exit_point(struct rw *rw, size_t off, const struct ptx_insn *in)
{
	struct rw_fn *fn = &rw->fn;
	if (fn->nflush == fn->capflush) {
		size_t cap = fn->capflush ? 2 * fn->capflush : 16;
		struct rw_flush *v = realloc(fn->flush, cap * sizeof(*v));
		if (!v) {
			rw->oom = true;
			return;
		}
		fn->flush = v;
		fn->capflush = cap;
	}
	struct rw_flush *p = &fn->flush[fn->nflush++];
	p->off = off;
	snprintf(p->guard, sizeof(p->guard), "%s", in->guard);
}

/* At every ret and exit of a function with counted accesses: each
 * counting probe's counted form gets the lanes' counts, from the lanes
 * that leave here and have counted something. */
void rw_flushes(struct rw *rw)
{
	struct rw_fn *fn = &rw->fn;
	if (!fn->any_counted)
		return;
	for (size_t k = 0; k < fn->nflush; k++) {
		const struct rw_flush *at = &fn->flush[k];
		struct ptx_buf *b = &rw->text;
		size_t t0 = b->len;
		unsigned site = fn->next_site++;
		const char *g = at->guard;
		ptx_buf_printf(b, "// gpux: site %u, counted accesses\n"
			       "\t@!%%gpux_on bra $gpux_skip%u;\n"
			       "\tmov.b64 %%gpux_c1, 0;\n"
			       "\tmov.b64 %%gpux_c2, 0x%" PRIx64 "; // kernel_id %u, site_id %u\n",
			       site, site, fn->sites->id | (uint64_t)site << 32, fn->sites->id, site);
		for (int i = 0; i < rw->in->nprobes && i < RW_MAX_PROBES; i++) {
			if (!fn->counted[i])
				continue;
			if (*g)
				ptx_buf_printf(b, "\tmov.pred %%gpux_f, 0;\n");
			ptx_buf_printf(b, "\t%s%ssetp.ne.u64 %%gpux_f, %%gpux_n%d, 0;\n",
				       g, *g ? " " : "", i);
			char n[32];
			snprintf(n, sizeof(n), "%%gpux_n%d", i);
			call_probe(b, n, "@%gpux_f", rw->in->probes[i].func, GPUX_COUNTED_SUFFIX);
		}
		ptx_buf_printf(b, "$gpux_skip%u:\n\t", site);
		rw_edit(rw, at->off, 0, 1, t0);
	}
}

/* %gpux_a = the effective address; false if it cannot be formed. */
static bool address(struct rw *rw, const struct ptx_insn *in)
{
	struct ptx_buf *b = &rw->text;
	if (!in->base[0]) {
		ptx_buf_printf(b, "\tmov.b64 %%gpux_a, %lld;\n", in->off);
		return true;
	}
	const char *src = in->base;
	if (in->base_is_reg) {
		unsigned bits = ptx_regs_bits(rw->regs, in->base);
		if (bits == 32) {
			ptx_buf_printf(b, "\tcvt.u64.u32 %%gpux_a, %s;\n", in->base);
			src = "%gpux_a";
		} else if (bits && bits != 64) {
			return false;
		}
	} else {
		ptx_buf_printf(b, "\tmov.u64 %%gpux_a, %s;\n", in->base);
		src = "%gpux_a";
	}
	if (in->off)
		ptx_buf_printf(b, "\tadd.s64 %%gpux_a, %s, %lld;\n", src, in->off);
	else if (src == in->base)
		ptx_buf_printf(b, "\tmov.b64 %%gpux_a, %s;\n", src);
	return true;
}

static void count(struct ptx_func_sites *f, enum ptx_site_kind kind,
		  const struct ptx_insn *in)
{
	f->sites[kind]++;
	if (kind != PTX_SITE_ACCESS)
		return;
	unsigned *c[] = { &f->loads, &f->stores, &f->atomics, &f->reds };
	(*c[in->op])++;
	f->generic += in->generic;
}

/* Whether probe p wants this access instruction (its predicate's
 * store/atomic terms, settled per instruction). */
static bool wants(const struct ptx_probe *p, const struct ptx_insn *in)
{
	bool store = in->op != PM_LOAD, atomic = in->op == PM_ATOMIC || in->op == PM_RED;
	return !((p->only & GPUX_SITE_STORES && !store) || (p->only & GPUX_SITE_LOADS && store) ||
		 (p->only & GPUX_SITE_ATOMICS && !atomic));
}

void rw_site(struct rw *rw, size_t off, enum ptx_site_kind kind,
	     const struct ptx_insn *in)
{
	struct rw_fn *fn = &rw->fn;
	struct ptx_func_sites *f = fn->sites;
	int n = fn->nprobes[kind], want = 0;
	for (int i = 0; i < n; i++)
		want += kind != PTX_SITE_ACCESS || wants(&rw->in->probes[fn->probes[kind][i]], in);
	if (!want)
		return;
	if (kind == PTX_SITE_ACCESS && in->why) {
		f->skipped++;
		rw_warn(rw, "%s, line %u: access not instrumented: %s", f->name,
			ptx_line_of(rw->in->user, off), in->why);
		return;
	}
	struct ptx_buf *b = &rw->text;
	size_t t0 = b->len;
	unsigned site = fn->next_site;
	bool access = kind == PTX_SITE_ACCESS;
	ptx_buf_printf(b, "// gpux: site %u, %s\n", site, ptx_site_name(kind));
	/* probes off (GPUX_SYM_OFF): the whole site is one uniform branch */
	ptx_buf_printf(b, "\t@!%%gpux_on bra $gpux_skip%u;\n", site);
	if (access && !address(rw, in)) {
		b->len = t0; /* drop what was written */
		if (b->p)
			b->p[t0] = 0;
		f->skipped++;
		rw_warn(rw, "%s, line %u: access not instrumented: address register %s is not 32 or 64 bits",
			f->name, ptx_line_of(rw->in->user, off), in->base);
		return;
	}
	fn->next_site++;
	if (!access)
		ptx_buf_printf(b, "\tmov.b64 %%gpux_a, 0;\n");
	bool store = access && in->op != PM_LOAD;
	bool atomic = access && (in->op == PM_ATOMIC || in->op == PM_RED);
	uint64_t w1 = (access ? in->size : 0) | (uint64_t)store << 32 |
		      (uint64_t)atomic << 40;
	uint64_t w2 = f->id | (uint64_t)site << 32;
	ptx_buf_printf(b,
		       "\tmov.b64 %%gpux_c1, 0x%" PRIx64 "; // size %u, store %d, atomic %d\n"
		       "\tmov.b64 %%gpux_c2, 0x%" PRIx64 "; // kernel_id %u, site_id %u\n",
		       w1, (unsigned)(w1 & 0xffffffffu), store, atomic,
		       w2, f->id, site);
	const char *guard = in ? in->guard : "";
	if (access && in->generic) {
		/* Only lanes whose address is global call the probe. */
		if (*guard)
			ptx_buf_printf(b, "\tmov.pred %%gpux_g, 0;\n");
		ptx_buf_printf(b, "\t%s%sisspacep.global %%gpux_g, %%gpux_a;\n",
			       guard, *guard ? " " : "");
		guard = "@%gpux_g";
	}
	for (int i = 0; i < n; i++) {
		int pi = fn->probes[kind][i];
		const struct ptx_probe *p = &rw->in->probes[pi];
		if (access && !wants(p, in))
			continue;
		if (access && (p->only & GPUX_SITE_COUNT) && pi < RW_MAX_PROBES) {
			/* counted here, handed over at the function's exits */
			ptx_buf_printf(b, "\t%s%sadd.u64 %%gpux_n%d, %%gpux_n%d, 1; // %s\n",
				       guard, *guard ? " " : "", pi, pi, p->func);
			fn->counted[pi] = fn->any_counted = true;
			continue;
		}
		call_probe(b, "%gpux_a", guard, p->func, "");
	}
	ptx_buf_printf(b, "$gpux_skip%u:\n\t", site);
	count(f, kind, in);
	rw_edit(rw, off, 0, 1, t0);
}
