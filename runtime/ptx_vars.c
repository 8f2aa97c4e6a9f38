#include "ptx_vars.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_rewrite.h" /* the probe markers */
#include "ptx_scan.h"

/* Variable names -> slot, open addressing. */
struct name_set {
	const char **name;
	uint32_t *slot;
	size_t cap; /* a power of two, over twice the names */
};

struct walk {
	const char *s;
	size_t len;
	size_t r0, r1; /* gpux's probes module within s: [r0, r1) */
	struct ptx_var_list *vars;
	/* remapping only (o NULL when listing) */
	struct ptx_buf *o;
	size_t cur; /* s is copied to o up to here */
	struct name_set set;
	bool table_put;
	char *clean;
	size_t clean_cap;
	bool oom;
	char *err;
	size_t errlen;
};

static int fail(struct walk *w, const char *fmt, const char *arg, size_t off)
{
	/* no line: the text may be the rewritten module, not the program's */
	(void)off;
	snprintf(w->err, w->errlen, fmt, arg);
	return -1;
}

static bool ident0(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
	       c == '%';
}

static bool ident(char c)
{
	return ident0(c) || (c >= '0' && c <= '9');
}

static const char *cleaned(struct walk *w, const struct ptx_tok *t)
{
	const char *c = ptx_clean_tok(w->s, t, &w->clean, &w->clean_cap);
	w->oom |= !c;
	return c ? c : "";
}

static uint64_t hash(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

/* The slot of name p[0..n), or -1. */
static long long lookup(const struct name_set *set, const char *p, size_t n)
{
	if (!set->cap)
		return -1;
	for (size_t i = hash(p, n) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
		if (!set->name[i])
			return -1;
		if (!strncmp(set->name[i], p, n) && !set->name[i][n])
			return set->slot[i];
	}
}

static int set_build(struct name_set *set, const struct ptx_var_list *v)
{
	set->cap = 16;
	while (set->cap < 2 * v->n + 2)
		set->cap *= 2;
	set->name = calloc(set->cap, sizeof(*set->name));
	set->slot = calloc(set->cap, sizeof(*set->slot));
	if (!set->name || !set->slot)
		return -1;
	for (size_t k = 0; k < v->n; k++) {
		size_t n = strlen(v->name[k]);
		size_t i = hash(v->name[k], n) & (set->cap - 1);
		while (set->name[i])
			i = (i + 1) & (set->cap - 1);
		set->name[i] = v->name[k];
		set->slot[i] = (uint32_t)k;
	}
	return 0;
}

static bool starts(const char **p, const char *w)
{
	size_t n = strlen(w);
	if (strncmp(*p, w, n))
		return false;
	*p += n;
	return true;
}

/* A module-scope declaration c: 1 with its space (".global"/".const")
 * and name, 0 for anything else, -1 for a variable no copy can share. */
static int var_decl(struct walk *w, const char *c, size_t off, const char **space,
		    const char **name, size_t *nlen)
{
	const char *p = c;
	bool ext = false;
	for (bool more = true; more;) {
		more = starts(&p, ".visible ") || starts(&p, ".weak ") || starts(&p, ".common ");
		if (starts(&p, ".extern "))
			more = ext = true;
	}
	if (!strncmp(p, ".global ", 8))
		*space = ".global";
	else if (!strncmp(p, ".const ", 7))
		*space = ".const";
	else
		return 0;
	size_t head = strcspn(p, "=;");
	if (ext)
		return fail(w, "an .extern %s variable (relocatable device code)", *space, off);
	static const char *const refs[] = { ".texref", ".surfref", ".samplerref" };
	for (size_t i = 0; i < 3; i++)
		if (strstr(p, refs[i]))
			return fail(w, "a %s (a texture or surface reference)", refs[i], off);
	if (memchr(p, ',', head))
		return fail(w, "%s variables declared in one statement", *space, off);
	const char *e = p + head;
	while (e > p && (e[-1] == ' ' || e[-1] == ']')) {
		if (e[-1] == ']') { /* [N], [] and more dimensions */
			while (e > p && e[-1] != '[')
				e--;
			if (e > p)
				e--;
		} else {
			e--;
		}
	}
	const char *b = e;
	while (b > p && ident(b[-1]))
		b--;
	if (b == e || !ident0(*b))
		return fail(w, "a %s declaration without a name", *space, off);
	*name = b;
	*nlen = (size_t)(e - b);
	return 1;
}

static void copy_to(struct walk *w, size_t off)
{
	ptx_buf_put(w->o, w->s + w->cur, off - w->cur);
	w->cur = off;
}

/* A module-scope statement: a variable is listed, or in the copy
 * shrunk to a byte, the table declared before the first one. */
static int module_stmt(struct walk *w, const struct ptx_tok *t)
{
	const char *space, *name;
	size_t n;
	int rc = var_decl(w, cleaned(w, t), t->start, &space, &name, &n);
	if (rc <= 0) /* a program may name its own gpux_table: only the region is ours */
		return rc;
	if (!w->o) {
		struct ptx_var_list *v = w->vars;
		if (v->n == v->cap) {
			size_t cap = v->cap ? 2 * v->cap : 16;
			char **p = realloc(v->name, cap * sizeof(*p));
			if (!p) {
				w->oom = true;
				return -1;
			}
			v->name = p;
			v->cap = cap;
		}
		if (!(v->name[v->n] = strndup(name, n))) {
			w->oom = true;
			return -1;
		}
		v->n++;
		return 0;
	}
	copy_to(w, t->start);
	if (!w->table_put) {
		ptx_buf_printf(w->o, ".visible .const .align 8 .u64 " PTX_VARS_TABLE "[%zu];\n",
			       w->vars->n);
		w->table_put = true;
	}
	ptx_buf_printf(w->o, "%s .align 1 .b8 %.*s[1];", space, (int)n, name);
	w->cur = t->end;
	return 0;
}

/* The opcode op[0..n) on constant space moved to global space into o;
 * false if it names constant space and is not one that can move. */
static bool move_op(const char *op, size_t n, struct ptx_buf *o, bool *moved)
{
	const char *c = memmem(op, n, ".const", 6);
	while (c && c + 6 < op + n && c[6] != '.' && c[6] != ' ')
		c = memmem(c + 1, (size_t)(op + n - c - 1), ".const", 6);
	if (!c) {
		ptx_buf_put(o, op, n);
		return true;
	}
	*moved = true;
	size_t base = strcspn(op, ".");
	bool ld = base == 2 && !strncmp(op, "ld", 2), plain_ld = ld && c == op + 2;
	if (!(ld || (base == 3 && !strncmp(op, "ldu", 3)) ||
	      (base == 4 && !strncmp(op, "cvta", 4)) ||
	      (base == 8 && !strncmp(op, "isspacep", 8))))
		return false;
	ptx_buf_put(o, op, (size_t)(c - op));
	ptx_buf_put(o, plain_ld ? ".global.nc" : ".global", plain_ld ? 10 : 7);
	ptx_buf_put(o, c + 6, (size_t)(op + n - c - 6));
	return true;
}

static char prev_char(const char *lo, const char *p)
{
	while (p > lo && p[-1] == ' ')
		p--;
	return p > lo ? p[-1] : 0;
}

static char next_char(const char *p)
{
	while (*p == ' ')
		p++;
	return *p;
}

/* A statement of a function: references to variables become registers
 * loaded from the table, in a block of its own; constant space moves. */
static int body_stmt(struct walk *w, const struct ptx_tok *t)
{
	const char *c = cleaned(w, t);
	if (w->oom)
		return -1;
	const char *space, *name;
	size_t n;
	if (var_decl(w, c, t->start, &space, &name, &n) != 0)
		return w->err[0] ? -1
				 : fail(w, "a %s variable declared inside a function", space,
					t->start);
	if (!w->o)
		return 0;
	const char *op = c;
	if (*op == '@')
		op += strcspn(op, " ") + (op[strcspn(op, " ")] == ' ');
	size_t oplen = strcspn(op, " ;");
	const char *ops = op + oplen;
	/* the statement rewritten into edit: the opcode moved to global
	 * space, each variable named by the register its slot loads into
	 * (slot[r] for %gpux_mv<r>, in the order met, at most 8) */
	struct ptx_buf edit = { .max = w->o->max };
	uint32_t slot[8];
	int nref = 0;
	bool moved = false;
	const char *why = NULL, *bad = NULL;
	ptx_buf_put(&edit, c, (size_t)(op - c));
	if (!move_op(op, oplen, &edit, &moved))
		why = "an instruction on constant space";
	for (const char *p = ops; *p && !why; p++) {
		if (!ident0(*p) || (p > ops && (ident(p[-1]) || p[-1] == '.'))) {
			ptx_buf_put(&edit, p, 1);
			continue;
		}
		const char *e = p;
		while (ident(*e))
			e++;
		long long k = lookup(&w->set, p, (size_t)(e - p));
		if (k < 0) {
			ptx_buf_put(&edit, p, (size_t)(e - p));
		} else {
			char pc = prev_char(ops, p), nc = next_char(e);
			bool addr = pc == '[' && (nc == ']' || nc == '+' || nc == '-');
			bool bare = (pc == ',' || pc == 0) && (nc == ',' || nc == ';');
			int r = 0;
			while (r < nref && slot[r] != (uint32_t)k)
				r++;
			if (!addr && !bare)
				bad = w->vars->name[k];
			else if (r == 8)
				why = "over 8 variables in one statement";
			else if (r == nref)
				slot[nref++] = (uint32_t)k;
			if (bad)
				break;
			ptx_buf_printf(&edit, "%%gpux_mv%d", r);
		}
		p = e - 1;
	}
	bool change = !why && !bad && (nref || moved);
	if (change) {
		copy_to(w, t->start);
		if (nref) {
			ptx_buf_printf(w->o, "{ .reg .b64 %%gpux_mv<%d>;", nref);
			for (int r = 0; r < nref; r++)
				ptx_buf_printf(w->o, " ld.const.u64 %%gpux_mv%d, [" PTX_VARS_TABLE
					       "+%u];", r, slot[r] * 8);
			ptx_buf_put(w->o, " ", 1);
		}
		ptx_buf_put(w->o, edit.p, edit.len);
		if (nref)
			ptx_buf_put(w->o, " }", 2);
		w->cur = t->end;
	}
	free(edit.p);
	if (bad)
		return fail(w, "a use of the variable %s that gpux cannot redirect", bad, t->start);
	return why ? fail(w, "%s", why, t->start) : 0;
}

/* A function's body, its '{' next. */
static int body(struct walk *w, struct ptx_scan *sc)
{
	struct ptx_tok t;
	int depth = 0;
	do {
		if (ptx_scan_next(sc, &t, w->err, w->errlen))
			return -1;
		if (t.kind == PTX_END)
			return fail(w, "%s", "a function without its end", t.start);
		depth += (t.kind == PTX_OPEN) - (t.kind == PTX_CLOSE);
		if (t.kind == PTX_STMT && body_stmt(w, &t))
			return -1;
	} while (depth > 0);
	return 0;
}

static int walk(struct walk *w)
{
	const char *b = memmem(w->s, w->len, PTX_PROBES_BEGIN, strlen(PTX_PROBES_BEGIN));
	const char *e = b ? memmem(b, w->len - (size_t)(b - w->s), PTX_PROBES_END,
				   strlen(PTX_PROBES_END)) : NULL;
	w->r0 = b ? (size_t)(b - w->s) : w->len;
	w->r1 = e ? (size_t)(e - w->s) : w->r0;
	struct ptx_scan sc = { .s = w->s, .len = w->len };
	struct ptx_tok t;
	for (;;) {
		if (ptx_scan_next(&sc, &t, w->err, w->errlen))
			return -1;
		if (t.kind == PTX_END)
			return 0;
		bool ours = t.start >= w->r0 && t.start < w->r1;
		if (t.kind == PTX_HEAD) {
			const char *h = cleaned(w, &t);
			bool fn = ptx_has_word(h, ".entry") || ptx_has_word(h, ".func");
			if (ours || !fn ? ptx_scan_skip_block(&sc, w->err, w->errlen)
					: body(w, &sc))
				return -1;
		} else if (t.kind == PTX_STMT && !ours && module_stmt(w, &t)) {
			return -1;
		}
		if (w->oom)
			return -1;
	}
}

int ptx_vars_list(const char *s, size_t len, struct ptx_var_list *out, char *err,
		  size_t errlen)
{
	memset(out, 0, sizeof(*out));
	err[0] = 0;
	struct walk w = { .s = s, .len = len, .vars = out, .err = err, .errlen = errlen };
	int rc = walk(&w);
	if (w.oom)
		snprintf(err, errlen, "out of memory");
	free(w.clean);
	if (rc)
		ptx_var_list_free(out);
	return rc;
}

void ptx_var_list_free(struct ptx_var_list *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->name[i]);
	free(v->name);
	memset(v, 0, sizeof(*v));
}

/* Without variables a module has no constant space of its own either:
 * nothing to move. */
int ptx_vars_remap(const char *s, size_t len, char **out, size_t *outlen, char *err,
		   size_t errlen)
{
	*out = NULL;
	*outlen = 0;
	struct ptx_var_list vars;
	if (ptx_vars_list(s, len, &vars, err, errlen))
		return -1;
	if (!vars.n) {
		ptx_var_list_free(&vars);
		return 1;
	}
	struct ptx_buf o = { .max = 4 * len + (1u << 20) };
	struct walk w = { .s = s, .len = len, .vars = &vars, .o = &o, .err = err,
			  .errlen = errlen };
	int rc = set_build(&w.set, &vars) ? -1 : walk(&w);
	if (!rc) {
		copy_to(&w, len);
		if (o.oom || o.full || w.oom)
			rc = -1;
	}
	if (rc && (w.oom || o.oom || o.full || !w.set.name || !w.set.slot))
		snprintf(err, errlen, "out of memory");
	free(w.clean);
	free(w.set.name);
	free(w.set.slot);
	ptx_var_list_free(&vars);
	if (rc) {
		free(o.p);
		return -1;
	}
	*out = o.p;
	*outlen = o.len;
	return 0;
}
