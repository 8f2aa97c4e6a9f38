/* What one PTX statement is, as far as probe sites go: an exit, a
 * parameter load, a declaration, or a global/generic memory access with
 * its address operand and access size. Works on ptx_clean()ed text. */
#ifndef GPUX_PTX_SITE_H
#define GPUX_PTX_SITE_H

#include <stdbool.h>
#include <stdint.h>

enum ptx_insn_kind {
	PI_OTHER,
	PI_DECL,    /* .reg, .local, .shared, .param, .pragma, ... */
	PI_LDPARAM, /* ld.param: stays before the entry probe */
	PI_RET,     /* ret (function exit; kernel exit in an .entry) */
	PI_EXIT,    /* exit (the thread ends, wherever it is) */
	PI_MEM,     /* ld/ldu/st/atom/red, global or generic */
};

enum ptx_mem_op { PM_LOAD, PM_STORE, PM_ATOMIC, PM_RED };

struct ptx_insn {
	enum ptx_insn_kind kind;
	char guard[72];      /* "@%p1", "@!%p1" or "" */
	/* PI_MEM */
	enum ptx_mem_op op;
	bool generic;        /* no state space: needs isspacep.global */
	uint32_t size;       /* bytes per lane (vector width included); 0: unknown */
	char base[256];      /* register, symbol, or "" for an absolute address */
	bool base_is_reg;
	long long off;       /* [base+off]; the absolute address if no base */
	const char *why;     /* non-NULL: a PI_MEM site that cannot be instrumented */
};

/* Classify one cleaned statement. */
void ptx_classify(const char *stmt, struct ptx_insn *in);

/* Register widths from a function's .reg declarations, so an address
 * held in a 32-bit register is widened. Bounded: past PTX_REGS_MAX
 * declarations, unknown registers count as 64-bit. */
#define PTX_REGS_MAX 512

struct ptx_reg_decl {
	char name[64]; /* "%rd" for %rd<N>, or the full name */
	bool range;
	unsigned bits;
};

struct ptx_regs {
	struct ptx_reg_decl d[PTX_REGS_MAX];
	int n;
};

void ptx_regs_add(struct ptx_regs *r, const char *decl);
/* Width in bits of register name; 0 if unknown. */
unsigned ptx_regs_bits(const struct ptx_regs *r, const char *name);

#endif
