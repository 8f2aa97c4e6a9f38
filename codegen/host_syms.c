/* func and probe in probes whose names are only known when attaching
 * (symbol globs, library names, addresses: attach.by_cookie): each
 * attachment's BPF cookie indexes HOST_SYMS_MAP, which the unit's
 * attacher fills (kattach_sym_entry), and the size of the probe string,
 * chosen so that the longest name fits whole, as bpftrace prints probe
 * names whole. */
#include <limits.h>
#include <string.h>

#include "host_path.h"
#include "host_priv.h"

/* Room on the BPF stack for a probe string, a key holding it, and more. */
#define PROBE_STR_MAX 192

/* a glob of functions, each named by its cookie */
static bool at_globbed(const struct attach *at)
{
	return at && at->by_cookie && at->func && strpbrk(at->func, "*?[");
}

/* also an address or a library by name, found when attaching */
static bool at_by_cookie(const struct attach *at)
{
	return at && at->by_cookie;
}

bool hl_site_globbed(const struct hctx *h)
{
	return at_globbed(h->at);
}

bool hl_probe_by_cookie(const struct hctx *h)
{
	return at_by_cookie(h->at);
}

const char *hl_probe_text(struct hctx *h, const struct attach *at)
{
	if (!at->prov)
		return at->text;
	if (h->usdt && at == h->at)
		return h->usdt->probe;
	if (at->prov->syntax == SYN_UPROBE)
		return arena_printf(&h->obj->arena, "%s:%s:%s", at->prov->name, at->event,
				    at->sym);
	if (at->prov->syntax == SYN_WATCHPOINT)
		return hl_watch_name(h, at);
	const char *rest = strchr(at->text, ':');
	return arena_printf(&h->obj->arena, "%s%s", at->prov->name, rest ? rest : "");
}

/* The longest probe name at can take: "PROV:TARGET:SYM" with TARGET the
 * path found for a library name and SYM each function a glob matches.
 * What cannot be resolved now (compiling only) counts as HOST_SYM_STR. */
static size_t name_need(struct hctx *h, const struct attach *at, int pid)
{
	if (!at_by_cookie(at))
		return strlen(hl_probe_text(h, at)) + 1;
	/* a function of the kernel, found when attaching */
	if (!at->prov->user_memory)
		return strlen(hl_probe_text(h, at)) + HOST_SYM_STR;
	char path[PATH_MAX];
	if (host_resolve_target(at->event, pid, path, sizeof(path)))
		return HOST_SYM_STR;
	size_t sym = strlen(at->sym);
	if (at_globbed(at)) {
		struct host_syms s;
		if (host_glob_symbols(path, at->filter, &s))
			return HOST_SYM_STR;
		sym = 0;
		for (int i = 0; i < s.n; i++)
			if (strlen(s.name[i]) > sym)
				sym = strlen(s.name[i]);
		host_syms_free(&s);
	}
	const char *target = strchr(at->event, '/') ? at->event : path;
	return strlen(at->prov->name) + 1 + strlen(target) + 1 + sym + 1;
}

static void find_probe(struct node *n, void *arg)
{
	if (n->kind == N_IDENT && n->u.ident.kind == ID_BUILTIN &&
	    !strcmp(n->u.ident.name, "probe"))
		*(bool *)arg = true;
	else
		ast_visit_children(n, find_probe, arg);
}

void hl_probe_str_size(struct hctx *h)
{
	size_t need = HOST_SYM_STR;
	bool used = false;
	for (struct node *p = h->prog->probes; p && !used; p = p->next)
		find_probe(p, &used);
	/* resolving and globbing again costs time: only where probe is read */
	for (struct node *p = used ? h->prog->probes : NULL; p; p = p->next)
		for (struct node *a = p->u.probe.attach; a; a = a->next) {
			size_t n = name_need(h, &a->u.attach, h->opts->lib_pid);
			if (n > need)
				need = n;
		}
	need = (need + 7) & ~(size_t)7;
	h->probe_str = need > PROBE_STR_MAX ? PROBE_STR_MAX : (unsigned)need;
}

struct hval hl_sym_string(struct hctx *h, bool probe)
{
	if (!h->syms) {
		static const char *const names[] = { "type", "max_entries", "key_size",
						     "value_size" };
		uint32_t vals[] = { BPF_M_ARRAY, HOST_SYMS_MAX, 4, HOST_SYM_STR + h->probe_str };
		h->syms = hl_map_global(h, HOST_SYMS_MAP, vals, names, 4);
	}
	unsigned off = probe ? HOST_SYM_STR : 0, size = probe ? h->probe_str : HOST_SYM_STR;
	LLVMValueRef args[] = { h->ctxarg };
	LLVMValueRef cookie = host_helper(h, BPF_H_GET_ATTACH_COOKIE, h->i64, args, 1);
	LLVMValueRef key = host_alloca(h, 4, "symkey");
	LLVMBuildStore(h->b, LLVMBuildTrunc(h->b, cookie, h->i32, ""), key);
	LLVMValueRef largs[] = { h->syms, key };
	LLVMValueRef p = host_helper(h, BPF_H_MAP_LOOKUP, h->ptr, largs, 2);
	LLVMValueRef buf = host_alloca(h, size, "sym");
	host_zero(h, buf, size, 8);
	LLVMBasicBlockRef found = LLVMAppendBasicBlock(h->fn, "sym_found");
	LLVMBasicBlockRef done = LLVMAppendBasicBlock(h->fn, "sym_done");
	LLVMBuildCondBr(h->b, LLVMBuildICmp(h->b, LLVMIntNE, p, LLVMConstNull(h->ptr), ""),
			found, done);
	LLVMPositionBuilderAtEnd(h->b, found);
	LLVMBuildMemCpy(h->b, buf, 8, host_gep(h, p, off), 8, host_const(h, size));
	LLVMBuildBr(h->b, done);
	LLVMPositionBuilderAtEnd(h->b, done);
	return (struct hval){ buf, size };
}
