#include "bpf_asm.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INSNS 65536
#define MAX_MAPS 64
#define MAX_LABELS 1024

struct label {
	char name[32];
	int at;
};

struct fixup {
	char name[32];
	int insn;
	struct span sp;
};

struct asm_state {
	const struct source *src;
	struct diags *diags;
	struct bpf_insn *insns;
	struct span *spans;
	int n;
	struct dev_map maps[MAX_MAPS];
	int nmaps;
	struct label labels[MAX_LABELS];
	int nlabels;
	struct fixup fixups[MAX_LABELS];
	int nfixups;
	struct dev_prog *prog;
	struct arena *arena;
	struct span line_sp;
	const char *p; /* cursor in the current line */
};

static void skip(struct asm_state *s)
{
	while (*s->p == ' ' || *s->p == '\t')
		s->p++;
}

static bool accept(struct asm_state *s, const char *tok)
{
	skip(s);
	size_t n = strlen(tok);
	if (strncmp(s->p, tok, n))
		return false;
	/* A word must end at a word boundary ("r1" is not "r10"). */
	if (isalnum((unsigned char)tok[n - 1]) &&
	    (isalnum((unsigned char)s->p[n]) || s->p[n] == '_'))
		return false;
	s->p += n;
	return true;
}

static bool ident(struct asm_state *s, char *buf, size_t len)
{
	skip(s);
	size_t n = 0;
	while (isalnum((unsigned char)s->p[n]) || s->p[n] == '_' || s->p[n] == '.' ||
	       s->p[n] == ':')
		n++;
	if (!n || n >= len)
		return false;
	memcpy(buf, s->p, n);
	buf[n] = '\0';
	s->p += n;
	return true;
}

/* r0..r10 or w0..w10; is32 tells which. */
static bool reg(struct asm_state *s, int *r, bool *is32)
{
	skip(s);
	if ((s->p[0] != 'r' && s->p[0] != 'w') || !isdigit((unsigned char)s->p[1]))
		return false;
	char *end;
	long v = strtol(s->p + 1, &end, 10);
	if (v < 0 || v > 10 || isalnum((unsigned char)*end))
		return false;
	if (is32)
		*is32 = s->p[0] == 'w';
	*r = (int)v;
	s->p = end;
	return true;
}

static bool num(struct asm_state *s, long long *v)
{
	skip(s);
	char *end;
	errno = 0;
	*v = strtoll(s->p, &end, 0);
	if (end == s->p || errno)
		return false;
	s->p = end;
	return true;
}

static int fail(struct asm_state *s, const char *what)
{
	diag_error(s->diags, s->line_sp, "%s", what);
	return -1;
}

static struct bpf_insn *emit(struct asm_state *s, uint8_t code, int dst,
			     int src, int off, long long imm)
{
	if (s->n >= MAX_INSNS)
		return NULL;
	struct bpf_insn *i = &s->insns[s->n];
	memset(i, 0, sizeof(*i));
	i->code = code;
	i->dst = (uint8_t)dst;
	i->src = (uint8_t)src;
	i->off = (int16_t)off;
	i->imm = (int32_t)imm;
	s->spans[s->n++] = s->line_sp;
	return i;
}

/* "*(u32 *)(r10 - 8)": size code, base register, offset. */
static bool mem_operand(struct asm_state *s, int *size, int *base, int *off)
{
	static const struct { const char *name; int code; } sizes[] = {
		{ "u8", BPF_B }, { "u16", BPF_H }, { "u32", BPF_W }, { "u64", BPF_DW },
	};
	if (!accept(s, "*") || !accept(s, "("))
		return false;
	size_t i;
	for (i = 0; i < 4; i++)
		if (accept(s, sizes[i].name))
			break;
	if (i == 4 || !accept(s, "*") || !accept(s, ")") || !accept(s, "(") ||
	    !reg(s, base, NULL))
		return false;
	*size = sizes[i].code;
	long long o = 0;
	if (accept(s, "+")) {
		if (!num(s, &o))
			return false;
	} else if (accept(s, "-")) {
		if (!num(s, &o))
			return false;
		o = -o;
	}
	if (o < INT16_MIN || o > INT16_MAX)
		return false;
	*off = (int)o;
	return accept(s, ")");
}

static const struct { const char *tok; int op; } alu_ops[] = {
	{ "s>>=", BPF_ARSH }, { "<<=", BPF_LSH }, { ">>=", BPF_RSH },
	{ "+=", BPF_ADD }, { "-=", BPF_SUB }, { "*=", BPF_MUL }, { "/=", BPF_DIV },
	{ "%=", BPF_MOD }, { "&=", BPF_AND }, { "|=", BPF_OR }, { "^=", BPF_XOR },
	{ "=", BPF_MOV },
};

static const struct { const char *tok; int op; } jmp_ops[] = {
	{ "s>=", BPF_JSGE }, { "s<=", BPF_JSLE }, { "s>", BPF_JSGT }, { "s<", BPF_JSLT },
	{ "==", BPF_JEQ }, { "!=", BPF_JNE }, { ">=", BPF_JGE }, { "<=", BPF_JLE },
	{ ">", BPF_JGT }, { "<", BPF_JLT }, { "&", BPF_JSET },
};

static int jump_target(struct asm_state *s, struct bpf_insn *i)
{
	long long rel;
	skip(s);
	if ((*s->p == '+' || *s->p == '-') && num(s, &rel)) {
		i->off = (int16_t)rel;
		return 0;
	}
	struct fixup *f = &s->fixups[s->nfixups];
	if (s->nfixups >= MAX_LABELS || !ident(s, f->name, sizeof(f->name)))
		return fail(s, "expected a label or +N after goto");
	f->insn = (int)(i - s->insns);
	f->sp = s->line_sp;
	s->nfixups++;
	return 0;
}

static int parse_directive(struct asm_state *s)
{
	char word[32];
	long long a, b, c;
	if (accept(s, ".name")) {
		skip(s);
		s->prog->name = arena_strdup(s->arena, s->p);
		s->p += strlen(s->p);
		return 0;
	}
	if (accept(s, ".map")) {
		struct dev_map *m = &s->maps[s->nmaps];
		if (s->nmaps >= MAX_MAPS || !ident(s, word, sizeof(word)) ||
		    !num(s, &a) || !num(s, &b))
			return fail(s, "expected .map NAME KEY_SIZE VALUE_SIZE [MAX_ENTRIES] "
				    "[readonly]");
		m->name = arena_strdup(s->arena, word);
		m->key_size = (uint32_t)a;
		m->value_size = (uint32_t)b;
		m->max_entries = num(s, &c) ? (uint32_t)c : 1024;
		/* no device probe changes it (dev_map.device_reads_only) */
		m->device_reads_only = accept(s, "readonly");
		s->nmaps++;
		return 0;
	}
	if (accept(s, ".budget")) {
		if (!num(s, &a) || !num(s, &b) || !num(s, &c))
			return fail(s, "expected .budget INSNS HELPER_CALLS MAP_OPS");
		s->prog->budget = (struct dev_budget){ (int)a, (int)b, (int)c };
		return 0;
	}
	return fail(s, "unknown directive");
}

/* rD = ...: a move, a load, a 64-bit immediate, a negation. */
static int parse_assign(struct asm_state *s, int dst, bool is32)
{
	uint8_t cls = is32 ? BPF_ALU : BPF_ALU64;
	int size, base, off, src;
	long long v;
	char word[32];
	const char *save = s->p;
	if (mem_operand(s, &size, &base, &off))
		return emit(s, (uint8_t)(BPF_LDX | BPF_MEM | size), dst, base, off, 0) ? 0 : -1;
	s->p = save;
	if (accept(s, "-")) {
		if (!reg(s, &src, NULL) || src != dst)
			return fail(s, "negation is rD = -rD");
		return emit(s, (uint8_t)(cls | BPF_NEG), dst, 0, 0, 0) ? 0 : -1;
	}
	if (accept(s, "map[")) {
		int k;
		if (!ident(s, word, sizeof(word)) || !accept(s, "]") || !accept(s, "ll"))
			return fail(s, "expected map[NAME] ll");
		for (k = 0; k < s->nmaps && strcmp(s->maps[k].name, word); k++)
			;
		if (k == s->nmaps)
			return fail(s, "unknown map (declare it with .map)");
		emit(s, BPF_LD | BPF_DW | BPF_IMM, dst, BPF_PSEUDO_MAP_IDX, 0, k);
		return emit(s, 0, 0, 0, 0, 0) ? 0 : -1;
	}
	if (reg(s, &src, NULL))
		return emit(s, (uint8_t)(cls | BPF_MOV | BPF_X), dst, src, 0, 0) ? 0 : -1;
	if (!num(s, &v))
		return fail(s, "expected a register, a number, map[NAME] ll or a memory operand");
	if (accept(s, "ll")) {
		emit(s, BPF_LD | BPF_DW | BPF_IMM, dst, 0, 0, (int32_t)(uint32_t)v);
		return emit(s, 0, 0, 0, 0, (int32_t)((unsigned long long)v >> 32)) ? 0 : -1;
	}
	if (v < INT32_MIN || v > INT32_MAX)
		return fail(s, "immediate does not fit in 32 bits (add 'll')");
	return emit(s, (uint8_t)(cls | BPF_MOV | BPF_K), dst, 0, 0, v) ? 0 : -1;
}

static int parse_insn(struct asm_state *s)
{
	int dst, src, size, base, off;
	bool is32;
	long long v;
	char word[32];
	if (accept(s, "exit"))
		return emit(s, BPF_JMP | BPF_EXIT, 0, 0, 0, 0) ? 0 : -1;
	if (accept(s, "call")) {
		const struct dev_helper_info *h;
		if (num(s, &v))
			return emit(s, BPF_JMP | BPF_CALL, 0, 0, 0, v) ? 0 : -1;
		if (!ident(s, word, sizeof(word)) || !(h = dev_helper_by_name(word)))
			return fail(s, "unknown helper");
		return emit(s, BPF_JMP | BPF_CALL, 0, 0, 0, h->id) ? 0 : -1;
	}
	if (accept(s, "goto")) {
		struct bpf_insn *i = emit(s, BPF_JMP | BPF_JA, 0, 0, 0, 0);
		return i ? jump_target(s, i) : -1;
	}
	if (accept(s, "if")) {
		size_t k;
		if (!reg(s, &dst, &is32))
			return fail(s, "expected a register after if");
		for (k = 0; k < sizeof(jmp_ops) / sizeof(jmp_ops[0]); k++)
			if (accept(s, jmp_ops[k].tok))
				break;
		if (k == sizeof(jmp_ops) / sizeof(jmp_ops[0]))
			return fail(s, "expected a comparison");
		uint8_t code = (uint8_t)((is32 ? BPF_JMP32 : BPF_JMP) | jmp_ops[k].op);
		struct bpf_insn *i;
		if (reg(s, &src, NULL))
			i = emit(s, code | BPF_X, dst, src, 0, 0);
		else if (num(s, &v))
			i = emit(s, code | BPF_K, dst, 0, 0, v);
		else
			return fail(s, "expected a register or a number to compare with");
		if (!i || !accept(s, "goto"))
			return fail(s, "expected goto");
		return jump_target(s, i);
	}
	if (accept(s, "lock")) {
		if (!mem_operand(s, &size, &base, &off) || !accept(s, "+=") ||
		    !reg(s, &src, NULL))
			return fail(s, "expected lock *(SIZE *)(rB + OFF) += rS");
		return emit(s, (uint8_t)(BPF_STX | BPF_ATOMIC | size), base, src, off,
			    BPF_ADD) ? 0 : -1;
	}
	const char *save = s->p;
	if (mem_operand(s, &size, &base, &off)) {
		if (!accept(s, "="))
			return fail(s, "expected = after a memory operand");
		if (reg(s, &src, NULL))
			return emit(s, (uint8_t)(BPF_STX | BPF_MEM | size), base, src, off, 0) ? 0 : -1;
		if (num(s, &v))
			return emit(s, (uint8_t)(BPF_ST | BPF_MEM | size), base, 0, off, v) ? 0 : -1;
		return fail(s, "expected a register or a number to store");
	}
	s->p = save;
	if (!reg(s, &dst, &is32))
		return fail(s, "unknown instruction");
	for (size_t k = 0; k < sizeof(alu_ops) / sizeof(alu_ops[0]); k++) {
		if (!accept(s, alu_ops[k].tok))
			continue;
		if (alu_ops[k].op == BPF_MOV)
			return parse_assign(s, dst, is32);
		uint8_t code = (uint8_t)((is32 ? BPF_ALU : BPF_ALU64) | alu_ops[k].op);
		if (reg(s, &src, NULL))
			return emit(s, code | BPF_X, dst, src, 0, 0) ? 0 : -1;
		if (num(s, &v))
			return emit(s, code | BPF_K, dst, 0, 0, v) ? 0 : -1;
		return fail(s, "expected a register or a number");
	}
	return fail(s, "expected an assignment operator");
}

static int parse_line(struct asm_state *s, const char *line, size_t len)
{
	char buf[256];
	if (len >= sizeof(buf))
		return fail(s, "line too long");
	memcpy(buf, line, len);
	buf[len] = '\0';
	char *semi = strchr(buf, ';');
	if (semi)
		*semi = '\0';
	s->p = buf;
	/* Labels: "name:" before the instruction, possibly several. */
	for (;;) {
		skip(s);
		const char *q = s->p;
		while (isalnum((unsigned char)*q) || *q == '_')
			q++;
		if (q == s->p || *q != ':')
			break;
		struct label *l = &s->labels[s->nlabels];
		if (s->nlabels >= MAX_LABELS || (size_t)(q - s->p) >= sizeof(l->name))
			return fail(s, "too many labels or label too long");
		memcpy(l->name, s->p, (size_t)(q - s->p));
		l->name[q - s->p] = '\0';
		l->at = s->n;
		s->nlabels++;
		s->p = q + 1;
	}
	skip(s);
	if (!*s->p)
		return 0;
	int rc = *s->p == '.' ? parse_directive(s) : parse_insn(s);
	if (rc == 0) {
		skip(s);
		if (*s->p)
			return fail(s, "unexpected text after the instruction");
	}
	return rc;
}

static int resolve_labels(struct asm_state *s)
{
	int rc = 0;
	for (int f = 0; f < s->nfixups; f++) {
		int k;
		for (k = 0; k < s->nlabels && strcmp(s->labels[k].name, s->fixups[f].name); k++)
			;
		if (k == s->nlabels) {
			diag_error(s->diags, s->fixups[f].sp, "unknown label '%s'", s->fixups[f].name);
			rc = -1;
			continue;
		}
		s->insns[s->fixups[f].insn].off =
			(int16_t)(s->labels[k].at - (s->fixups[f].insn + 1));
	}
	return rc;
}

int bpf_assemble(const struct source *src, struct arena *arena,
		 struct dev_prog *prog, struct diags *diags)
{
	struct asm_state *s = calloc(1, sizeof(*s));
	if (!s)
		return -1;
	s->src = src;
	s->diags = diags;
	s->arena = arena;
	s->prog = prog;
	memset(prog, 0, sizeof(*prog));
	prog->name = "asm";
	prog->budget = DEV_BUDGET_DEFAULT;
	s->insns = arena_zalloc(arena, sizeof(*s->insns) * MAX_INSNS);
	s->spans = arena_zalloc(arena, sizeof(*s->spans) * MAX_INSNS);
	int rc = 0, line = 1;
	for (const char *p = src->text, *end = src->text + src->len; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);
		s->line_sp = (struct span){ line, 1, line, (int)len + 1 };
		if (parse_line(s, p, len))
			rc = -1;
		p = nl ? nl + 1 : end;
	}
	if (rc == 0)
		rc = resolve_labels(s);
	prog->insns = s->insns;
	prog->spans = s->spans;
	prog->ninsns = s->n;
	struct dev_map *maps = arena_alloc(arena, sizeof(*maps) * (size_t)(s->nmaps + 1));
	memcpy(maps, s->maps, sizeof(*maps) * (size_t)s->nmaps);
	prog->maps = maps;
	prog->nmaps = s->nmaps;
	free(s);
	return rc;
}
