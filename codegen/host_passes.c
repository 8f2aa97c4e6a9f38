/* How much the host lowering optimises, by size. LLVM's O2 is what
 * normal probes get (the kernel's verifier and the handlers' run time
 * want it), but several of its function passes cost more than linear
 * time in the size of one function: a generated probe of 50,000
 * statements spent minutes there. A function above HOST_BIG_FN IR
 * instructions gets a light pipeline instead, whose passes are linear:
 * SROA (variables into registers), EarlyCSE and SimplifyCFG; on the
 * large programs measured, O2 gave the same instructions. Each function
 * runs one of the two: while one runs, the other group is optnone,
 * which function passes skip. By size of the AST, too: a large program
 * gets lighter debug info (hl_btf_init), a large probe's branch-free
 * runs are cut into blocks (host_stmt.c). */
#include <string.h>

#include <llvm-c/Transforms/PassBuilder.h>

#include "host_priv.h"

#define HOST_BIG_FN 20000     /* IR instructions in one function */
#define HOST_BIG_NODES 20000  /* AST nodes in the host probes */
#define HOST_SPLIT_NODES 2000 /* AST nodes in one probe (hl_big_probe) */
#define HOST_LIGHT "function(sroa,early-cse,simplifycfg)"

struct count {
	int n, limit;
};

static void count_node(struct node *n, void *arg)
{
	struct count *c = arg;
	if (++c->n < c->limit)
		ast_visit_children(n, count_node, c);
}

bool hl_big_program(struct program *prog)
{
	struct count c = { 0, HOST_BIG_NODES };
	for (struct node *p = prog->probes; p && c.n < c.limit; p = p->next)
		if (p->u.probe.place & (PLACE_HOST | PLACE_DRIVER))
			count_node(p, &c);
	return c.n >= c.limit;
}

bool hl_big_probe(struct node *probe)
{
	struct count c = { 0, HOST_SPLIT_NODES };
	count_node(probe, &c);
	return c.n >= c.limit;
}

static bool big_fn(LLVMValueRef f)
{
	int n = 0;
	for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b && n <= HOST_BIG_FN;
	     b = LLVMGetNextBasicBlock(b))
		for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i))
			n++;
	return n > HOST_BIG_FN;
}

static void set_optnone(struct hctx *h, LLVMValueRef f, bool on)
{
	static const char *const names[] = { "optnone", "noinline" };
	for (int k = 0; k < 2; k++) {
		unsigned id = LLVMGetEnumAttributeKindForName(names[k], strlen(names[k]));
		if (on)
			LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
						LLVMCreateEnumAttribute(h->ctx, id, 0));
		else
			LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, id);
	}
}

/* Runs pipeline on the functions fns[i] with big[i] == which, the others
 * optnone meanwhile; nothing when there are none. */
static int run_on(struct hctx *h, LLVMTargetMachineRef tm, const char *pipeline,
		  LLVMValueRef *fns, const bool *big, int n, bool which)
{
	int mine = 0;
	for (int i = 0; i < n; i++)
		mine += big[i] == which;
	if (!mine)
		return 0;
	for (int i = 0; i < n; i++)
		if (big[i] != which)
			set_optnone(h, fns[i], true);
	LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
	LLVMErrorRef e = LLVMRunPasses(h->mod, pipeline, tm, po);
	LLVMDisposePassBuilderOptions(po);
	for (int i = 0; i < n; i++)
		if (big[i] != which)
			set_optnone(h, fns[i], false);
	if (e) {
		char *m = LLVMGetErrorMessage(e);
		host_err(h, NULL, "internal error: LLVM passes: %s", m);
		LLVMDisposeErrorMessage(m);
		return -1;
	}
	return 0;
}

int hl_optimize(struct hctx *h, LLVMTargetMachineRef tm)
{
	int n = 0;
	for (LLVMValueRef f = LLVMGetFirstFunction(h->mod); f; f = LLVMGetNextFunction(f))
		n += !LLVMIsDeclaration(f);
	LLVMValueRef *fns = arena_zalloc(&h->obj->arena, sizeof(*fns) * (size_t)(n + 1));
	bool *big = arena_zalloc(&h->obj->arena, sizeof(*big) * (size_t)(n + 1));
	n = 0;
	for (LLVMValueRef f = LLVMGetFirstFunction(h->mod); f; f = LLVMGetNextFunction(f))
		if (!LLVMIsDeclaration(f)) {
			big[n] = big_fn(f);
			fns[n++] = f;
		}
	/* the programs' functions are external, each in its section: O2
	 * keeps them all */
	if (run_on(h, tm, "default<O2>", fns, big, n, false))
		return -1;
	return run_on(h, tm, HOST_LIGHT, fns, big, n, true);
}
