#include "ptx_site.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copy the n-byte token at s into out (size cap), false if it is longer. */
static bool copy_tok(char *out, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		return false;
	memcpy(out, s, n);
	out[n] = 0;
	return true;
}

/* Bits of a type suffix ("u32", "f16x2", "b128"), 0 if it is not one. */
static unsigned type_bits(const char *c, size_t n)
{
	char t[16];
	if (!copy_tok(t, sizeof(t), c, n))
		return 0;
	if (!strcmp(t, "f16x2") || !strcmp(t, "bf16x2"))
		return 32;
	if (!strcmp(t, "bf16") || !strcmp(t, "e4m3x2") || !strcmp(t, "e5m2x2"))
		return 16;
	if (!t[0] || !strchr("usbf", t[0]) || !isdigit((unsigned char)t[1]))
		return 0;
	char *end;
	unsigned long b = strtoul(t + 1, &end, 10);
	if (*end || (b != 8 && b != 16 && b != 32 && b != 64 && b != 128))
		return 0;
	return (unsigned)b;
}

/* Walk the '.'-separated parts of the opcode: state space, vector
 * width, element type. False if a space other than global is named. */
static bool opcode_parts(const char *op, size_t n, struct ptx_insn *in)
{
	unsigned vec = 1, bits = 0;
	bool global = false;
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && op[j] != '.')
			j++;
		const char *c = op + i;
		size_t m = j - i;
#define IS(w) (m == strlen(w) && !memcmp(c, w, m))
#define HAS(w) (m >= strlen(w) && !memcmp(c, w, strlen(w)))
		if (IS("global"))
			global = true;
		else if (HAS("shared") || IS("local") || IS("const") ||
			 HAS("param"))
			return false;
		else if (IS("v2") || IS("v4") || IS("v8"))
			vec = (unsigned)(c[1] - '0');
		else if (type_bits(c, m))
			bits = type_bits(c, m); /* the last type wins (atom) */
#undef IS
#undef HAS
		i = j + 1;
	}
	in->generic = !global;
	in->size = bits / 8 * vec;
	return true;
}

/* "[%rd1+8]", "[sym]", "[%rd2+-4]", "[0x100]" into base and off. */
static void parse_addr(const char *ops, struct ptx_insn *in)
{
	const char *lb = strchr(ops, '['), *rb = lb ? strchr(lb, ']') : NULL;
	if (!rb) {
		in->why = "no [address] operand";
		return;
	}
	const char *p = lb + 1;
	while (*p == ' ')
		p++;
	const char *b = p;
	while (p < rb && (isalnum((unsigned char)*p) || *p == '_' ||
			  *p == '$' || *p == '%'))
		p++;
	in->off = 0;
	if (p > b && !isdigit((unsigned char)*b)) {
		if (!copy_tok(in->base, sizeof(in->base), b, (size_t)(p - b))) {
			in->why = "address base name too long";
			return;
		}
		in->base_is_reg = *b == '%';
	} else {
		p = b; /* an absolute address */
	}
	while (*p == ' ')
		p++;
	if (p == rb)
		return;
	int sign = 1;
	if (in->base[0]) {
		if (*p != '+' && *p != '-') {
			in->why = "unrecognised address";
			return;
		}
		sign = *p++ == '-' ? -1 : 1;
		while (*p == ' ')
			p++;
	}
	char *end;
	long long v = strtoll(p, &end, 0); /* takes "-4" after '+' too */
	while (*end == ' ')
		end++;
	if (end == p || end != rb) {
		in->why = "unrecognised address";
		return;
	}
	in->off = sign * v;
}

void ptx_classify(const char *s, struct ptx_insn *in)
{
	memset(in, 0, sizeof(*in));
	in->kind = PI_OTHER;
	if (*s == '.') {
		in->kind = PI_DECL;
		return;
	}
	if (*s == '@') {
		size_t g = strcspn(s, " ");
		if (!copy_tok(in->guard, sizeof(in->guard), s, g))
			return; /* an absurd guard: leave the statement alone */
		s += g;
		while (*s == ' ')
			s++;
	}
	size_t n = strcspn(s, " ;");
	const char *ops = s + n;
	size_t base = strcspn(s, ".");
	if (base > n)
		base = n;
#define OP(w) (base == strlen(w) && !memcmp(s, w, base))
	if (OP("ret")) {
		in->kind = PI_RET;
		return;
	}
	if (OP("exit")) {
		in->kind = PI_EXIT;
		return;
	}
	if (OP("ld") && n >= 8 && !memcmp(s, "ld.param", 8)) {
		in->kind = PI_LDPARAM;
		return;
	}
	if (OP("ld") || OP("ldu"))
		in->op = PM_LOAD;
	else if (OP("st"))
		in->op = PM_STORE;
	else if (OP("atom"))
		in->op = PM_ATOMIC;
	else if (OP("red"))
		in->op = PM_RED;
	else
		return;
#undef OP
	/* st.async, red.async, ld.global.nc ... : only the space matters. */
	if (!opcode_parts(s + base, n - base, in))
		return;
	in->kind = PI_MEM;
	parse_addr(ops, in);
	if (!in->why && in->generic && in->base[0] && !in->base_is_reg)
		in->why = "generic access through a symbol";
}

void ptx_regs_add(struct ptx_regs *r, const char *s)
{
	if (strncmp(s, ".reg ", 5))
		return;
	s += 5;
	unsigned bits = 0;
	size_t n = strcspn(s, " ");
	if (*s == '.')
		bits = type_bits(s + 1, n - 1);
	if (!strncmp(s, ".pred", 5))
		bits = 1;
	s += n;
	/* Names: "%r<5>" or "%a, %b" up to ';'. */
	while (*s && *s != ';' && r->n < PTX_REGS_MAX) {
		while (*s == ' ' || *s == ',')
			s++;
		size_t m = strcspn(s, " ,;<");
		if (!m)
			break;
		struct ptx_reg_decl *d = &r->d[r->n];
		if (copy_tok(d->name, sizeof(d->name), s, m)) {
			d->bits = bits;
			d->range = s[m] == '<';
			r->n++;
		}
		s += m;
		if (*s == '<')
			s += strcspn(s, ">") + (s[strcspn(s, ">")] ? 1 : 0);
	}
}

unsigned ptx_regs_bits(const struct ptx_regs *r, const char *name)
{
	for (int i = 0; i < r->n; i++) {
		const struct ptx_reg_decl *d = &r->d[i];
		size_t m = strlen(d->name);
		if (strncmp(name, d->name, m))
			continue;
		if (!d->range && !name[m])
			return d->bits;
		if (d->range && name[m]) {
			const char *p = name + m;
			while (isdigit((unsigned char)*p))
				p++;
			if (!*p)
				return d->bits;
		}
	}
	return 0;
}
