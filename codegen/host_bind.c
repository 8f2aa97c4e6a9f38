/* Binding the driver ABIs to the running driver (llvm_host.h): the
 * built-in descriptions (object/sops_abi.c) are templates whose member names,
 * field paths and kfunc names are looked up in the driver's module BTF;
 * every offset, size and member order comes from there, so a driver
 * built with another layout gets programs that read it right (and the
 * kernel's verifier, which checks each load against BTF, accepts). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "llvm_host.h"

/* What a bound ABI owns besides itself. */
struct bound {
	struct host_sops_abi abi; /* first: host_abi_free casts back */
	const char **members;
	struct host_sops_hook *hooks;
	struct host_sops_kfunc *kfuncs;
	struct host_sops_capture capture;
	char **strs;
	int nstrs;
};

static const char *keep_str(struct bound *b, const char *s)
{
	char *c = strdup(s);
	char **v = c ? realloc(b->strs, sizeof(*v) * (size_t)(b->nstrs + 1)) : NULL;
	if (!v) {
		free(c);
		return NULL;
	}
	b->strs = v;
	return b->strs[b->nstrs++] = c;
}

/* Past typedefs and const, volatile, restrict and type tags. */
static const struct btf_type *skip(const struct btf *btf, __u32 id, __u32 *out)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	for (int n = 0; t && n < 32 && (btf_is_mod(t) || btf_is_typedef(t)); n++) {
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	if (out)
		*out = id;
	return t;
}

/* Member name of struct or union t, looked for inside anonymous members
 * too, as C finds it (mm_struct keeps its members in one): its byte
 * offset and type. false if absent or a bitfield. */
static bool find_member(const struct btf *btf, const struct btf_type *t, const char *name,
			unsigned *off, __u32 *type, int depth)
{
	const struct btf_member *m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		__u32 bits = btf_member_bit_offset(t, i);
		const char *mn = btf__name_by_offset(btf, m->name_off);
		if (mn && *mn) {
			if (strcmp(mn, name))
				continue;
			if (btf_member_bitfield_size(t, i) || bits % 8)
				return false;
			*off = bits / 8;
			*type = m->type;
			return true;
		}
		const struct btf_type *a = skip(btf, m->type, NULL);
		unsigned sub;
		if (depth < 8 && a && btf_is_composite(a) && bits % 8 == 0 &&
		    find_member(btf, a, name, &sub, type, depth + 1)) {
			*off = bits / 8 + sub;
			return true;
		}
	}
	return false;
}

/* Bytes a load of type id reads: integers, enums and pointers of 1, 2,
 * 4 or 8 bytes; 0 for anything else. */
static unsigned scalar_size(const struct btf *btf, __u32 id)
{
	const struct btf_type *t = skip(btf, id, NULL);
	unsigned size = 0;
	if (!t)
		return 0;
	if (btf_is_ptr(t))
		size = 8;
	else if (btf_is_any_enum(t))
		size = t->size;
	else if (btf_is_int(t) && !btf_int_offset(t) && btf_int_bits(t) == t->size * 8)
		size = t->size;
	return size == 1 || size == 2 || size == 4 || size == 8 ? size : 0;
}

/* f->path from a parameter of type ptype: each "->M" a load from the
 * pointee, each ".M" an embedded member adding to the last load's
 * offset. false when a step is not in BTF. */
static bool resolve_path(const struct btf *btf, __u32 ptype, struct host_sops_field *f)
{
	const char *p = f->path;
	__u32 id = ptype;
	unsigned off[HOST_SOPS_LOADS];
	int n = 0;
	while (*p) {
		bool arrow = p[0] == '-' && p[1] == '>';
		if (!arrow && *p != '.')
			return false;
		p += arrow ? 2 : 1;
		size_t len = strcspn(p, "-.");
		char name[128];
		if (!len || len >= sizeof(name))
			return false;
		memcpy(name, p, len);
		name[len] = '\0';
		p += len;
		const struct btf_type *t = skip(btf, id, NULL);
		if (arrow) {
			if (!t || !btf_is_ptr(t) || n == HOST_SOPS_LOADS)
				return false;
			t = skip(btf, t->type, NULL);
			off[n++] = 0;
		} else if (!n) {
			return false; /* the argument is a value, not a struct */
		}
		unsigned moff;
		if (!t || !btf_is_composite(t) || !find_member(btf, t, name, &moff, &id, 0))
			return false;
		off[n - 1] += moff;
	}
	unsigned size = n ? scalar_size(btf, id) : 8;
	if (!size)
		return false;
	f->nloads = n;
	memcpy(f->off, off, sizeof(unsigned) * (size_t)n);
	f->size = size;
	return true;
}

/* "STRUCT.MEMBER": add = -offsetof(STRUCT, MEMBER). */
static bool resolve_container(const struct btf *btf, struct host_sops_field *f)
{
	const char *dot = strchr(f->container, '.');
	char sname[128];
	if (!dot || (size_t)(dot - f->container) >= sizeof(sname))
		return false;
	snprintf(sname, sizeof(sname), "%.*s", (int)(dot - f->container), f->container);
	__s32 sid = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);
	unsigned off;
	__u32 type;
	if (sid < 0 || !find_member(btf, btf__type_by_id(btf, (__u32)sid), dot + 1, &off, &type, 0))
		return false;
	f->add = -(long)off;
	return true;
}

/* The prototype of function pointer member mt, or NULL. */
static const struct btf_type *member_proto(const struct btf *btf, __u32 mt)
{
	const struct btf_type *t = skip(btf, mt, NULL);
	if (!t || !btf_is_ptr(t))
		return NULL;
	t = skip(btf, t->type, NULL);
	return t && btf_is_func_proto(t) ? t : NULL;
}

static const struct btf_type *member_of(const struct btf *btf, const struct btf_type *st,
					const char *name)
{
	const struct btf_member *m = btf_members(st);
	for (int i = 0; i < btf_vlen(st); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), name))
			return member_proto(btf, m->type);
	return NULL;
}

static bool captured(const struct host_sops_capture *c, const char *name)
{
	for (int i = 0; c && i < c->nfields; i++)
		if (!strcmp(c->fields[i].name, name))
			return true;
	return false;
}

/* The template's hook with fields that BTF resolves (captured ones that
 * the bound capture c has); false if the member is absent. */
static bool bind_hook(const struct btf *btf, const struct btf_type *st,
		      const struct host_sops_hook *tmpl, const struct host_sops_capture *c,
		      struct host_sops_hook *out)
{
	const struct btf_type *fp = member_of(btf, st, tmpl->member);
	if (!fp)
		return false;
	*out = *tmpl;
	out->nargs = btf_vlen(fp);
	out->nfields = 0;
	const struct btf_param *par = btf_params(fp);
	for (int i = 0; i < tmpl->nfields; i++) {
		struct host_sops_field f = tmpl->fields[i];
		if (f.arg == HOST_SOPS_CAPTURED) {
			if (captured(c, f.name))
				out->fields[out->nfields++] = f;
			continue;
		}
		if (f.arg < 0 || f.arg >= out->nargs || !resolve_path(btf, par[f.arg].type, &f) ||
		    (f.container && !resolve_container(btf, &f)))
			continue;
		out->fields[out->nfields++] = f;
	}
	return true;
}

/* The template's kfunc with the kernel's prototype; false if BTF has no
 * such FUNC or it takes other arguments. -1: out of memory. */
static int bind_kfunc(struct bound *b, const struct btf *btf, const struct host_sops_kfunc *tmpl,
		      struct host_sops_kfunc *out)
{
	__s32 id = btf__find_by_name_kind(btf, tmpl->name, BTF_KIND_FUNC);
	const struct btf_type *fp = id < 0 ? NULL : skip(btf, btf__type_by_id(btf, (__u32)id)->type, NULL);
	if (!fp || !btf_is_func_proto(fp) || btf_vlen(fp) != tmpl->nargs)
		return 0;
	*out = *tmpl;
	out->bound = true;
	__u32 rid;
	skip(btf, fp->type, &rid);
	out->ret_void = rid == 0;
	const struct btf_param *par = btf_params(fp);
	for (int i = 0; i < tmpl->nargs; i++) {
		const struct btf_type *t = skip(btf, par[i].type, NULL);
		out->ptr_to[i] = NULL;
		if (!t || !btf_is_ptr(t))
			continue;
		const struct btf_type *pt = skip(btf, t->type, NULL);
		const char *name = pt && btf_is_composite(pt) ? btf__name_by_offset(btf, pt->name_off) : "";
		if (!(out->ptr_to[i] = keep_str(b, name ? name : "")))
			return -1;
	}
	return 1;
}

/* The capture's fields that BTF resolves from its function's
 * parameters; none when the module has no such function. */
static void bind_capture(const struct btf *btf, const struct host_sops_capture *tmpl,
			 struct host_sops_capture *out)
{
	memset(out, 0, sizeof(*out));
	__s32 id = btf__find_by_name_kind(btf, tmpl->func, BTF_KIND_FUNC);
	const struct btf_type *fp = id < 0 ? NULL : skip(btf, btf__type_by_id(btf, (__u32)id)->type, NULL);
	if (!fp || !btf_is_func_proto(fp))
		return;
	out->func = tmpl->func;
	const struct btf_param *par = btf_params(fp);
	for (int i = 0; i < tmpl->nfields; i++) {
		struct host_sops_field f = tmpl->fields[i];
		/* pt_regs holds six arguments */
		if (f.arg >= 0 && f.arg < btf_vlen(fp) && f.arg < 6 &&
		    resolve_path(btf, par[f.arg].type, &f))
			out->fields[out->nfields++] = f;
	}
}

void host_abi_free(struct host_sops_abi *abi)
{
	struct bound *b = (struct bound *)abi;
	if (!b)
		return;
	for (int i = 0; i < b->nstrs; i++)
		free(b->strs[i]);
	free(b->strs);
	free(b->members);
	free(b->hooks);
	free(b->kfuncs);
	free(b);
}

int host_bind_abi(const struct host_sops_abi *tmpl, const struct btf *btf,
		  struct host_sops_abi **out)
{
	*out = NULL;
	__s32 sid = btf__find_by_name_kind(btf, tmpl->struct_name, BTF_KIND_STRUCT);
	if (sid < 0 ||
	    (tmpl->requires && btf__find_by_name_kind(btf, tmpl->requires, BTF_KIND_STRUCT) < 0))
		return 0;
	const struct btf_type *st = btf__type_by_id(btf, (__u32)sid);
	int n = btf_vlen(st);
	struct bound *b = calloc(1, sizeof(*b));
	if (!b || !(b->members = calloc((size_t)n + 1, sizeof(*b->members))) ||
	    !(b->hooks = calloc((size_t)tmpl->nhooks + 1, sizeof(*b->hooks))) ||
	    !(b->kfuncs = calloc((size_t)tmpl->nkfuncs + 1, sizeof(*b->kfuncs))))
		goto oom;
	b->abi = *tmpl;
	/* every function pointer, in BTF's order (data members, which no
	 * gpu_ext struct has, stay zero) */
	int nm = 0;
	const struct btf_member *m = btf_members(st);
	for (int i = 0; i < n && nm < 32; i++, m++)
		if (member_proto(btf, m->type) &&
		    !(b->members[nm++] = keep_str(b, btf__name_by_offset(btf, m->name_off))))
			goto oom;
	b->abi.members = b->members;
	b->abi.capture = NULL;
	if (tmpl->capture) {
		bind_capture(btf, tmpl->capture, &b->capture);
		if (b->capture.nfields)
			b->abi.capture = &b->capture;
	}
	b->abi.nhooks = 0;
	for (int i = 0; i < tmpl->nhooks; i++)
		if (bind_hook(btf, st, &tmpl->hooks[i], b->abi.capture, &b->hooks[b->abi.nhooks]))
			b->abi.nhooks++;
	b->abi.hooks = b->hooks;
	b->abi.nkfuncs = 0;
	for (int i = 0; i < tmpl->nkfuncs; i++) {
		int rc = bind_kfunc(b, btf, &tmpl->kfuncs[i], &b->kfuncs[b->abi.nkfuncs]);
		if (rc < 0)
			goto oom;
		b->abi.nkfuncs += rc;
	}
	b->abi.kfuncs = b->kfuncs;
	*out = &b->abi;
	return 0;
oom:
	host_abi_free(b ? &b->abi : NULL);
	return -1;
}

/* ---- discovery ---- */

struct drv_provider {
	const char *module, *name;
	const struct host_sops_abi *tmpl[3]; /* preferred first */
	const char *structs;                 /* for the message */
};

static const struct drv_provider providers[HOST_DRV_N] = {
	{ "nvidia_uvm", "gpu_mem",
	  { &host_abi_gpu_mem_decision, &host_abi_gpu_mem_ops, &host_abi_uvm_gpu_ext },
	  "struct gpu_mem_ops or uvm_gpu_ext" },
	{ "nvidia", "gpu_sched", { &host_abi_nv_gpu_sched, NULL }, "struct nv_gpu_sched_ops" },
};

static int bind_provider(struct host_binding *b, int k, const char *dir, bool env,
			 struct btf *base)
{
	const struct drv_provider *pv = &providers[k];
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, pv->module);
	if (access(path, F_OK)) {
		snprintf(b->why[k], sizeof(b->why[k]),
			 env ? "no %s module BTF (GPUX_BTF_DIR has no %.300s)"
			     : "no %s module BTF (%.300s does not exist: the NVIDIA driver is not loaded)",
			 pv->module, path);
		return 0;
	}
	struct btf *btf = btf__parse_split(path, base);
	if (!btf) {
		char e[128];
		libbpf_strerror(errno, e, sizeof(e));
		snprintf(b->why[k], sizeof(b->why[k]), "cannot read the BTF in %.300s: %s", path, e);
		return 0;
	}
	int rc = 0;
	for (int i = 0; i < 3 && pv->tmpl[i] && !b->abi[k] && rc == 0; i++)
		rc = host_bind_abi(pv->tmpl[i], btf, &b->abi[k]);
	if (rc == 0 && !b->abi[k])
		snprintf(b->why[k], sizeof(b->why[k]), "%.300s has no %s (%s)", path, pv->structs,
			 env ? "a stock NVIDIA driver's BTF" : "the stock NVIDIA driver is loaded");
	btf__free(btf);
	return rc;
}

int host_bind_driver(struct host_binding *b)
{
	memset(b, 0, sizeof(*b));
	const char *dir = getenv("GPUX_BTF_DIR");
	bool env = dir && *dir;
	if (!env)
		dir = "/sys/kernel/btf";
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/vmlinux", dir);
	/* what cannot be read is said in why[]; libbpf's own words are noise */
	libbpf_print_fn_t print = libbpf_set_print(NULL);
	struct btf *base = NULL;
	int rc = 0;
	if (!access(path, F_OK) && !(base = btf__parse(path, NULL))) {
		char e[128];
		libbpf_strerror(errno, e, sizeof(e));
		for (int k = 0; k < HOST_DRV_N; k++)
			snprintf(b->why[k], sizeof(b->why[k]), "cannot read the kernel's BTF in %.300s: %s",
				 path, e);
	} else {
		for (int k = 0; k < HOST_DRV_N && rc == 0; k++)
			rc = bind_provider(b, k, dir, env, base);
	}
	libbpf_set_print(print);
	btf__free(base);
	if (rc)
		host_binding_free(b);
	return rc;
}

void host_binding_free(struct host_binding *b)
{
	for (int k = 0; k < HOST_DRV_N; k++) {
		host_abi_free(b->abi[k]);
		b->abi[k] = NULL;
	}
}
