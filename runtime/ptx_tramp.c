/* Trampolines. At each site the lane's struct gpux_dev_ctx
 * (abi/probe_site.h: addr @0, size @8, store @12, atomic @13,
 * kernel_id @16, site_id @20; 24 bytes) is written to a .local buffer
 * declared once per function, and each matching probe is called with a
 * generic pointer to it. The call is a plain `call`, predicated like the
 * site, so exactly the lanes executing the site call the probe, together:
 * the probe is warp-collective and must not be called under `.uni`
 * (whose promise, all lanes of the warp, we cannot make). */
#include <inttypes.h>
#include <string.h>

#include "ptx_rw_priv.h"

const char *const rw_added_names[] = { "gpux_site_ctx", "gpux_p", "gpux_r", GPUX_SYM_OFF,
					NULL };

/* The function's trampoline state, and %gpux_on: whether its sites run
 * (GPUX_SYM_OFF is 0), read once on entry; each site branches over
 * itself when it is off. */
void rw_decls(struct rw *rw, size_t off)
{
	size_t t0 = rw->text.len;
	ptx_buf_printf(&rw->text,
		       "\n\t// gpux: trampoline state\n"
		       "\t.reg .b64 %%gpux_a, %%gpux_c;\n"
		       "\t.reg .b32 %%gpux_o;\n"
		       "\t.reg .pred %%gpux_g, %%gpux_on;\n"
		       "\t.local .align 8 .b8 gpux_site_ctx[%zu];\n"
		       "\tld.global.u32 %%gpux_o, [" GPUX_SYM_OFF "];\n"
		       "\tsetp.eq.u32 %%gpux_on, %%gpux_o, 0;",
		       sizeof(struct gpux_dev_ctx));
	rw_edit(rw, off, 0, 0, t0);
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
		       "\tst.local.b64 [gpux_site_ctx+0], %%gpux_a;\n"
		       "\tmov.b64 %%gpux_c, 0x%" PRIx64 "; // size %u, store %d, atomic %d\n"
		       "\tst.local.b64 [gpux_site_ctx+8], %%gpux_c;\n"
		       "\tmov.b64 %%gpux_c, 0x%" PRIx64 "; // kernel_id %u, site_id %u\n"
		       "\tst.local.b64 [gpux_site_ctx+16], %%gpux_c;\n"
		       "\tcvta.local.u64 %%gpux_c, gpux_site_ctx;\n",
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
		const struct ptx_probe *p = &rw->in->probes[fn->probes[kind][i]];
		if (access && !wants(p, in))
			continue;
		const char *func = p->func;
		ptx_buf_printf(b,
			       "\t{\n"
			       "\t.param .b64 gpux_p;\n"
			       "\t.param .b64 gpux_r;\n"
			       "\tst.param.b64 [gpux_p], %%gpux_c;\n"
			       "\t%s%scall (gpux_r), %s, (gpux_p);\n"
			       "\t}\n",
			       guard, *guard ? " " : "", func);
	}
	ptx_buf_printf(b, "$gpux_skip%u:\n\t", site);
	count(f, kind, in);
	rw_edit(rw, off, 0, 1, t0);
}
