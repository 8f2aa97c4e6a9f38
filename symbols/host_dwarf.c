/* host_dwarf.h: a function's parameters from DWARF, through libdw loaded
 * on first use. */
#include "host_dwarf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void host_dparams_free(struct host_dparam *p, int n)
{
	for (int i = 0; p && i < n; i++) {
		free(p[i].name);
		free(p[i].ctype);
		free(p[i].record);
	}
	free(p);
}

void host_drecords_free(struct host_drecords *r)
{
	for (int i = 0; r && i < r->n; i++)
		free(r->name[i]);
	if (r) {
		free(r->defs);
		free(r->name);
		free(r->size);
		*r = (struct host_drecords){ 0 };
	}
}

#if defined(__has_include)
#if __has_include(<elfutils/libdw.h>) && __has_include(<dwarf.h>)
#define GPUX_HAVE_LIBDW 1
#endif
#endif

#ifndef GPUX_HAVE_LIBDW

int host_dwarf_params(const char *path, const char *func, struct host_dparam **out, int *n,
		      struct host_drecords *recs, char *err, size_t errlen)
{
	(void)path, (void)func;
	*recs = (struct host_drecords){ 0 };
	*out = NULL;
	*n = 0;
	snprintf(err, errlen, "this gpux was built without libdw's headers: no DWARF arguments");
	return -ENOSYS;
}

bool host_dwarf_available(void)
{
	return false;
}

int host_dwarf_record(const char *path, const char *rec, struct host_drecords *recs, char *err,
		      size_t errlen)
{
	(void)path, (void)rec;
	*recs = (struct host_drecords){ 0 };
	snprintf(err, errlen, "this gpux was built without libdw's headers: no DWARF types");
	return -ENOSYS;
}

#else

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

/* x86-64 System V: integer and pointer arguments in six registers */
#define INT_REGS 6

static struct {
	void *lib;
	Dwarf *(*begin)(int, Dwarf_Cmd);
	int (*end)(Dwarf *);
	int (*nextcu)(Dwarf *, Dwarf_Off, Dwarf_Off *, size_t *, Dwarf_Off *, uint8_t *,
		      uint8_t *);
	Dwarf_Die *(*offdie)(Dwarf *, Dwarf_Off, Dwarf_Die *);
	ptrdiff_t (*getfuncs)(Dwarf_Die *, int (*)(Dwarf_Die *, void *), void *, ptrdiff_t);
	int (*child)(Dwarf_Die *, Dwarf_Die *);
	int (*siblingof)(Dwarf_Die *, Dwarf_Die *);
	int (*tag)(Dwarf_Die *);
	const char *(*diename)(Dwarf_Die *);
	Dwarf_Attribute *(*attr_integrate)(Dwarf_Die *, unsigned int, Dwarf_Attribute *);
	Dwarf_Die *(*formref_die)(Dwarf_Attribute *, Dwarf_Die *);
	int (*formudata)(Dwarf_Attribute *, Dwarf_Word *);
	int (*bytesize)(Dwarf_Die *);
	int (*hasattr)(Dwarf_Die *, unsigned int);
} dw;
static pthread_once_t dw_once = PTHREAD_ONCE_INIT;

static void dw_load(void)
{
	void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
#define SYM(f, s) *(void **)&dw.f = dlsym(h, s)
	SYM(begin, "dwarf_begin");
	SYM(end, "dwarf_end");
	SYM(nextcu, "dwarf_nextcu");
	SYM(offdie, "dwarf_offdie");
	SYM(getfuncs, "dwarf_getfuncs");
	SYM(child, "dwarf_child");
	SYM(siblingof, "dwarf_siblingof");
	SYM(tag, "dwarf_tag");
	SYM(diename, "dwarf_diename");
	SYM(attr_integrate, "dwarf_attr_integrate");
	SYM(formref_die, "dwarf_formref_die");
	SYM(formudata, "dwarf_formudata");
	SYM(bytesize, "dwarf_bytesize");
	SYM(hasattr, "dwarf_hasattr");
#undef SYM
	if (!dw.begin || !dw.end || !dw.nextcu || !dw.offdie || !dw.getfuncs || !dw.child ||
	    !dw.siblingof || !dw.tag || !dw.diename || !dw.attr_integrate || !dw.formref_die ||
	    !dw.formudata || !dw.bytesize || !dw.hasattr) {
		dlclose(h);
		memset(&dw, 0, sizeof(dw));
		return;
	}
	dw.lib = h;
}

bool host_dwarf_available(void)
{
	pthread_once(&dw_once, dw_load);
	return dw.lib != NULL;
}

/* The DIE die's DW_AT_type names, or NULL (void). */
static Dwarf_Die *type_of(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	if (!dw.attr_integrate(die, DW_AT_type, &a))
		return NULL;
	return dw.formref_die(&a, out);
}

/* The type as C writes it, the way bpftrace prints it ("const char*"),
 * into buf; depth bounds what a broken file could loop on. */
static void ctype(Dwarf_Die *t, char *buf, size_t len, int depth)
{
	Dwarf_Die in;
	const char *name = t ? dw.diename(t) : NULL;
	if (!t || depth > 16) {
		snprintf(buf, len, "void");
		return;
	}
	switch (dw.tag(t)) {
	case DW_TAG_pointer_type: {
		char inner[256];
		ctype(type_of(t, &in), inner, sizeof(inner), depth + 1);
		snprintf(buf, len, "%s*", inner);
		return;
	}
	case DW_TAG_const_type:
	case DW_TAG_volatile_type: {
		char inner[256];
		ctype(type_of(t, &in), inner, sizeof(inner), depth + 1);
		snprintf(buf, len, "%s %s", dw.tag(t) == DW_TAG_const_type ? "const" : "volatile",
			 inner);
		return;
	}
	case DW_TAG_structure_type:
		snprintf(buf, len, "struct %s", name ? name : "(anonymous)");
		return;
	case DW_TAG_union_type:
		snprintf(buf, len, "union %s", name ? name : "(anonymous)");
		return;
	case DW_TAG_enumeration_type:
		snprintf(buf, len, "enum %s", name ? name : "(anonymous)");
		return;
	default:
		snprintf(buf, len, "%s", name ? name : "?");
	}
}

/* t without typedefs, const and volatile */
static Dwarf_Die *peel(Dwarf_Die *t, Dwarf_Die *buf)
{
	for (int i = 0; t && i < 16; i++) {
		int tag = dw.tag(t);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type)
			return t;
		t = type_of(t, buf);
	}
	return t;
}

/* A base type's DW_ATE_* encoding (0 where it says none). */
static Dwarf_Word encoding(Dwarf_Die *t)
{
	Dwarf_Attribute a;
	Dwarf_Word enc = 0;
	if (dw.attr_integrate(t, DW_AT_encoding, &a))
		dw.formudata(&a, &enc);
	return enc;
}

static bool is_float(Dwarf_Word enc)
{
	return enc == DW_ATE_float || enc == DW_ATE_complex_float;
}

enum arg_class { CLASS_INT, CLASS_FLOAT, CLASS_MEMORY };

/* Where a parameter of type t arrives, its size and sign. */
static enum arg_class classify(Dwarf_Die *t, unsigned *size, bool *is_signed)
{
	Dwarf_Die in;
	*size = 8;
	*is_signed = false;
	t = peel(t, &in);
	if (!t)
		return CLASS_MEMORY; /* void: nothing to read */
	int tag = dw.tag(t);
	if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type)
		return CLASS_INT;
	int bytes = dw.bytesize(t);
	if (tag == DW_TAG_enumeration_type) {
		*size = bytes > 0 ? (unsigned)bytes : 4;
		return CLASS_INT;
	}
	if (tag != DW_TAG_base_type || bytes <= 0 || bytes > 8)
		return CLASS_MEMORY; /* a record, or qualifiers too deep */
	*size = (unsigned)bytes;
	Dwarf_Word enc = encoding(t);
	if (is_float(enc))
		return CLASS_FLOAT;
	*is_signed = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
	return CLASS_INT;
}

/* ---- the records parameters point to, as C text ---- */

/* text grows by appending; failure sticks */
struct ctext {
	char *s;
	size_t len, cap;
	bool bad;
};

static void put(struct ctext *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct ctext *t, const char *fmt, ...)
{
	va_list ap;
	for (int pass = 0; pass < 2 && !t->bad; pass++) {
		va_start(ap, fmt);
		int k = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (k < 0) {
			t->bad = true;
			return;
		}
		if (t->s && t->len + (size_t)k < t->cap) {
			t->len += (size_t)k;
			return;
		}
		size_t cap = (t->cap ? 2 * t->cap : 1024) + (size_t)k;
		char *ns = realloc(t->s, cap);
		if (!ns) {
			t->bad = true;
			return;
		}
		t->s = ns;
		t->cap = cap;
	}
}

/* defs: the records finished, each after those it holds by value;
 * body: the members of the record being written */
struct recgen {
	struct ctext defs, body;
	struct host_drecords *out;
	int depth;
};

static bool emit_record(struct recgen *g, Dwarf_Die *r);

/* "struct x", "int": a member's or pointee's type without pointers,
 * which the C front end knows (records emitted first); false where it
 * cannot be written so */
static bool base_name(struct recgen *g, Dwarf_Die *t, bool by_value, char *buf, size_t len)
{
	Dwarf_Die in;
	t = peel(t, &in);
	if (!t) {
		snprintf(buf, len, "void");
		return !by_value;
	}
	int tag = dw.tag(t);
	const char *name = dw.diename(t);
	if (tag == DW_TAG_base_type && name) {
		if (is_float(encoding(t)))
			return false;
		snprintf(buf, len, "%s", name);
		return true;
	}
	if (tag == DW_TAG_enumeration_type) {
		int b = dw.bytesize(t);
		snprintf(buf, len, "%s", b == 1 ? "unsigned char" : b == 2 ? "short" :
					 b == 8 ? "long" : "int");
		return true;
	}
	if ((tag == DW_TAG_structure_type || tag == DW_TAG_union_type) && name) {
		snprintf(buf, len, "%s %s", tag == DW_TAG_union_type ? "union" : "struct", name);
		/* held by value: defined first; pointed to: named is enough */
		return !by_value || emit_record(g, t);
	}
	return false;
}

/* One member, "TYPE NAME;", pointers and an array of one dimension */
static bool emit_member(struct recgen *g, Dwarf_Die *m)
{
	Dwarf_Die buf, in, *t = peel(type_of(m, &buf), &in);
	const char *name = dw.diename(m);
	char base[256];
	int stars = 0;
	unsigned count = 0;
	if (!name || dw.hasattr(m, DW_AT_bit_size) || dw.hasattr(m, DW_AT_data_bit_offset))
		return false;
	if (t && dw.tag(t) == DW_TAG_array_type) {
		Dwarf_Die sub, b2;
		Dwarf_Attribute a;
		Dwarf_Word ub = 0;
		if (dw.child(t, &sub) != 0 || dw.tag(&sub) != DW_TAG_subrange_type ||
		    dw.siblingof(&sub, &b2) == 0 || !dw.attr_integrate(&sub, DW_AT_upper_bound, &a) ||
		    dw.formudata(&a, &ub) != 0 || ub >= 1u << 20)
			return false;
		count = (unsigned)ub + 1;
		t = peel(type_of(t, &buf), &in);
	}
	while (t && dw.tag(t) == DW_TAG_pointer_type && stars < 4) {
		stars++;
		t = peel(type_of(t, &buf), &in);
	}
	if (t && dw.tag(t) == DW_TAG_subroutine_type) { /* a function pointer */
		if (stars != 1 || count)
			return false;
		put(&g->body, "\tvoid *%s;\n", name);
		return true;
	}
	if (!base_name(g, t, stars == 0, base, sizeof(base)))
		return false;
	put(&g->body, "\t%s %.*s%s", base, stars, "****", name);
	if (count)
		put(&g->body, "[%u]", count);
	put(&g->body, ";\n");
	return true;
}

static bool known(const struct recgen *g, const char *rec)
{
	for (int i = 0; i < g->out->n; i++)
		if (!strcmp(g->out->name[i], rec))
			return true;
	return false;
}

/* struct or union r, once, after the records it holds by value; false
 * where a member cannot be written (bitfields, anonymous records,
 * floats, arrays of arrays) */
static bool emit_record(struct recgen *g, Dwarf_Die *r)
{
	const char *name = dw.diename(r);
	bool is_union = dw.tag(r) == DW_TAG_union_type;
	char rec[300];
	int size = dw.bytesize(r);
	if (!name || size <= 0 || dw.hasattr(r, DW_AT_declaration) || g->depth > 8)
		return false;
	snprintf(rec, sizeof(rec), "%s %s", is_union ? "union" : "struct", name);
	if (known(g, rec))
		return true;
	/* members are written to a body of their own; records they hold
	 * by value are finished (in defs) first */
	struct ctext outer = g->body;
	g->body = (struct ctext){ 0 };
	g->depth++;
	bool ok = true;
	Dwarf_Die m;
	if (dw.child(r, &m) == 0) {
		do {
			if (dw.tag(&m) == DW_TAG_member)
				ok = emit_member(g, &m);
		} while (ok && dw.siblingof(&m, &m) == 0);
	}
	g->depth--;
	struct ctext body = g->body;
	g->body = outer;
	if (ok && !body.bad && !known(g, rec)) {
		char **nn = realloc(g->out->name, (size_t)(g->out->n + 1) * sizeof(*nn));
		unsigned *ns = nn ? realloc(g->out->size, (size_t)(g->out->n + 1) * sizeof(*ns))
				  : NULL;
		if (nn)
			g->out->name = nn;
		if (ns)
			g->out->size = ns;
		char *copy = ns ? strdup(rec) : NULL;
		if (!copy) {
			free(body.s);
			g->defs.bad = true;
			return false;
		}
		g->out->name[g->out->n] = copy;
		g->out->size[g->out->n++] = (unsigned)size;
		put(&g->defs, "%s {\n%.*s};\n", rec, (int)body.len, body.s ? body.s : "");
	}
	free(body.s);
	return ok && !body.bad;
}

/* A parameter of type t that points to a record: the record, defined in
 * g, and how many pointers deep */
static void pointee_record(struct recgen *g, Dwarf_Die *t, struct host_dparam *p)
{
	Dwarf_Die buf, in;
	int stars = 0;
	t = peel(t, &in);
	while (t && dw.tag(t) == DW_TAG_pointer_type && stars < 4) {
		stars++;
		t = peel(type_of(t, &buf), &in);
	}
	int tag = t ? dw.tag(t) : 0;
	if (!stars || (tag != DW_TAG_structure_type && tag != DW_TAG_union_type))
		return;
	if (!emit_record(g, t))
		return;
	p->record = malloc(300);
	if (p->record)
		snprintf(p->record, 300, "%s %s", tag == DW_TAG_union_type ? "union" : "struct",
			 dw.diename(t));
	p->stars = stars;
}

struct find {
	const char *func;
	Dwarf_Die die;
	bool found;
};

static int on_func(Dwarf_Die *f, void *arg)
{
	struct find *fd = arg;
	const char *name = dw.diename(f);
	if (!name || strcmp(name, fd->func) || dw.hasattr(f, DW_AT_declaration))
		return DWARF_CB_OK;
	fd->die = *f;
	fd->found = true;
	return DWARF_CB_ABORT;
}

static int params_of(Dwarf_Die *f, struct host_dparam **out, int *n, struct recgen *g)
{
	Dwarf_Die c, t;
	int cap = 0, next = 0;
	bool lost = false; /* a struct by value: where the rest are is not known */
	*out = NULL;
	*n = 0;
	if (dw.child(f, &c) != 0)
		return 0;
	do {
		if (dw.tag(&c) != DW_TAG_formal_parameter)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 8;
			struct host_dparam *v = realloc(*out, (size_t)cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			*out = v;
		}
		struct host_dparam *p = &(*out)[*n];
		char buf[512];
		Dwarf_Die *ty = type_of(&c, &t);
		ctype(ty, buf, sizeof(buf), 0);
		const char *name = dw.diename(&c);
		p->name = strdup(name ? name : "");
		p->ctype = strdup(buf);
		(*n)++;
		if (!p->name || !p->ctype)
			return -ENOMEM;
		enum arg_class k = classify(ty, &p->size, &p->is_signed);
		p->reg = -1;
		p->record = NULL;
		p->stars = 0;
		if (k == CLASS_INT)
			pointee_record(g, ty, p);
		if (k == CLASS_MEMORY)
			lost = true;
		else if (k == CLASS_INT && !lost)
			p->reg = next++;
	} while (dw.siblingof(&c, &c) == 0);
	return 0;
}

/* libdw loaded, path opened (*fd) and its DWARF begun (*d). 0, or
 * -ENOSYS (no libdw; what: what is then missing), -ENOENT (no DWARF),
 * -errno, err saying why; nothing is left open then. */
static int open_dwarf(const char *path, const char *what, int *fd, Dwarf **d, char *err,
		      size_t errlen)
{
	pthread_once(&dw_once, dw_load);
	if (!dw.lib) {
		snprintf(err, errlen, "libdw.so.1 cannot be loaded here: no DWARF %s", what);
		return -ENOSYS;
	}
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
		return -e;
	}
	*d = dw.begin(*fd, DWARF_C_READ);
	if (!*d) {
		close(*fd);
		snprintf(err, errlen, "%s has no DWARF", path);
		return -ENOENT;
	}
	return 0;
}

/* The first definition of struct or union tag among the compile units'
 * top-level types. */
static bool find_record_die(Dwarf *d, bool is_union, const char *tag, Dwarf_Die *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	int want = is_union ? DW_TAG_union_type : DW_TAG_structure_type;
	while (dw.nextcu(d, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, c;
		if (dw.offdie(d, off + hsize, &cu) && dw.child(&cu, &c) == 0) {
			do {
				const char *name = dw.diename(&c);
				if (dw.tag(&c) == want && name && !strcmp(name, tag) &&
				    !dw.hasattr(&c, DW_AT_declaration)) {
					*out = c;
					return true;
				}
			} while (dw.siblingof(&c, &c) == 0);
		}
		off = next;
	}
	return false;
}

int host_dwarf_record(const char *path, const char *rec, struct host_drecords *recs, char *err,
		      size_t errlen)
{
	*recs = (struct host_drecords){ 0 };
	bool is_union = !strncmp(rec, "union ", 6);
	const char *tag = is_union ? rec + 6 : !strncmp(rec, "struct ", 7) ? rec + 7 : NULL;
	if (!tag) {
		snprintf(err, errlen, "%s is not a struct or union", rec);
		return -EINVAL;
	}
	int fd;
	Dwarf *d;
	int rc = open_dwarf(path, "types", &fd, &d, err, errlen);
	if (rc)
		return rc;
	rc = -ENOENT;
	Dwarf_Die r;
	if (!find_record_die(d, is_union, tag, &r))
		snprintf(err, errlen, "%s has no DWARF for %s", path, rec);
	else {
		struct recgen g = { .out = recs };
		bool ok = emit_record(&g, &r);
		free(g.body.s);
		recs->defs = g.defs.s;
		if (!ok || g.defs.bad) {
			snprintf(err, errlen, "%s in %s holds members gpux cannot type", rec, path);
			host_drecords_free(recs);
		} else {
			rc = 0;
		}
	}
	dw.end(d);
	close(fd);
	return rc;
}

int host_dwarf_params(const char *path, const char *func, struct host_dparam **out, int *n,
		      struct host_drecords *recs, char *err, size_t errlen)
{
	*out = NULL;
	*n = 0;
	*recs = (struct host_drecords){ 0 };
	int fd;
	Dwarf *d;
	int rc0 = open_dwarf(path, "arguments", &fd, &d, err, errlen);
	if (rc0)
		return rc0;
	struct find fd_ = { .func = func };
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (!fd_.found && dw.nextcu(d, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dw.offdie(d, off + hsize, &cu))
			dw.getfuncs(&cu, on_func, &fd_, 0);
		off = next;
	}
	int rc = -ENOENT;
	if (!fd_.found)
		snprintf(err, errlen, "%s has no DWARF for %s", path, func);
	else {
		struct recgen g = { .out = recs };
		rc = params_of(&fd_.die, out, n, &g);
		if (rc == 0 && (g.defs.bad || g.body.bad))
			rc = -ENOMEM;
		free(g.body.s);
		recs->defs = g.defs.s;
		if (rc) {
			snprintf(err, errlen, "out of memory");
			host_dparams_free(*out, *n);
			host_drecords_free(recs);
			*out = NULL;
			*n = 0;
		}
	}
	dw.end(d);
	close(fd);
	return rc;
}

#endif
