/* Stacks and symbols in host probes: ustack/kstack as a stack id from
 * bpf_get_stackid into a stack trace map per frame limit (HOST_STACK_MAP
 * names them), with the pid for user stacks; usym() as {address, pid};
 * ksym() as the address; kaddr() from /proc/kallsyms and cgroupid()
 * from the path's file handle when compiling;
 * curtask from bpf_get_current_task. output/ symbolizes them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "host_cgroup.h"
#include "host_path.h"
#include "host_priv.h"

#define BPF_F_USER_STACK (1u << 8)

static LLVMValueRef stack_map(struct hctx *h, unsigned limit)
{
	char name[64];
	snprintf(name, sizeof(name), HOST_STACK_MAP "%u", limit);
	LLVMValueRef g = LLVMGetNamedGlobal(h->mod, name);
	if (g)
		return g;
	static const char *const names[] = { "type", "max_entries", "key_size", "value_size" };
	uint32_t vals[] = { BPF_M_STACK_TRACE, HOST_MAP_ENTRIES, 4, 8 * limit };
	const char *sym = arena_printf(&h->obj->arena, "%s", name);
	return hl_map_global(h, sym, vals, names, 4);
}

/* (pid << 32) | stack id, as bpftrace carries a stack: a failed walk
 * (no kernel stack in a uprobe) keeps its negative id, which prints as
 * an empty stack. */
static LLVMValueRef stack(struct hctx *h, struct type t)
{
	LLVMValueRef args[] = { h->ctxarg, stack_map(h, t.limit),
				host_const(h, t.user ? BPF_F_USER_STACK : 0) };
	LLVMValueRef id = host_helper(h, BPF_H_GET_STACKID, h->i64, args, 3);
	id = LLVMBuildAnd(h->b, id, host_const(h, 0xffffffff), "");
	if (!t.user)
		return id;
	LLVMValueRef pid = host_helper(h, BPF_H_GET_CURRENT_PID_TGID, h->i64, NULL, 0);
	pid = LLVMBuildShl(h->b, LLVMBuildLShr(h->b, pid, host_const(h, 32), ""),
			   host_const(h, 32), "");
	return LLVMBuildOr(h->b, pid, id, "");
}

/* The address of kernel symbol name (the first of that name). */
static bool kallsyms_addr(const char *name, uint64_t *addr)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	if (!f)
		return false;
	char line[512], sym[256];
	unsigned long long a;
	char type;
	bool found = false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name)) {
			*addr = a;
			found = true;
		}
	fclose(f);
	return found;
}

bool hl_builtin_stack(struct hctx *h, struct node *e, struct hval *r)
{
	const char *name = e->u.ident.name;
	if (!strcmp(name, "ustack") || !strcmp(name, "kstack"))
		*r = (struct hval){ stack(h, e->type), 0 };
	else if (!strcmp(name, "curtask"))
		*r = (struct hval){ host_helper(h, BPF_H_GET_CURRENT_TASK, h->i64, NULL, 0), 0 };
	else
		return false;
	return true;
}

bool hl_stack_call(struct hctx *h, struct node *e, struct hval *r)
{
	const char *fn = e->u.call.name;
	struct node *a = e->u.call.args;
	if (!strcmp(fn, "ustack") || !strcmp(fn, "kstack")) {
		*r = (struct hval){ stack(h, e->type), 0 };
	} else if (!strcmp(fn, "ksym")) {
		*r = (struct hval){ hl_expr_int(h, a), 0 };
	} else if (!strcmp(fn, "usym")) {
		LLVMValueRef addr = hl_expr_int(h, a);
		if (!addr) {
			*r = (struct hval){ 0 };
			return true;
		}
		LLVMValueRef out = host_alloca_zero(h, USYM_SIZE, "usym");
		LLVMBuildStore(h->b, addr, out);
		LLVMValueRef pid = host_helper(h, BPF_H_GET_CURRENT_PID_TGID, h->i64, NULL, 0);
		LLVMBuildStore(h->b, LLVMBuildLShr(h->b, pid, host_const(h, 32), ""),
			       host_gep(h, out, 8));
		*r = (struct hval){ out, USYM_SIZE };
	} else if (!strcmp(fn, "kaddr")) {
		uint64_t addr = 0;
		if (!kallsyms_addr(a->u.str.s, &addr))
			host_err(h, e, "Failed to resolve kernel symbol: %s", a->u.str.s);
		*r = (struct hval){ host_const(h, addr), 0 };
	} else if (!strcmp(fn, "cgroupid")) {
		uint64_t id = 0;
		int err = host_cgroup_id(a->u.str.s, &id);
		if (err)
			host_err(h, e, "Failed to get `cgroupid` for path: \"%s\": %s", a->u.str.s,
				 strerror(err));
		*r = (struct hval){ host_const(h, id), 0 };
	} else if (!strcmp(fn, "uaddr")) {
		uint64_t addr = 0;
		char path[4096];
		if (host_resolve_target(h->at->event, h->opts->lib_pid, path, sizeof(path)) ||
		    host_object_addr(path, a->u.str.s, &addr, NULL))
			host_err(h, e, "Could not resolve symbol: %s:%s", h->at->event, a->u.str.s);
		*r = (struct hval){ host_const(h, addr), 0 };
	} else {
		return false;
	}
	return true;
}
